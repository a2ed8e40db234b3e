//! A memory chart drawn under the timeline on the same time axis, when a trace and a memory file of
//! the same run are open together. Follows [`crate::state::TimeWindow`].

use crate::state::SessionRef;
use leptos::prelude::*;

/// Renders nothing until the memory views fill it in.
#[component]
pub fn MemoryLane(session: SessionRef, file: usize, window: RwSignal<(i64, i64)>) -> impl IntoView {
    let _ = (&session, file, window);
}
