//! A memory chart drawn under the timeline on the same time axis, when a trace and a memory file of
//! the same run are open together. Follows [`crate::session::TimeWindow`].
//!
//! Clocks: the timeline's `window` is trace ns. Snapshot `time_us` and memory-timeline times are
//! epoch µs; the trace's epoch offset comes from
//! [`tracelight_core::analysis::memory_chart::trace_epoch_offset_ns`] (0 for old traces whose `ts` are
//! epoch µs, `baseTimeNanoseconds` for new ones), so the lane draws chart time `window + offset`.
//! When no memory file aligns (no `time_us`, no epoch clock, or ranges that do not overlap) the lane
//! says why instead of drawing a misleading chart; with no memory file at all it shows the trace's
//! own `[memory]` events (same clock, nothing to align).

use super::chart::prepare;
use super::paint::{paint_data, Frame, Overlay};
use super::source::{chart, sources_of, Source};
use crate::platform::frame::Frames;
use crate::session::{Content, SessionRef};
use crate::widgets::geometry::GUTTER_PX;
use leptos::html;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::memory_chart::{overlaps, trace_epoch_offset_ns, MemoryChart};
use tracelight_core::report::memory::format_bytes;

const LANE_PX: f64 = 84.0;

/// The chart to draw and the offset from trace ns to its x, or why there is none.
pub enum LanePick {
    Aligned {
        source: Source,
        chart: Arc<MemoryChart>,
        offset_ns: i64,
        label: String,
    },
    Unaligned(String),
    Nothing,
}

pub fn pick(session: &SessionRef, file: usize) -> LanePick {
    let Some(tf) = session.trace(file) else {
        return LanePick::Nothing;
    };
    let offset = trace_epoch_offset_ns(&tf.trace);
    let bounds = tf.trace.time_bounds().unwrap_or((0, 1));
    let mut why = Vec::new();
    for (i, f) in session.files.iter().enumerate() {
        if !matches!(f.content, Content::Snapshot(_) | Content::MemoryTimeline(_)) {
            continue;
        }
        let Some(src) = sources_of(session, i).into_iter().next() else {
            continue;
        };
        let Some(c) = chart(session, &src) else {
            continue;
        };
        if !c.epoch {
            why.push(format!(
                "{} has no time_us, so it cannot be placed on the trace's clock",
                f.name
            ));
            continue;
        }
        let Some(off) = offset else {
            why.push(format!("the trace has neither epoch timestamps nor baseTimeNanoseconds, so {} cannot be aligned", f.name));
            continue;
        };
        if !overlaps((bounds.0 + off, bounds.1 + off), c.x_range) {
            why.push(format!(
                "{} was recorded outside this trace's time range (another run?)",
                f.name
            ));
            continue;
        }
        return LanePick::Aligned {
            label: format!("{} · {}", f.name, src.device_label()),
            source: src,
            chart: c,
            offset_ns: off,
        };
    }
    if why.is_empty() {
        if let Some(src) = sources_of(session, file).into_iter().next() {
            // A curve that never leaves 0 (totals not recorded) is not shown as data.
            if let Some(c) = chart(session, &src).filter(|c| c.peak.1 > 0) {
                return LanePick::Aligned {
                    label: format!("[memory] {}", src.device_label()),
                    source: src,
                    chart: c,
                    offset_ns: 0,
                };
            }
        }
        return LanePick::Nothing;
    }
    LanePick::Unaligned(why.join("; "))
}

/// Renders the aligned memory chart, a note saying why none aligns, or nothing.
#[component]
pub fn MemoryLane(session: SessionRef, file: usize, window: RwSignal<(i64, i64)>) -> impl IntoView {
    let (source, c, offset, label) = match pick(&session, file) {
        LanePick::Nothing => return ().into_any(),
        LanePick::Unaligned(why) => {
            return view! { <div class="mem-lane-note" data-testid="mem-lane-note">{format!("Memory lane: {why}.")}</div> }.into_any()
        }
        LanePick::Aligned {
            source,
            chart,
            offset_ns,
            label,
        } => (source, chart, offset_ns, label),
    };
    let _ = source;
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
