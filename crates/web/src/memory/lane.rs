//! A memory chart drawn under the timeline on the same time axis, when a trace and a memory file of
//! the same run are open together. Follows [`crate::session::TimeWindow`]. Which chart, and where
//! on the trace's clock, is [`crate::session::lane::pick`] (the Ranks tab's lanes use it too);
//! the timeline's `window` is trace ns, so the lane draws chart time `window + offset`.

use super::chart::prepare;
use crate::platform::frame::Frames;
use crate::session::lane::{pick, LanePick};
use crate::session::SessionRef;
use crate::widgets::geometry::GUTTER_PX;
use crate::widgets::memory_paint::{paint_data, Frame, Overlay};
use leptos::html;
use leptos::prelude::*;
use tracelight_core::report::memory::format_bytes;

const LANE_PX: f64 = 84.0;

/// Renders the aligned memory chart, a note saying why none aligns, or nothing.
#[component]
pub fn MemoryLane(session: SessionRef, file: usize, window: RwSignal<(i64, i64)>) -> impl IntoView {
    let (c, offset, label) = match pick(&session, file) {
        LanePick::Nothing => return ().into_any(),
        LanePick::Unaligned { why, .. } => {
            return view! { <div class="mem-lane-note" data-testid="mem-lane-note">{format!("Memory lane: {why}.")}</div> }.into_any()
        }
        LanePick::Aligned { lane, offset_ns } => (lane.chart, offset_ns, lane.label),
    };
    let canvas = NodeRef::<html::Canvas>::new();
    let width = RwSignal::new(0.0f64);
    let measure = move || {
        if let Some(cv) = canvas.get_untracked() {
            let w = f64::from(cv.client_width()).max(300.0);
            if width.get_untracked() != w {
                width.set(w);
            }
        }
    };
    crate::platform::resize::follow(canvas, measure);
    let y_max = c.y_max + c.y_max / 20;
    // Painted on the next animation frame, like the timeline it follows: a wheel burst that moves
    // the window several times between two frames costs one paint.
    let painter = move || {
        let (w, (s, e)) = (width.get_untracked(), window.get_untracked());
        let Some(cv) = canvas.get_untracked() else {
            return;
        };
        if w <= 0.0 {
            return;
        }
        let Some(ctx) = prepare(&cv, w, LANE_PX) else {
            return;
        };
        let f = Frame {
            left: GUTTER_PX,
            top: 4.0,
            width: (w - GUTTER_PX).max(1.0),
            height: LANE_PX - 8.0,
        };
        let view = (
            s.saturating_add(offset),
            e.saturating_add(offset).max(s.saturating_add(offset) + 1),
        );
        ctx.set_fill_style_str("#f4f5f7");
        ctx.fill_rect(0.0, 0.0, GUTTER_PX - 2.0, LANE_PX);
        ctx.set_fill_style_str("#eef0f2");
        ctx.fill_rect(GUTTER_PX, f.top + f.height, f.width, 1.0);
        let n = paint_data(
            &ctx,
            &c,
            view,
            &f,
            y_max,
            &Overlay {
                highlight: None,
                pinned: None,
                brush: None,
            },
        );
        ctx.set_font("11px system-ui, sans-serif");
        ctx.set_text_baseline("middle");
        ctx.set_fill_style_str("#1f2328");
        let _ = ctx.fill_text("Memory", 6.0, 12.0);
        ctx.set_fill_style_str("#57606a");
        let _ = ctx.fill_text(&format!("peak {}", format_bytes(c.peak.1)), 6.0, 28.0);
        let _ = ctx.fill_text(&format_bytes(y_max), GUTTER_PX + 4.0, 10.0);
        let _ = cv.set_attribute("data-polygons", &n.to_string());
        let _ = cv.set_attribute("data-offset-ns", &offset.to_string());
    };
    let frames = Frames::new();
    Effect::new(move |_| {
        width.track();
        window.track();
        if canvas.get().is_some() {
            frames.request(painter.clone());
        }
    });
    view! {
        <div class="mem-lane">
            <canvas node_ref=canvas data-testid="mem-lane" title=label style=format!("width:100%;height:{LANE_PX}px;display:block") />
        </div>
    }
    .into_any()
}
