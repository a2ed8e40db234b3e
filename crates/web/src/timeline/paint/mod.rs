//! Draws one frame synchronously from precomputed data: rows in view (slices through the LOD index,
//! counters), overlays (highlights, selection, flows, area), then the sticky gutter and the ruler.
//! Never waits, never scans slices outside the window.

pub mod counters;
pub mod gutter;
pub mod overlay;
pub mod ruler;
pub mod slices;
pub use crate::widgets::text;

use super::layout::{visible, Row, RowKind, GUTTER_PX, RULER_PX};
use super::theme::Theme;
use super::tlstate::Area;
use super::viewport::Viewport;
use crate::session::derived::TimelineData;
use tracelight_core::model::Trace;
use tracelight_core::view::slice_colors::SliceColors;
use web_sys::CanvasRenderingContext2d;

/// Counts of what one paint drew, exposed on the canvas for tests and the benchmark.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct PaintStats {
    pub rects: u32,
    pub labels: u32,
    pub spans: u32,
}

/// Everything one frame needs.
pub struct Scene<'a> {
    pub t: &'a Trace,
    pub d: &'a TimelineData,
    /// Slice colours under the session's kernel rules.
    pub colors: &'a SliceColors,
    pub rows: &'a [Row],
    pub track_row: &'a [Option<usize>],
    /// Track-area window (x = 0 at the gutter's right edge).
    pub vp: Viewport,
    pub scroll: f64,
    pub width: f64,
    pub height: f64,
    /// Device pixels per CSS pixel: rect edges are snapped to device pixels (`slices::snap`).
    pub dpr: f64,
    pub theme: &'a Theme,
    pub selected: Option<u32>,
    /// Slices linked to the selection (launch ↔ kernels, flows).
    pub links: &'a [u32],
    pub matches: &'a [u32],
    pub revealed: &'a [u32],
    /// The revealed time interval shown now (an idle stretch), shaded across all rows.
    pub band: Option<(i64, i64)>,
    pub area: Option<Area>,
    pub collapsed: &'a [bool],
    /// Time 0 of the ruler: the trace's first event, or a paired timeline's step start.
    pub origin_ns: i64,
}

impl Scene<'_> {
    /// `content_px` → canvas y.
    pub fn y(&self, content_y: f64) -> f64 {
        RULER_PX + content_y - self.scroll
    }
    /// The shared painters' view of this frame ([`crate::widgets::spans`]).
    pub fn frame(&self) -> crate::widgets::spans::Frame {
        crate::widgets::spans::Frame {
            vp: self.vp,
            left: GUTTER_PX,
            width: self.width,
            top: RULER_PX,
            height: self.height,
            dpr: self.dpr,
        }
    }
    /// `trace_ns` → canvas x.
    pub fn x(&self, ns: i64) -> f64 {
        GUTTER_PX + self.vp.x(ns)
    }
    /// Canvas y of the middle of `slice`'s lane, if its row is shown.
    pub fn slice_y(&self, slice: u32) -> Option<f64> {
        let s = &self.t.slices;
        let i = slice as usize;
        let tr = *s.track.get(i)? as usize;
        let r = (*self.track_row.get(tr)?)?;
        let row = self.rows.get(r)?;
        Some(self.y(row.lane_y(usize::from(s.depth[i]))) + super::layout::LANE_PX / 2.0)
    }
}

pub fn paint(
    ctx: &CanvasRenderingContext2d,
    sc: &Scene,
    cache: &mut text::TextCache,
) -> PaintStats {
    let mut stats = PaintStats::default();
    ctx.set_fill_style_str(&sc.theme.bg);
    ctx.fill_rect(0.0, 0.0, sc.width, sc.height);
    ctx.set_font(text::FONT);
    ctx.set_text_baseline("middle");
    ruler::grid(ctx, sc);
    ctx.save();
    ctx.begin_path();
    ctx.rect(
        GUTTER_PX,
        RULER_PX,
        sc.width - GUTTER_PX,
        sc.height - RULER_PX,
    );
    ctx.clip();
    let range = visible(sc.rows, sc.scroll, sc.scroll + sc.height - RULER_PX);
    for row in &sc.rows[range.clone()] {
        match row.kind {
            RowKind::Slices { track, depths } => {
                slices::row(ctx, sc, row, track, depths, cache, &mut stats)
            }
            RowKind::Counter(c) => counters::row(ctx, sc, row, c),
            // The timeline draws its memory lane under the canvas, not as a row.
            RowKind::Group(_) | RowKind::Idle(_) | RowKind::Memory(_) => {}
        }
        ctx.set_fill_style_str(&sc.theme.grid);
        ctx.fill_rect(
            GUTTER_PX,
            sc.y(row.y + row.h) - 1.0,
            sc.width - GUTTER_PX,
            1.0,
        );
    }
    overlay::highlights(ctx, sc, sc.matches, &sc.theme.highlight);
    overlay::highlights(ctx, sc, sc.revealed, &sc.theme.reveal);
    overlay::band(ctx, sc);
    overlay::area(ctx, sc);
    overlay::selection(ctx, sc);
    overlay::flows(ctx, sc);
    ctx.restore();
    gutter::paint(ctx, sc, range, cache);
    ruler::paint(ctx, sc);
    stats
}
