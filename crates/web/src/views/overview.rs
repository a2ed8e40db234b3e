//! Overview: the first screen after a load (the analysis-views issue grows this into "why is my step
//! slow"); for now the file's facts and its tracks.

use crate::state::SessionRef;
use crate::views::facts::{FactsPanel, TrackList};
use leptos::prelude::*;

#[component]
pub fn Overview(session: SessionRef, file: usize) -> impl IntoView {
    view! {
        <FactsPanel session=session.clone() file=file />
        <TrackList session=session file=file />
    }
}
