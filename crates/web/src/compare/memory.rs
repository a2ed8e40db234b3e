//! A's and B's allocated memory overlaid on one relative time axis (each from its first step's
//! start): the two peaks, their change, and where in the step each side reaches its peak. Curves
//! and axes come from core (`report::diff::memory`, `view::byte_axis`); this draws them.

use crate::platform::canvas::prepare;
use crate::widgets::fmt::bytes;
use leptos::html;
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::model::time::format_duration;
use tracelight_core::report::diff::memory::{MemoryOverlay, OverlayCurve};
use tracelight_core::view::byte_axis::{byte_ticks, tick_label};
use web_sys::CanvasRenderingContext2d;

/// Same colours as the compare bars (`.cmp-bar.a` / `.b`).
const A_COLOR: &str = "#7a8699";
const B_COLOR: &str = "#2e6fd8";
const LEFT: f64 = 64.0;
const PAD: f64 = 12.0;

fn curve(
    ctx: &CanvasRenderingContext2d,
    c: &OverlayCurve,
    o: &MemoryOverlay,
    (w, h): (f64, f64),
    color: &str,
) {
    let x = |v: i64| LEFT + (v as f64 / o.x_max as f64) * (w - LEFT - PAD);
    let y = |v: u64| h - 20.0 - (v as f64 / o.y_max as f64) * (h - 40.0);
    ctx.set_stroke_style_str(color);
    ctx.set_line_width(1.5);
    ctx.begin_path();
    let mut prev: Option<f64> = None;
    for (&xv, &yv) in c.x.iter().zip(&c.y) {
        let (px, py) = (x(xv), y(yv));
        match prev {
            // A step curve: the value holds until the next event.
            Some(last) => {
                ctx.line_to(px, last);
                ctx.line_to(px, py);
            }
            None => ctx.move_to(px, py),
        }
        prev = Some(py);
    }
    ctx.stroke();
    // The peak: a dot and its value.
    let (px, py) = (x(c.peak.0), y(c.peak.1));
    ctx.set_fill_style_str(color);
    ctx.begin_path();
    let _ = ctx.arc(px, py, 3.5, 0.0, std::f64::consts::TAU);
    ctx.fill();
}

fn paint(ctx: &CanvasRenderingContext2d, o: &MemoryOverlay, (w, h): (f64, f64)) {
    ctx.clear_rect(0.0, 0.0, w, h);
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_fill_style_str("#6b7280");
    ctx.set_stroke_style_str("#e5e7eb");
    ctx.set_line_width(1.0);
    for t in byte_ticks(o.y_max, 4) {
        let y = h - 20.0 - (t as f64 / o.y_max as f64) * (h - 40.0);
        ctx.begin_path();
        ctx.move_to(LEFT, y.round() + 0.5);
        ctx.line_to(w - PAD, y.round() + 0.5);
        ctx.stroke();
        let _ = ctx.fill_text(&tick_label(t), 4.0, y + 4.0);
    }
    let _ = ctx.fill_text("0", LEFT, h - 6.0);
    let end = format_duration(o.x_max);
    let _ = ctx.fill_text(&end, w - PAD - 7.0 * end.len() as f64, h - 6.0);
    curve(ctx, &o.a, o, (w, h), A_COLOR);
    curve(ctx, &o.b, o, (w, h), B_COLOR);
}

/// A canvas drawing `o`, `h` CSS px tall, as wide as its box.
fn chart(o: Arc<MemoryOverlay>, h: f64) -> impl IntoView {
    let canvas = NodeRef::<html::Canvas>::new();
    Effect::new(move |_| {
        let Some(c) = canvas.get() else { return };
        let w = f64::from(c.client_width()).max(200.0);
        if let Some(ctx) = prepare(&c, w, h) {
            paint(&ctx, &o, (w, h));
        }
    });
    view! { <canvas node_ref=canvas style=format!("width:100%;height:{h}px;display:block") /> }
}

/// "Δ peak 196.5KiB (+15.9%)".
fn delta_text(o: &MemoryOverlay) -> String {
    let delta = o.b.peak.1 as i64 - o.a.peak.1 as i64;
    let pct = if o.a.peak.1 > 0 {
        format!(
            " ({})",
            tracelight_core::report::num::signed_share(delta as f64 / o.a.peak.1 as f64)
        )
    } else {
        String::new()
    };
    format!("Δ peak {}{pct}", bytes(delta))
}

#[component]
pub fn MemoryOverlayChart(overlay: Arc<MemoryOverlay>) -> impl IntoView {
    let (a, b) = (&overlay.a, &overlay.b);
    let side = |name: &'static str, color: &'static str, c: &OverlayCurve| {
        view! {
            <span class="legend-item"><i style=format!("background:{color}")></i>
                {format!("{name}: peak {} on {} at +{}", bytes(c.peak.1 as i64), c.device, format_duration(c.peak.0))}
            </span>
        }
    };
    view! {
        <section class="card cmp-memory" data-testid="compare-memory"
            data-a-peak=a.peak.1.to_string() data-b-peak=b.peak.1.to_string()
            data-a-peak-at-ns=a.peak.0.to_string() data-b-peak-at-ns=b.peak.0.to_string()>
            <h2>"Memory allocated, A and B overlaid"</h2>
            <div class="legend">
                {side("A", A_COLOR, a)}
                {side("B", B_COLOR, b)}
                <span class="muted">{format!("{} · x: time from each side's first step", delta_text(&overlay))}</span>
            </div>
            {chart(overlay.clone(), 220.0)}
        </section>
    }
}

/// The memory timelines' categories (`export_memory_timeline`), one small chart per category
/// with A and B overlaid.
#[component]
pub fn CategoryOverlays(overlays: Vec<MemoryOverlay>) -> impl IntoView {
    let cells = overlays
        .into_iter()
        .map(|o| {
            let o = Arc::new(o);
            view! {
                <div class="cmp-cat" data-testid="compare-memory-category" data-category=o.a.device.clone()
                    data-a-peak=o.a.peak.1.to_string() data-b-peak=o.b.peak.1.to_string()>
                    <h3>{o.a.device.clone()}</h3>
                    <p class="muted">{format!("A {} · B {} · {}", bytes(o.a.peak.1 as i64), bytes(o.b.peak.1 as i64), delta_text(&o))}</p>
                    {chart(o.clone(), 140.0)}
                </div>
            }
        })
        .collect_view();
    view! {
        <section class="card cmp-memory" data-testid="compare-memory-categories">
            <h2>"Memory timeline categories, A and B overlaid"</h2>
            <div class="legend">
                <span class="legend-item"><i style=format!("background:{A_COLOR}")></i>"A"</span>
                <span class="legend-item"><i style=format!("background:{B_COLOR}")></i>"B"</span>
                <span class="muted">"x: time from each timeline's first sample"</span>
            </div>
            <div class="cmp-cats">{cells}</div>
        </section>
    }
}
