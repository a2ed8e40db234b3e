//! The interactive memory chart: hover shows a band's size, address and stack; click pins it;
//! drag brushes a time range to zoom; wheel zooms; double-click or "Reset" shows everything.
//! Repaints happen in one effect (STYLE 10), at device-pixel resolution, and follow window resizes.

use super::detail::{describe, Detail};
use crate::session::memory::Source;
use crate::session::SessionRef;
use crate::widgets::memory_paint::{paint_axes, paint_data_cached, ColumnCache, Frame, Overlay};
use leptos::html;
use leptos::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use tracelight_core::analysis::memory_chart::{
    brush_window, px_time, x_px, zoom_window, MemoryChart,
};
use web_sys::CanvasRenderingContext2d;

pub const AXIS_LEFT_PX: f64 = 74.0;
const TOP_PX: f64 = 14.0;
const BOTTOM_PX: f64 = 22.0;

thread_local! {
    /// The columns of a chart drawn from a snapshot worker's views while its model arrives (the
    /// chart's `Arc` as the key), for the same chart drawn again when the whole file replaces
    /// that view: a big chart's first paint then needs no task of its own to compute them, and the
    /// chart is never blank between the two.
    static HANDED: RefCell<Option<(usize, Rc<RefCell<ColumnCache>>)>> = const { RefCell::new(None) };
}

/// A canvas sized for the device pixel ratio ([`crate::platform::canvas::prepare`]), cleared to
/// the charts' white background.
pub fn prepare(c: &web_sys::HtmlCanvasElement, w: f64, h: f64) -> Option<CanvasRenderingContext2d> {
    let ctx = crate::platform::canvas::prepare(c, w, h)?;
    ctx.set_fill_style_str("#ffffff");
    ctx.fill_rect(0.0, 0.0, w, h);
    Some(ctx)
}

/// A snapshot's allocator-state scrubber, shared by the chart (a line where the state shown
/// sits; a click moves it there, on the peak marker to the peak), the "Largest at peak" rows and
/// the segment map. `at` = the trace entry the state is after; `entries` (one past the last) =
/// the dump itself.
#[derive(Clone, Copy)]
pub struct Scrub {
    pub at: RwSignal<usize>,
    pub entries: usize,
    /// The entry after which active memory peaks (core's snapshot summary).
    pub peak: Option<usize>,
}

/// How close (px) a click must be to the peak marker to go to the peak entry itself (several
/// entries can share the marker's microsecond).
const PEAK_SNAP_PX: f64 = 6.0;

#[component]
pub fn ChartCanvas(
    session: SessionRef,
    source: Source,
    chart: Arc<MemoryChart>,
    #[prop(default = 320.0)] height: f64,
    #[prop(default = None)] scrub: Option<Scrub>,
) -> impl IntoView {
    let canvas = NodeRef::<html::Canvas>::new();
    let bounds = chart.x_range;
    let view = RwSignal::new(bounds);
    let width = RwSignal::new(0.0f64);
    let hover = RwSignal::new(None::<(usize, i64, f64, f64)>);
    let pinned = RwSignal::new(None::<(usize, i64)>);
    let brush = RwSignal::new(None::<(f64, f64)>);
    let y_max = chart.y_max + chart.y_max / 20;

    let frame = move |w: f64| Frame {
        left: AXIS_LEFT_PX,
        top: TOP_PX,
        width: (w - AXIS_LEFT_PX - 12.0).max(10.0),
        height: height - TOP_PX - BOTTOM_PX,
    };
    let measure = move || {
        if let Some(c) = canvas.get_untracked() {
            // The observer's first report repeats the size measured at mount: setting it again
            // would paint the canvas a second time in the frame after its first paint.
            let w = f64::from(c.client_width()).max(200.0);
            if width.get_untracked() != w {
                width.set(w);
            }
        }
    };
    crate::platform::resize::follow(canvas, measure);

    // Drawn from a snapshot worker's views while the model arrives, the chart only shows: a pin,
    // a zoom or a scrub would be lost when the whole file replaces it (hover still describes).
    let pending = session
        .files
        .get(source.file)
        .is_some_and(|f| f.awaiting_model());
    let painted = chart.clone();
    let key = Arc::as_ptr(&chart) as usize;
    let handed = HANDED.with(|h| match h.borrow_mut().take() {
        Some((k, c)) if k == key => Some(c),
        _ => None,
    });
    let from_views = handed.is_some();
    let columns = handed.unwrap_or_default();
    if pending {
        HANDED.with(|h| *h.borrow_mut() = Some((key, columns.clone())));
    }
    // A big file's first paint (~35 ms on a 1 GB snapshot) comes two tasks after the one that
    // builds the tab: the first computes the columns (~20 ms), the second paints them; `again`
    // asks the effect for it.
    let defer_first =
        StoredValue::new(!from_views && session.files.get(source.file).is_some_and(|f| f.is_big()));
    let again = RwSignal::new(0u32);
    Effect::new(move |_| {
        let (w, v) = (width.get(), view.get());
        again.track();
        let overlay = Overlay {
            highlight: hover.get().map(|h| h.0),
            pinned: pinned.get().map(|p| p.0),
            brush: brush.get(),
        };
        let Some(c) = canvas.get() else { return };
        if w <= 0.0 {
            return;
        }
        if defer_first.get_value() {
            defer_first.set_value(false);
            let (chart, width, columns) = (painted.clone(), frame(w).width, columns.clone());
            leptos::task::spawn_local(async move {
                crate::platform::clock::yield_now().await;
                columns.borrow_mut().fill(&chart, v, width);
                crate::platform::clock::yield_now().await;
                let _ = again.try_update(|n| *n += 1);
            });
            return;
        }
        let Some(ctx) = prepare(&c, w, height) else {
            return;
        };
        let f = frame(w);
        paint_axes(&ctx, &painted, v, &f, y_max, bounds.0);
        let n = paint_data_cached(
            &ctx,
            &painted,
            v,
            &f,
            y_max,
            &overlay,
            &mut columns.borrow_mut(),
        );
        let _ = c.set_attribute("data-polygons", &n.to_string());
        let _ = c.set_attribute("data-drawn", "1");
        // The scrubber's entry: a dashed line labelled like the segment map below it.
        let at = scrub.and_then(|s| {
            let i = s.at.get();
            (i < s.entries)
                .then(|| painted.entry_x.get(i).copied())
                .flatten()
        });
        if let Some(x) = at {
            let px = f.left + x_px(x, v, f.width);
            if px >= f.left && px <= f.left + f.width {
                ctx.set_stroke_style_str("#0969da");
                ctx.set_line_width(1.0);
                let _ = ctx.set_line_dash(&js_sys::Array::of2(&4.0.into(), &3.0.into()));
                ctx.begin_path();
                ctx.move_to(px.round() + 0.5, f.top);
                ctx.line_to(px.round() + 0.5, f.top + f.height);
                ctx.stroke();
                let _ = ctx.set_line_dash(&js_sys::Array::new());
                ctx.set_fill_style_str("#0969da");
                ctx.set_font("11px system-ui, sans-serif");
                ctx.set_text_baseline("top");
                let right = px > f.left + f.width - 130.0;
                ctx.set_text_align(if right { "right" } else { "left" });
                let _ = ctx.fill_text(
                    "allocator state",
                    if right { px - 4.0 } else { px + 4.0 },
                    f.top + 2.0,
                );
            }
        }
        let rel = at.map_or(String::new(), |x| (x - bounds.0).to_string());
        let _ = c.set_attribute("data-scrub-x", &rel);
        let _ = c.set_attribute("data-peak-x", &(painted.peak.0 - bounds.0).to_string());
        let _ = c.set_attribute(
            "data-view",
            &format!("{},{}", v.0 - bounds.0, v.1 - bounds.0),
        );
    });

    let hit_at = {
        let chart = chart.clone();
        move |ev: &web_sys::MouseEvent| -> Option<(usize, i64, f64, f64)> {
            let f = frame(width.get_untracked());
            let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
            let px = x - f.left;
            if px < 0.0 || px > f.width || y < f.top || y > f.top + f.height {
                return None;
            }
            let t = px_time(px, view.get_untracked(), f.width);
            let bytes = f.bytes_at(y, y_max);
            let slack = (y_max as f64 * 3.0 / f.height) as u64;
            chart.hit(t, bytes, slack).map(|b| (b, t, x, y))
        }
    };
    let peak_x = chart.peak.0;
    let entry_of = {
        let chart = chart.clone();
        move |t: i64| chart.entry_at(t)
    };
    let drag = StoredValue::new(None::<f64>);
    let on_down = move |ev: web_sys::MouseEvent| {
        if !pending {
            drag.set_value(Some(f64::from(ev.offset_x()) - AXIS_LEFT_PX));
        }
    };
    let hit_move = hit_at.clone();
    let on_move = move |ev: web_sys::MouseEvent| {
        if let Some(x0) = drag.get_value() {
            let x1 = f64::from(ev.offset_x()) - AXIS_LEFT_PX;
            if (x1 - x0).abs() >= 3.0 {
                brush.set(Some((x0, x1)));
                hover.set(None);
                return;
            }
        }
        let h = hit_move(&ev);
        if hover.get_untracked().map(|h| h.0) != h.map(|h| h.0) || h.is_some() {
            hover.set(h);
        }
    };
    let on_up = move |ev: web_sys::MouseEvent| {
        let Some(x0) = drag.get_value() else { return };
        drag.set_value(None);
        brush.set(None);
        let x1 = f64::from(ev.offset_x()) - AXIS_LEFT_PX;
        let f = frame(width.get_untracked());
        match brush_window(view.get_untracked(), f.width, x0, x1, bounds) {
            Some(w) => view.set(w),
            None => {
                pinned.set(hit_at(&ev).map(|h| (h.0, h.1)));
                // A click also moves the allocator-state scrubber to the entry drawn there
                // (on the peak marker: the peak entry).
                if let Some(s) = scrub {
                    let v = view.get_untracked();
                    let t = px_time(x1, v, f.width);
                    let peak_px = x_px(peak_x, v, f.width);
                    let i = match s.peak {
                        Some(p) if (x1 - peak_px).abs() <= PEAK_SNAP_PX => Some(p),
                        _ => entry_of(t),
                    };
                    if let Some(i) = i.filter(|&i| i < s.entries) {
                        s.at.set(i);
                    }
                }
            }
        }
    };
    let on_leave = move |_| {
        hover.set(None);
        drag.set_value(None);
        brush.set(None);
    };
    let on_wheel = move |ev: web_sys::WheelEvent| {
        if pending {
            return;
        }
        ev.prevent_default();
        let f = frame(width.get_untracked());
        let px = f64::from(ev.offset_x()) - f.left;
        let factor = (ev.delta_y() * 0.002).exp();
        view.update(|v| *v = zoom_window(*v, f.width, px, factor, bounds));
    };
    let reset = move |_| {
        if !pending {
            view.set(bounds);
        }
    };

    let tip_session = session.clone();
    let tip_source = source.clone();
    let tip_chart = chart.clone();
    let tooltip = move || {
        let (b, t, x, y) = hover.get()?;
        let d = describe(&tip_session, &tip_source, &tip_chart, b, t)?;
        let left = (x + 14.0).min(width.get_untracked() - 360.0).max(0.0);
        // Below the pointer in the upper half, above it in the lower half: never clipped.
        let place = if y < height / 2.0 {
            format!("left:{left}px;top:{}px", y + 12.0)
        } else {
            format!("left:{left}px;bottom:{}px", height - y + 12.0)
        };
        Some(view! {
            <div class="mem-tip" data-testid="mem-tooltip" style=place>
                <b>{d.title}</b>
                {d.facts.into_iter().map(|f| view! { <div>{f}</div> }).collect_view()}
                {d.frames.into_iter().take(3).map(|f| view! { <div class="frame">{f}</div> }).collect_view()}
            </div>
        })
    };
    let pin_chart = chart.clone();
    let pin_session = session.clone();
    let pinned_view = move || {
        let (b, t) = pinned.get()?;
        let d: Detail = describe(&pin_session, &source, &pin_chart, b, t)?;
        Some(view! {
            <div class="mem-pinned" data-testid="mem-pinned">
                <div class="mem-pinned-head">
                    <b>{d.title}</b>
                    <button class="button" on:click=move |_| pinned.set(None)>"Unpin"</button>
                </div>
                <div class="hint">{d.facts.join(" · ")}</div>
                <ol class="frames">{d.frames.into_iter().map(|f| view! { <li>{f}</li> }).collect_view()}</ol>
            </div>
        })
    };
    let zoomed = move || view.get() != bounds;

    view! {
        <div class="mem-chart">
            <div class="mem-chart-bar">
                <span class="hint">{if pending { "hover: details · pin, zoom and the allocator state once the snapshot's model is here" } else if scrub.is_some() { "hover: details · click: pin, and show the allocator state there below (on the peak marker: at the peak) · drag: zoom to range · wheel: zoom · double-click: reset" } else { "hover: details · click: pin · drag: zoom to range · wheel: zoom · double-click: reset" }}</span>
                <button class="button" data-testid="mem-reset" disabled=move || !zoomed() on:click=reset>"Reset zoom"</button>
            </div>
            <div class="mem-canvas-wrap">
                <canvas
                    node_ref=canvas
                    data-testid="mem-chart"
                    style=format!("width:100%;height:{height}px;display:block;cursor:crosshair")
                    on:mousedown=on_down
                    on:mousemove=on_move
                    on:mouseup=on_up
                    on:mouseleave=on_leave
                    on:wheel=on_wheel
                    on:dblclick=reset
                />
                {tooltip}
            </div>
            {pinned_view}
        </div>
    }
}
