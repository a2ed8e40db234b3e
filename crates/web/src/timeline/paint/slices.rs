//! One track row: for each depth, the LOD index's spans for the window, batched by colour into one
//! path per colour (rects snapped to device pixels, touching ones merged), then the names of the
//! spans wide enough to carry one.

use super::text::TextCache;
use super::{PaintStats, Scene};
use crate::timeline::layout::{Row, GUTTER_PX, LANE_PX, RULER_PX};
use tracelight_core::view::lod::Span;
use tracelight_core::view::palette::{slot_color, COLORS};
use web_sys::CanvasRenderingContext2d;

const LABEL_PX: f64 = 28.0;

/// Rounds a canvas coordinate (CSS px) to the device-pixel grid. Edges off the grid make
/// Chromium's software rasterizer anti-alias every edge of every rect in a path: on the 1 GB
/// synthetic trace one frame of ~5k fractional rects took 250 ms to raster, snapped 17 ms
/// (BENCHMARKS.md, timeline). Snapped rects that touch also merge into one. (Slice rects snap
/// outward instead, see `row`.)
pub fn snap(v: f64, dpr: f64) -> f64 {
    (v * dpr).round() / dpr
}

pub fn row(
    ctx: &CanvasRenderingContext2d,
    sc: &Scene,
    row: &Row,
    track: usize,
    depths: usize,
    cache: &mut TextCache,
    stats: &mut PaintStats,
) {
    let s = &sc.t.slices;
    let npp = sc.vp.ns_per_px();
    // Pad the window by a pixel either side so edge slices are not cut short.
    let pad = npp.ceil() as i64;
    let win = (sc.vp.start_ns - pad, sc.vp.end_ns + pad);
    let mut spans: Vec<Span> = Vec::new();
    // Per palette slot: x, y, width, and whether the rect ends in a hairline.
    let mut by_cat: [Vec<(f64, f64, f64, bool)>; COLORS.len()] = Default::default();
    let mut labels: Vec<(f64, f64, f64, u32)> = Vec::new();
    for depth in 0..depths {
        let y = sc.y(row.lane_y(depth));
        if y > sc.height || y + LANE_PX < RULER_PX {
            continue;
        }
        spans.clear();
        sc.d.lod.query(sc.t, track, depth, win, npp, &mut spans);
        stats.spans += spans.len() as u32;
        let y = snap(y, sc.dpr);
        for sp in &spans {
            // Outward to whole device pixels: every pixel a span touches is painted, so two spans
            // less than a pixel apart never leave a gap where work exists.
            let x0 = (sc.x(sp.start).max(GUTTER_PX - 2.0) * sc.dpr).floor() / sc.dpr;
            let x1 = (sc.x(sp.end).min(sc.width + 2.0) * sc.dpr).ceil() / sc.dpr;
            let mut w = (x1 - x0).max(1.0);
            // A slice wide enough to read gets a one-device-pixel hairline at its end, so
            // back-to-back slices of one colour stay apart; merged runs (count > 1) do not.
            let edge = sp.count == 1 && w >= 4.0;
            if edge {
                w -= 1.0 / sc.dpr;
            }
            let rep = sp.rep as usize;
            let ci = sc.colors.slot(sc.t, rep).min(COLORS.len() - 1);
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
        stats.rects += rects.len() as u32;
    }
    if labels.is_empty() {
        return;
    }
    ctx.set_fill_style_str(&sc.theme.slice_text);
    for (x0, y, w, i) in labels {
        // Keep the name on screen when the slice starts left of the window.
        let left = x0.max(GUTTER_PX);
        let avail = (x0 + w).min(sc.width) - left - 6.0;
        let name = sc.t.str(s.name[i as usize]);
        if let Some(text) = cache.fit(ctx, name, avail) {
            let _ = ctx.fill_text(&text, left + 3.0, y + LANE_PX / 2.0);
            stats.labels += 1;
        }
    }
}
