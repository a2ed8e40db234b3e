//! The slice-lane and counter painters every timeline canvas shares (the timeline of one trace, the
//! Ranks tab's aligned timelines of several): for each lane, core's LOD index's spans for the
//! window, batched by colour into one path per colour (rects snapped to device pixels, touching
//! ones merged), then the names of the spans wide enough to carry one. A canvas showing several
//! traces on one time axis passes each trace's `offset_ns` (its clock minus the shown clock).

use super::text::TextCache;
use tracelight_core::model::Trace;
use tracelight_core::view::counters::{CounterTrack, SeriesData};
use tracelight_core::view::layout::LANE_PX;
use tracelight_core::view::lod::{LodIndex, Span};
use tracelight_core::view::palette::{slot_color, COLORS};
use tracelight_core::view::slice_colors::SliceColors;
use tracelight_core::view::viewport::Viewport;
use web_sys::CanvasRenderingContext2d;

const LABEL_PX: f64 = 28.0;

/// Rounds a canvas coordinate (CSS px) to the device-pixel grid. Edges off the grid make
/// Chromium's software rasterizer anti-alias every edge of every rect in a path: on the 1 GB
/// synthetic trace one frame of ~5k fractional rects took 250 ms to raster, snapped 17 ms
/// (BENCHMARKS.md, timeline). Snapped rects that touch also merge into one. (Slice rects snap
/// outward instead, see [`lanes`].)
pub fn snap(v: f64, dpr: f64) -> f64 {
    (v * dpr).round() / dpr
}

/// Where and how one canvas draws: its window on the shown clock, the track area's left edge and
/// right edge, the visible band's top and bottom, and the device-pixel ratio.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub vp: Viewport,
    /// Canvas x of the track area's left edge (the gutter's right edge).
    pub left: f64,
    pub width: f64,
    pub top: f64,
    pub height: f64,
    pub dpr: f64,
}

impl Frame {
    /// Canvas x of `ns` on the shown clock.
    pub fn x(&self, ns: i64) -> f64 {
        self.left + self.vp.x(ns)
    }
}

/// One track's slices: its trace, index and colours, and the trace's clock against the shown one.
pub struct Lanes<'a> {
    pub t: &'a Trace,
    pub lod: &'a LodIndex,
    pub colors: &'a SliceColors,
    pub track: usize,
    pub depths: usize,
    /// Canvas y of the top of lane 0.
    pub y0: f64,
    /// Trace ns = shown ns + `offset_ns`.
    pub offset_ns: i64,
    pub text_color: &'a str,
}

/// What [`lanes`] drew, for the canvas's test attributes and the benchmark.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Drawn {
    pub rects: u32,
    pub labels: u32,
    pub spans: u32,
}

/// Paints `l`'s lanes that fall inside the frame's band.
pub fn lanes(
    ctx: &CanvasRenderingContext2d,
    f: &Frame,
    l: &Lanes,
    cache: &mut TextCache,
    drawn: &mut Drawn,
) {
    let s = &l.t.slices;
    let npp = f.vp.ns_per_px();
    // Pad the window by a pixel either side so edge slices are not cut short.
    let pad = npp.ceil() as i64;
    let win = (
        f.vp.start_ns - pad + l.offset_ns,
        f.vp.end_ns + pad + l.offset_ns,
    );
    let mut spans: Vec<Span> = Vec::new();
    // Per palette slot: x, y, width, and whether the rect ends in a hairline.
    let mut by_cat: [Vec<(f64, f64, f64, bool)>; COLORS.len()] = Default::default();
    let mut labels: Vec<(f64, f64, f64, u32)> = Vec::new();
    for depth in 0..l.depths {
        let y = l.y0 + depth as f64 * LANE_PX;
        if y > f.height || y + LANE_PX < f.top {
            continue;
        }
        spans.clear();
        l.lod.query(l.t, l.track, depth, win, npp, &mut spans);
        drawn.spans += spans.len() as u32;
        let y = snap(y, f.dpr);
        for sp in &spans {
            // Outward to whole device pixels: every pixel a span touches is painted, so two spans
            // less than a pixel apart never leave a gap where work exists.
            let x0 = (f.x(sp.start - l.offset_ns).max(f.left - 2.0) * f.dpr).floor() / f.dpr;
            let x1 = (f.x(sp.end - l.offset_ns).min(f.width + 2.0) * f.dpr).ceil() / f.dpr;
            let mut w = (x1 - x0).max(1.0);
            // A slice wide enough to read gets a one-device-pixel hairline at its end, so
            // back-to-back slices of one colour stay apart; merged runs (count > 1) do not.
            let edge = sp.count == 1 && w >= 4.0;
            if edge {
                w -= 1.0 / f.dpr;
            }
            let rep = sp.rep as usize;
            let ci = l.colors.slot(l.t, rep).min(COLORS.len() - 1);
            if sp.count == 1 && w >= LABEL_PX {
                labels.push((x0, y, w, sp.rep));
            }
            // Rects that touch (same lane, same colour) become one, unless the earlier one keeps
            // its hairline.
            if let Some(last) = by_cat[ci].last_mut() {
                if last.1 == y && !last.3 && x0 <= last.0 + last.2 {
                    last.2 = last.2.max(x0 + w - last.0);
                    last.3 = edge;
                    continue;
                }
            }
            by_cat[ci].push((x0, y, w, edge));
        }
    }
    for (ci, rects) in by_cat.iter().enumerate() {
        if rects.is_empty() {
            continue;
        }
        ctx.set_fill_style_str(slot_color(ci));
        ctx.begin_path();
        for &(x, y, w, _) in rects {
            ctx.rect(x, y, w, LANE_PX - 1.0);
        }
        ctx.fill();
        drawn.rects += rects.len() as u32;
    }
    if labels.is_empty() {
        return;
    }
    ctx.set_fill_style_str(l.text_color);
    for (x0, y, w, i) in labels {
        // Keep the name on screen when the slice starts left of the window.
        let left = x0.max(f.left);
        let avail = (x0 + w).min(f.width) - left - 6.0;
        let name = l.t.str(s.name[i as usize]);
        if let Some(text) = cache.fit(ctx, name, avail) {
            let _ = ctx.fill_text(&text, left + 3.0, y + LANE_PX / 2.0);
            drawn.labels += 1;
        }
    }
}

/// A counter between canvas y `top` and `top + h`: one min/max (or busy fraction) per pixel
/// column, filled as an area in `color`.
pub fn counter(
    ctx: &CanvasRenderingContext2d,
    f: &Frame,
    ct: &CounterTrack,
    top: f64,
    h: f64,
    offset_ns: i64,
    color: &str,
) {
    let base = top + h;
    let max = if ct.max > 0.0 { ct.max } else { 1.0 };
    let cols = (f.width - f.left).max(0.0).ceil() as usize;
    ctx.set_fill_style_str(color);
    ctx.set_global_alpha(0.55);
    ctx.begin_path();
    ctx.move_to(f.left, base);
    let mut started = false;
    for col in 0..cols {
        let a = f.vp.ns_at(col as f64) + offset_ns;
        let b = (f.vp.ns_at(col as f64 + 1.0) + offset_ns).max(a + 1);
        let v = match &ct.data {
            SeriesData::Step(s) => s.range(a, b).map(|(_, hi)| hi),
            SeriesData::Busy(bs) => Some(bs.fraction(a, b)),
        };
        let x = f.left + col as f64;
        match v {
            Some(v) => {
                let y = base - (v / max).clamp(0.0, 1.0) * h;
                if !started {
                    ctx.line_to(x, base);
                    started = true;
                }
                ctx.line_to(x, y);
                ctx.line_to(x + 1.0, y);
            }
            None if started => {
                ctx.line_to(x, base);
                started = false;
            }
            None => ctx.move_to(x + 1.0, base),
        }
    }
    ctx.line_to(f.width, base);
    ctx.close_path();
    ctx.fill();
    ctx.set_global_alpha(1.0);
}
