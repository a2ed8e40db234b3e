//! The Memory tab.

use crate::state::SessionRef;
use leptos::prelude::*;

#[component]
pub fn MemoryView(session: SessionRef) -> impl IntoView {
    let n = session.snapshot_indices().len() + session.timeline_indices().len();
    view! { <section class="placeholder" data-testid="memory-view"><p>{format!("{n} memory files open. Not built yet.")}</p></section> }
}
