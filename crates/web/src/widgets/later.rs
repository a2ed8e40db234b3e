//! Parts of a big view rendered a few tasks after the rest: the page paints and takes input
//! between them. Leptos builds a view's whole DOM in one task, and the Overview's (every card,
//! table and track) took 100–200 ms of it on a big trace while workers held the other cores; the
//! cards below the headline now come one task each.

use crate::platform::clock::{after_paint, yield_now};
use leptos::prelude::*;
use leptos::task::spawn_local;

/// Renders `children` `after` tasks from now (each a `MessageChannel` message, see
/// [`yield_now`]); nothing until then; at once for 0. A view dropped before that renders nothing.
///
/// With `paint_first`, the first of those waits is for the next frame ([`after_paint`]): what
/// the task that built the view drew (a chart) is on screen before `children` cost anything.
#[component]
pub fn Later(
    #[prop(default = 1)] after: u32,
    #[prop(optional)] paint_first: bool,
    children: ChildrenFn,
) -> impl IntoView {
    let ready = RwSignal::new(after == 0);
    if after == 0 {
        return (move || ready.get().then(|| children())).into_any();
    }
    spawn_local(async move {
        for k in 0..after {
            if k == 0 && paint_first {
                after_paint().await;
            } else {
                yield_now().await;
            }
        }
        // The view may be gone by now: `try_set` leaves a disposed signal alone.
        let _ = ready.try_set(true);
    });
    (move || ready.get().then(|| children())).into_any()
}
