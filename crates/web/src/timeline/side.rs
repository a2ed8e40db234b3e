//! The side panel right of the tracks, as in Perfetto's details drawer turned sideways: the
//! selected slice's details and the area selection's table. It opens when there is something to
//! show and takes its width from the tracks (the canvas follows its box through a
//! `ResizeObserver`), so the timeline never scrolls off screen to read a panel. Its left edge
//! drags to resize it; × clears the selection and closes it.

use super::area::AreaPanel;
use super::details::DetailsPanel;
use super::tlstate::Ctx;
use leptos::prelude::*;

/// Width the panel opens at, and its limits (the tracks keep at least the rest).
const DEFAULT_PX: f64 = 380.0;
const MIN_PX: f64 = 260.0;
const MAX_SHARE: f64 = 0.6;

/// The panel's width after dragging its edge from `start_x` (where the drag began, at width
/// `start_w`) to `x`, in a window `window_w` wide.
pub fn dragged_width(start_w: f64, start_x: f64, x: f64, window_w: f64) -> f64 {
    let max = (window_w * MAX_SHARE).max(MIN_PX);
    (start_w + start_x - x).clamp(MIN_PX, max)
}

#[component]
pub fn SidePanel(ctx: Ctx) -> impl IntoView {
    let tl = ctx.tl;
    let width = RwSignal::new(DEFAULT_PX);
    // (pointer x, width) when the edge drag began.
    let drag = StoredValue::new(None::<(f64, f64)>);
    let moving = window_event_listener(leptos::ev::mousemove, move |ev| {
        let Some((x0, w0)) = drag.get_value() else {
            return;
        };
        let ww = web_sys::window()
            .and_then(|w| w.inner_width().ok())
            .and_then(|v| v.as_f64())
            .unwrap_or(1600.0);
        width.set(dragged_width(w0, x0, f64::from(ev.client_x()), ww));
    });
    let up = window_event_listener(leptos::ev::mouseup, move |_| drag.set_value(None));
    on_cleanup(move || {
        moving.remove();
        up.remove();
    });
    let open = move || tl.selected.get().is_some() || tl.area_done.get().is_some();
    let style = move || {
        if open() {
            format!("width:{}px", width.get())
        } else {
            "display:none".to_owned()
        }
    };
    let close = move |_| {
        tl.selected.set(None);
        tl.area.set(None);
        tl.area_done.set(None);
    };
    view! {
        <aside class="tl-side" data-testid="tl-side" style=style>
            <div
                class="tl-side-edge"
                data-testid="tl-side-edge"
                title="Drag to resize"
                on:mousedown=move |ev| {
                    ev.prevent_default();
                    drag.set_value(Some((f64::from(ev.client_x()), width.get_untracked())));
                }
            ></div>
            <button class="tl-side-close" data-testid="tl-side-close" title="Close (clears the selection)" on:click=close>"×"</button>
            <div class="tl-side-body">
                <DetailsPanel ctx=ctx.clone() />
                <AreaPanel ctx=ctx.clone() />
            </div>
        </aside>
    }
}
