//! One frame of the aligned timelines: every visible row through the shared painters
//! ([`crate::widgets::spans`], the timeline's own), each rank on its offset; then the selected
//! collective's kernels outlined and joined by one flow line across the ranks, the gutter with
//! each rank's header, and the ruler on the shown clock.

use super::memory::RankLane;
use crate::widgets::geometry::GUTTER_PX;
use crate::widgets::memory_paint::{paint_data, Frame as MFrame, Overlay};
use crate::widgets::spans::{counter, lanes, Drawn, Frame, Lanes};
use crate::widgets::text::{TextCache, FONT};
use crate::widgets::theme::Theme;
use tracelight_core::model::time::format_duration;
use tracelight_core::report::memory::format_bytes;
use tracelight_core::view::aligned::{RankRow, RankTimeline};
use tracelight_core::view::layout::{RowKind, GROUP_PX, LANE_PX};
use tracelight_core::view::slice_colors::SliceColors;
use tracelight_core::view::viewport::{tick_label, tick_step_ns};
use web_sys::CanvasRenderingContext2d;

/// Height of the ruler on top of the aligned view.
pub const RULER_PX: f64 = 24.0;
const MIN_TICK_PX: f64 = 90.0;

/// One kernel of the selected collective: its rank (index into the view's ranks) and its slice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowPart {
    pub rank: usize,
    pub slice: u32,
}

pub struct AScene<'a> {
    pub ranks: &'a [RankTimeline<'a>],
    pub colors: &'a [std::sync::Arc<SliceColors>],
    pub rows: &'a [RankRow],
    pub expanded: &'a [bool],
    pub frame: Frame,
    /// Vertical scroll, content px.
    pub scroll: f64,
    /// Shown-clock origin of the ruler's labels.
    pub origin: i64,
    pub theme: &'a Theme,
    pub flow: &'a [FlowPart],
    /// Each rank's memory-file lane, and the y scale they share.
    pub lanes: &'a [Option<RankLane>],
    pub lane_y_max: u64,
}

impl AScene<'_> {
    fn y(&self, content_y: f64) -> f64 {
        RULER_PX + content_y - self.scroll
    }

    /// Canvas (x0, x1, y-middle) of a flow part's kernel, if its row is shown.
    pub fn part_at(&self, p: &FlowPart) -> Option<(f64, f64, f64)> {
        let r = self.ranks.get(p.rank)?;
        let i = p.slice as usize;
        let y = tracelight_core::view::aligned::slice_mid_y(self.rows, p.rank, r.t, i)?;
        let s = &r.t.slices;
        let x0 = self.frame.x(s.start[i] - r.offset_ns);
        let x1 = self.frame.x(s.end(i) - r.offset_ns);
        Some((x0, x1, self.y(y)))
    }
}

/// Paints one frame; returns what the lanes drew and the memory lanes' polygons.
pub fn paint(ctx: &CanvasRenderingContext2d, sc: &AScene, cache: &mut TextCache) -> (Drawn, u32) {
    let f = sc.frame;
    let th = sc.theme;
    let mut drawn = Drawn::default();
    let mut polygons = 0;
    ctx.set_fill_style_str(&th.bg);
    ctx.fill_rect(0.0, 0.0, f.width, f.height);
    ctx.set_font(FONT);
    ctx.set_text_baseline("middle");
    let rows = sc.rows;
    // The rows on screen (binary search, as `layout::visible`).
    let (y0, y1) = (sc.scroll, sc.scroll + f.height - RULER_PX);
    let a = rows.partition_point(|r| r.row.y + r.row.h <= y0);
    let range = a..rows.partition_point(|r| r.row.y < y1).max(a);
    ctx.save();
    ctx.begin_path();
    ctx.rect(f.left, RULER_PX, f.width - f.left, f.height - RULER_PX);
    ctx.clip();
    for rr in &rows[range.clone()] {
        let Some(r) = sc.ranks.get(rr.rank) else {
            continue;
        };
        let row = &rr.row;
        match row.kind {
            RowKind::Slices { track, depths } => {
                let colors = sc.colors.get(rr.rank).map(|c| &**c);
                let fallback = SliceColors::default();
                let l = Lanes {
                    t: r.t,
                    lod: r.lod,
                    colors: colors.unwrap_or(&fallback),
                    track,
                    depths,
                    y0: sc.y(row.lane_y(0)),
                    offset_ns: r.offset_ns,
                    text_color: &th.slice_text,
                };
                lanes(ctx, &f, &l, cache, &mut drawn);
            }
            RowKind::Counter(c) => {
                if let Some(ct) = r.counters.get(c) {
                    let top = sc.y(row.y) + 4.0;
                    // A counter holds its last value; past the rank's trace it would claim
                    // memory (or use) the rank never recorded while other ranks run on.
                    let (a, b) = r.t.time_bounds().unwrap_or((i64::MIN / 2, i64::MAX / 2));
                    let (x0, x1) = (f.x(a - r.offset_ns).max(f.left), f.x(b - r.offset_ns));
                    ctx.save();
                    ctx.begin_path();
                    ctx.rect(x0, top, (x1.min(f.width) - x0).max(0.0), row.h);
                    ctx.clip();
                    counter(ctx, &f, ct, top, row.h - 8.0, r.offset_ns, &th.counter);
                    ctx.restore();
                }
            }
            RowKind::Group(_) => {
                ctx.set_fill_style_str(&th.group);
                ctx.fill_rect(f.left, sc.y(row.y), f.width - f.left, GROUP_PX);
                steps(ctx, sc, r, sc.y(row.y));
            }
            RowKind::Memory(_) => {
                if let Some(l) = sc.lanes.get(rr.rank).and_then(|l| l.as_ref()) {
                    polygons += paint_lane(ctx, sc, r, l, sc.y(row.y), row.h);
                }
            }
            // The aligned view lists tracks itself and folds no idle threads.
            RowKind::Idle(_) => {}
        }
        ctx.set_fill_style_str(&th.grid);
        ctx.fill_rect(f.left, sc.y(row.y + row.h) - 1.0, f.width - f.left, 1.0);
    }
    flow(ctx, sc);
    ctx.restore();
    gutter(ctx, sc, range, cache);
    ruler(ctx, sc);
    (drawn, polygons)
}

/// The rank's `ProfilerStep#N` spans in its header row on the shown clock, alternating colours,
/// named where they fit: steps line up across ranks when the ranks were aligned on them.
fn steps(ctx: &CanvasRenderingContext2d, sc: &AScene, r: &RankTimeline, y: f64) {
    let f = sc.frame;
    let (a, b) = (f.vp.start_ns + r.offset_ns, f.vp.end_ns + r.offset_ns);
    let first = r.steps.partition_point(|m| m.end < a);
    for (k, m) in r.steps[first..].iter().enumerate() {
        if m.start > b {
            break;
        }
        let x0 = f.x(m.start - r.offset_ns).max(f.left);
        let x1 = f.x(m.end - r.offset_ns).min(f.width);
        let color = if (first + k) % 2 == 0 {
            &sc.theme.step_a
        } else {
            &sc.theme.step_b
        };
        ctx.set_fill_style_str(color);
        ctx.fill_rect(x0, y + 3.0, (x1 - x0).max(1.0), GROUP_PX - 6.0);
        if x1 - x0 > 30.0 {
            ctx.set_fill_style_str(&sc.theme.fg);
            let _ = ctx.fill_text(&m.label, x0 + 3.0, y + GROUP_PX / 2.0);
        }
    }
}

/// The selected collective: each rank's kernel outlined, a line through their starts rank by
/// rank (the arrival order is read off its slant), and the moment it released every rank.
fn flow(ctx: &CanvasRenderingContext2d, sc: &AScene) {
    let pts: Vec<(f64, f64, f64)> = sc.flow.iter().filter_map(|p| sc.part_at(p)).collect();
    if pts.is_empty() {
        return;
    }
    let th = sc.theme;
    ctx.set_stroke_style_str(&th.flow);
    ctx.set_line_width(2.0);
    for &(x0, x1, y) in &pts {
        ctx.stroke_rect(x0, y - LANE_PX / 2.0, (x1 - x0).max(2.0), LANE_PX - 1.0);
    }
    ctx.begin_path();
    for (k, &(x0, _, y)) in pts.iter().enumerate() {
        if k == 0 {
            ctx.move_to(x0, y);
        } else {
            ctx.line_to(x0, y);
        }
    }
    ctx.stroke();
    for &(x0, _, y) in &pts {
        ctx.begin_path();
        let _ = ctx.arc(x0, y, 3.0, 0.0, std::f64::consts::TAU);
        ctx.set_fill_style_str(&th.flow);
        ctx.fill();
    }
    // The release: the earliest end (every rank leaves when the last one has arrived).
    if let Some(end) = pts.iter().map(|p| p.1).reduce(f64::min) {
        ctx.set_fill_style_str(&th.flow);
        ctx.set_global_alpha(0.5);
        ctx.fill_rect(end.floor(), RULER_PX, 1.0, sc.frame.height - RULER_PX);
        ctx.set_global_alpha(1.0);
    }
}

fn gutter(
    ctx: &CanvasRenderingContext2d,
    sc: &AScene,
    range: std::ops::Range<usize>,
    cache: &mut TextCache,
) {
    let (f, th) = (sc.frame, sc.theme);
    ctx.set_fill_style_str(&th.gutter);
    ctx.fill_rect(0.0, RULER_PX, GUTTER_PX, f.height - RULER_PX);
    ctx.set_fill_style_str(&th.grid);
    ctx.fill_rect(GUTTER_PX - 1.0, RULER_PX, 1.0, f.height - RULER_PX);
    for rr in &sc.rows[range] {
        let row = &rr.row;
        let y = sc.y(row.y);
        if y + row.h < RULER_PX {
            continue;
        }
        match row.kind {
            RowKind::Group(k) => {
                ctx.set_fill_style_str(&th.group);
                ctx.fill_rect(0.0, y, GUTTER_PX, GROUP_PX);
                ctx.set_fill_style_str(&th.fg);
                let open = sc.expanded.get(k).copied().unwrap_or(false);
                let _ = ctx.fill_text(if open { "▾" } else { "▸" }, 4.0, y + GROUP_PX / 2.0);
                ctx.set_font(&format!("600 {FONT}"));
                if let Some(t) = cache.fit(ctx, &row.label, GUTTER_PX - 22.0) {
                    let _ = ctx.fill_text(&t, 16.0, y + GROUP_PX / 2.0);
                }
                ctx.set_font(FONT);
            }
            RowKind::Memory(_) => {
                if let Some(l) = sc.lanes.get(rr.rank).and_then(|l| l.as_ref()) {
                    gutter_lane(ctx, sc, l, &row.label, y, cache);
                }
            }
            RowKind::Slices { .. } | RowKind::Counter(_) | RowKind::Idle(_) => {
                ctx.set_fill_style_str(&th.fg);
                if let Some(t) = cache.fit(ctx, &row.label, GUTTER_PX - 24.0) {
                    let _ = ctx.fill_text(&t, 16.0, y + 12.0);
                }
            }
        }
    }
}

fn ruler(ctx: &CanvasRenderingContext2d, sc: &AScene) {
    let (f, th) = (sc.frame, sc.theme);
    ctx.set_fill_style_str(&th.ruler);
    ctx.fill_rect(0.0, 0.0, f.width, RULER_PX);
    let step = tick_step_ns(&f.vp, MIN_TICK_PX);
    let first = sc.origin + (f.vp.start_ns - sc.origin).div_euclid(step) * step;
    ctx.set_fill_style_str(&th.muted);
    let mut t = first;
    while t <= f.vp.end_ns {
        let x = f.x(t);
        if x >= f.left {
            ctx.fill_rect(x.floor(), RULER_PX - 6.0, 1.0, 6.0);
            let _ = ctx.fill_text(&tick_label(t - sc.origin, step), x + 3.0, 9.0);
        }
        let Some(n) = t.checked_add(step) else {
            break;
        };
        t = n;
    }
    ctx.set_fill_style_str(&th.ruler);
    ctx.fill_rect(0.0, 0.0, GUTTER_PX, RULER_PX);
    ctx.set_fill_style_str(&th.fg);
    let _ = ctx.fill_text(
        &format!("window {}", format_duration(f.vp.end_ns - f.vp.start_ns)),
        8.0,
        RULER_PX / 2.0,
    );
    ctx.set_fill_style_str(&th.grid);
    ctx.fill_rect(0.0, RULER_PX - 1.0, f.width, 1.0);
}

/// Paints rank `r`'s lane in the row at canvas `y` of height `h`; returns the polygons drawn.
pub fn paint_lane(
    ctx: &CanvasRenderingContext2d,
    sc: &AScene,
    r: &RankTimeline,
    lane: &RankLane,
    y: f64,
    h: f64,
) -> u32 {
    let f = sc.frame;
    let mf = MFrame {
        left: f.left,
        top: y + 4.0,
        width: (f.width - f.left).max(1.0),
        height: h - 8.0,
    };
    let Some(epoch) = lane.epoch_ns else {
        ctx.set_fill_style_str(&sc.theme.muted);
        let note = lane.note.as_deref().unwrap_or("");
        let _ = ctx.fill_text(&format!("not placed: {note}"), f.left + 8.0, y + h / 2.0);
        return 0;
    };
    // Shown ns -> the rank's trace ns (+ offset) -> the file's epoch ns (+ epoch).
    let shift = r.offset_ns.saturating_add(epoch);
    let view = (
        f.vp.start_ns.saturating_add(shift),
        f.vp.end_ns
            .saturating_add(shift)
            .max(f.vp.start_ns.saturating_add(shift) + 1),
    );
    let none = Overlay {
        highlight: None,
        pinned: None,
        brush: None,
    };
    paint_data(ctx, &lane.chart, view, &mf, sc.lane_y_max, &none)
}

/// The gutter of a lane row: its label, and the file's peak under it.
pub fn gutter_lane(
    ctx: &CanvasRenderingContext2d,
    sc: &AScene,
    lane: &RankLane,
    label: &str,
    y: f64,
    cache: &mut TextCache,
) {
    use crate::widgets::geometry::GUTTER_PX;
    ctx.set_fill_style_str(&sc.theme.fg);
    if let Some(t) = cache.fit(ctx, label, GUTTER_PX - 24.0) {
        let _ = ctx.fill_text(&t, 16.0, y + 12.0);
    }
    ctx.set_fill_style_str(&sc.theme.muted);
    ctx.set_font(FONT);
    let _ = ctx.fill_text(
        &format!("peak {}", format_bytes(lane.peak())),
        16.0,
        y + 27.0,
    );
    if lane.epoch_ns.is_some() {
        let _ = ctx.fill_text(
            &format!("axis 0–{}", format_bytes(sc.lane_y_max)),
            16.0,
            y + 42.0,
        );
    }
}
