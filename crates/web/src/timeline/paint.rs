//! Draws the timeline synchronously from the model: a ruler, then each track's slices by depth.
//!
//! Slices narrower than a pixel are merged into one rect per lane so busy regions stay visibly busy
//! at any zoom (never skipped). Names are drawn only where they fit.

use super::layout::{Row, GUTTER_PX, HEADER_PX, LANE_PX, RULER_PX};
use super::viewport::{tick_step_ns, Viewport};
use tracelight_core::model::{time::format_duration, SliceKind, Trace};
use web_sys::CanvasRenderingContext2d;

/// Colour of a slice kind (also the legend's).
pub fn kind_color(k: SliceKind) -> &'static str {
    match k {
        SliceKind::CpuOp => "#4e79a7",
        SliceKind::UserAnnotation => "#9c755f",
        SliceKind::PythonFunction => "#b07aa1",
        SliceKind::Runtime | SliceKind::Driver => "#f28e2b",
        SliceKind::Kernel => "#59a14f",
        SliceKind::Memcpy => "#e15759",
        SliceKind::Memset => "#ff9da7",
        SliceKind::GpuAnnotation => "#76b7b2",
        SliceKind::Other => "#bab0ac",
    }
}

/// Counts of what one paint drew, for tests.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct PaintStats {
    pub rects: u32,
    pub labels: u32,
}

/// `origin_ns` is the time the ruler calls zero (the trace's first event).
pub fn paint(
    ctx: &CanvasRenderingContext2d,
    t: &Trace,
    rows: &[Row],
    vp: &Viewport,
    origin_ns: i64,
    width: f64,
    height: f64,
) -> PaintStats {
    let mut stats = PaintStats::default();
    ctx.set_fill_style_str("#ffffff");
    ctx.fill_rect(0.0, 0.0, width, height);
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_text_baseline("middle");
    // Track area is [GUTTER_PX, width): translate so the viewport's x=0 is at the gutter.
    let track_vp = Viewport::new(vp.start_ns, vp.end_ns, (width - GUTTER_PX).max(1.0));
    for row in rows {
        if row.y > height {
            break;
        }
        paint_row(ctx, t, row, &track_vp, width, &mut stats);
    }
    paint_ruler(ctx, &track_vp, origin_ns, width, height);
    // Gutter labels last so slices never cover them.
    for row in rows {
        ctx.set_fill_style_str("#f4f5f7");
        ctx.fill_rect(0.0, row.y, GUTTER_PX - 2.0, row.height() - 2.0);
        ctx.set_fill_style_str("#1f2328");
        let label = fit(ctx, &row.label, GUTTER_PX - 10.0);
        let _ = ctx.fill_text(&label, 6.0, row.y + HEADER_PX / 2.0 + 1.0);
    }
    stats
}

fn fit(ctx: &CanvasRenderingContext2d, s: &str, max_w: f64) -> String {
    let w = |s: &str| ctx.measure_text(s).map(|m| m.width()).unwrap_or(0.0);
    if w(s) <= max_w {
        return s.to_owned();
    }
    let chars: Vec<char> = s.chars().collect();
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let cand: String = chars[..mid].iter().collect::<String>() + "…";
        if w(&cand) <= max_w {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        String::new()
    } else {
        chars[..lo].iter().collect::<String>() + "…"
    }
}

fn paint_row(
    ctx: &CanvasRenderingContext2d,
    t: &Trace,
    row: &Row,
    vp: &Viewport,
    width: f64,
    stats: &mut PaintStats,
) {
    let tr = &t.tracks[row.track];
    let s = &t.slices;
    let (a, b) = (tr.first as usize, (tr.first + tr.count) as usize);
    ctx.set_fill_style_str("#e6e8eb");
    ctx.fill_rect(
        GUTTER_PX,
        row.y + row.height() - 2.0,
        width - GUTTER_PX,
        1.0,
    );
    // Pending merged rect per lane: (x0, x1, kind).
    let mut pending: Vec<Option<(f64, f64, SliceKind)>> = vec![None; usize::from(row.lanes)];
    let flush = |p: &mut Option<(f64, f64, SliceKind)>, lane: usize, stats: &mut PaintStats| {
        if let Some((x0, x1, k)) = p.take() {
            ctx.set_fill_style_str(kind_color(k));
            ctx.fill_rect(
                GUTTER_PX + x0,
                row.y + HEADER_PX + lane as f64 * LANE_PX,
                (x1 - x0).max(1.0),
                LANE_PX - 1.0,
            );
            stats.rects += 1;
        }
    };
    // Slices sorted by start: everything starting after the view's end is invisible.
    let end_idx = a + s.start[a..b].partition_point(|&x| x < vp.end_ns);
    for i in a..end_idx {
        let e = s.end(i);
        if e < vp.start_ns {
            continue;
        }
        let lane = usize::from(s.depth[i]);
        if lane >= pending.len() {
            continue;
        }
        let x0 = vp.x(s.start[i]).max(-2.0);
        let x1 = vp.x(e).min(vp.width_px + 2.0);
        let k = s.kind[i];
        if x1 - x0 < 1.0 {
            match &mut pending[lane] {
                Some((_, px1, pk)) if x0 <= *px1 + 1.0 && *pk == k => *px1 = px1.max(x1),
                p => {
                    flush(p, lane, stats);
                    *p = Some((x0, x1.max(x0 + 1.0), k));
                }
            }
            continue;
        }
        flush(&mut pending[lane], lane, stats);
        let y = row.y + HEADER_PX + lane as f64 * LANE_PX;
        ctx.set_fill_style_str(kind_color(k));
        ctx.fill_rect(GUTTER_PX + x0, y, x1 - x0, LANE_PX - 1.0);
        stats.rects += 1;
        if x1 - x0 > 30.0 {
            let name = t.str(s.name[i]);
            let label = fit(ctx, name, x1 - x0 - 6.0);
            if !label.is_empty() {
                ctx.set_fill_style_str("#ffffff");
                let _ = ctx.fill_text(&label, GUTTER_PX + x0.max(0.0) + 3.0, y + LANE_PX / 2.0);
                stats.labels += 1;
            }
        }
    }
    for (lane, p) in pending.iter_mut().enumerate() {
        flush(p, lane, stats);
    }
}

fn paint_ruler(
    ctx: &CanvasRenderingContext2d,
    vp: &Viewport,
    origin_ns: i64,
    width: f64,
    height: f64,
) {
    ctx.set_fill_style_str("#fafbfc");
    ctx.fill_rect(0.0, 0.0, width, RULER_PX);
    ctx.set_fill_style_str("#d0d7de");
    ctx.fill_rect(0.0, RULER_PX - 1.0, width, 1.0);
    let step = tick_step_ns(vp, 90.0);
    // Ticks fall on round offsets from the origin, so labels read 0, 20 ms, 40 ms…
    let mut tick = origin_ns + (vp.start_ns - origin_ns).div_euclid(step) * step;
    ctx.set_fill_style_str("#57606a");
    while tick <= vp.end_ns {
        let x = GUTTER_PX + vp.x(tick);
        if x >= GUTTER_PX {
            ctx.fill_rect(x, RULER_PX - 7.0, 1.0, 6.0);
            ctx.set_fill_style_str("#eef0f2");
            ctx.fill_rect(x, RULER_PX, 1.0, height - RULER_PX);
            ctx.set_fill_style_str("#57606a");
            let _ = ctx.fill_text(&format_duration(tick - origin_ns), x + 3.0, 9.0);
        }
        tick += step;
    }
    let _ = ctx.fill_text(
        &format!("window {}", format_duration(vp.end_ns - vp.start_ns)),
        6.0,
        9.0,
    );
}
