//! The kernels view (analysis-views issue).

use crate::state::SessionRef;
use leptos::prelude::*;

#[component]
pub fn KernelsView(session: SessionRef, file: usize) -> impl IntoView {
    let _ = (&session, file);
    view! { <section class="placeholder" data-testid="kernels-view"><p>"Not built yet."</p></section> }
}
