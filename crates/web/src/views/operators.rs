//! The operators view (analysis-views issue).

use crate::state::SessionRef;
use leptos::prelude::*;

#[component]
pub fn OperatorsView(session: SessionRef, file: usize) -> impl IntoView {
    let _ = (&session, file);
    view! { <section class="placeholder" data-testid="operators-view"><p>"Not built yet."</p></section> }
}
