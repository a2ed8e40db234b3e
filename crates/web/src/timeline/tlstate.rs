//! The timeline's own state, as signals shared by its input handlers, panels and painter.

use super::layout::{row_at, Row, RowKind, LANE_PX};
use super::theme::Theme;
use super::viewport::Viewport;
use leptos::prelude::*;
use std::sync::Arc;

/// A dragged area: a time range over the rows between two `content_px` heights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    pub t0: i64,
    pub t1: i64,
    pub y0: f64,
    pub y1: f64,
}

impl Area {
    /// Tracks of the slice rows the area covers.
    pub fn tracks(&self, rows: &[Row]) -> Vec<usize> {
        rows.iter()
            .filter(|r| r.y < self.y1 && r.y + r.h > self.y0)
            .filter_map(|r| match r.kind {
                RowKind::Slices { track, .. } => Some(track),
                _ => None,
            })
            .collect()
    }
}

/// Slices another view asked to show, and which one is current.
#[derive(Clone, Debug, PartialEq)]
pub struct Revealed {
    pub label: String,
    pub slices: Arc<Vec<u32>>,
    pub cur: usize,
    /// Time intervals stepped through instead of slices (idle stretches); empty otherwise.
    pub ranges: Arc<Vec<(i64, i64)>>,
}

impl Revealed {
    /// How many things it steps through.
    pub fn len(&self) -> usize {
        if self.ranges.is_empty() {
            self.slices.len()
        } else {
            self.ranges.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The interval shown now, for a range reveal.
    pub fn band(&self) -> Option<(i64, i64)> {
        self.ranges.get(self.cur).copied()
    }
}

#[derive(Clone, Copy)]
pub struct Tl {
    /// Window over the track area (its `width_px` excludes the gutter).
    pub vp: RwSignal<Viewport>,
    /// Vertical scroll of the rows, `content_px`.
    pub scroll: RwSignal<f64>,
    /// Canvas size in CSS px.
    pub size: RwSignal<(f64, f64)>,
    pub selected: RwSignal<Option<u32>>,
    pub area: RwSignal<Option<Area>>,
    /// The area once the drag ended: the aggregate table follows this, not every mouse move.
    pub area_done: RwSignal<Option<Area>>,
    pub collapsed: RwSignal<Vec<bool>>,
    /// Groups whose idle threads are shown.
    pub idle_open: RwSignal<Vec<bool>>,
    pub matches: RwSignal<Arc<Vec<u32>>>,
    pub match_cur: RwSignal<Option<usize>>,
    pub revealed: RwSignal<Option<Revealed>>,
    pub theme: RwSignal<Theme>,
    /// Last pointer position over the track area (`view_px`), the anchor for keyboard zoom.
    pub pointer_x: RwSignal<Option<f64>>,
}

impl Tl {
    pub fn new(vp: Viewport, groups: usize) -> Tl {
        Tl {
            vp: RwSignal::new(vp),
            scroll: RwSignal::new(0.0),
            size: RwSignal::new((0.0, 0.0)),
            selected: RwSignal::new(None),
            area: RwSignal::new(None),
            area_done: RwSignal::new(None),
            collapsed: RwSignal::new(vec![false; groups]),
            idle_open: RwSignal::new(vec![false; groups]),
            matches: RwSignal::new(Arc::new(Vec::new())),
            match_cur: RwSignal::new(None),
            revealed: RwSignal::new(None),
            theme: RwSignal::new(Theme::default()),
            pointer_x: RwSignal::new(None),
        }
    }

    /// Content height visible under the ruler.
    pub fn rows_height(&self, ruler_px: f64) -> f64 {
        (self.size.get_untracked().1 - ruler_px).max(0.0)
    }

    /// Brings `[a, b)` into view: keeps the zoom when it fits and is readable, else zooms to it.
    pub fn show_time(&self, a: i64, b: i64) {
        let vp = self.vp.get_untracked();
        let span = (b - a) as f64;
        let fits = span <= vp.span_ns() * 0.9 && span >= vp.ns_per_px() * 8.0;
        let next = if fits && a >= vp.start_ns && b <= vp.end_ns {
            vp
        } else if fits {
            let mid = a + (b - a) / 2;
            let half = (vp.end_ns - vp.start_ns) / 2;
            Viewport::new(mid - half, mid + half, vp.width_px)
        } else {
            Viewport::around(a, b, vp.width_px)
        };
        if next != vp {
            self.vp.set(next);
        }
    }

    /// Scrolls so lane `depth` of `row` is on screen.
    pub fn show_row(&self, row: &Row, depth: usize, visible_h: f64) {
        let y = row.lane_y(depth);
        let s = self.scroll.get_untracked();
        if y < s || y + LANE_PX > s + visible_h {
            self.scroll.set((y - visible_h / 3.0).max(0.0));
        }
    }
}

/// Row index of each track (None when its group is collapsed).
pub fn track_rows(rows: &[Row], tracks: usize) -> Vec<Option<usize>> {
    let mut v = vec![None; tracks];
    for (i, r) in rows.iter().enumerate() {
        if let RowKind::Slices { track, .. } = r.kind {
            if let Some(s) = v.get_mut(track) {
                *s = Some(i);
            }
        }
    }
    v
}

/// Whether `y` (content px) is a group header row.
pub fn is_group(rows: &[Row], y: f64) -> Option<usize> {
    row_at(rows, y).and_then(|i| match rows[i].kind {
        RowKind::Group(g) => Some(g),
        _ => None,
    })
}

/// What handlers and panels share: the state, the trace and its precomputed data, the rows.
#[derive(Clone)]
pub struct Ctx {
    pub tl: Tl,
    pub session: crate::session::SessionRef,
    pub file: usize,
    pub data: Arc<crate::session::derived::TimelineData>,
    pub rows: Memo<Arc<Vec<Row>>>,
}

impl Ctx {
    pub fn trace(&self) -> Option<&tracelight_core::model::Trace> {
        self.session.trace(self.file).map(|f| &f.trace)
    }

    /// Selects slice `i` and brings it on screen (time and row).
    pub fn focus(&self, i: u32) {
        let Some(t) = self.trace() else { return };
        let s = &t.slices;
        let iu = i as usize;
        if iu >= s.len() {
            return;
        }
        self.tl.selected.set(Some(i));
        self.tl.show_time(s.start[iu], s.end(iu));
        self.show_slice_row(i);
    }

    /// Zooms to the interval `[a, b)` with half its length of context on each side (at least
    /// 20 µs), so the work before and after it is in view.
    pub fn show_range(&self, a: i64, b: i64) {
        let pad = ((b - a) / 2).max(20_000);
        let w = self.tl.vp.get_untracked().width_px;
        self.tl.vp.set(Viewport::around(a - pad, b + pad, w));
    }

    /// Zooms so slice `i` fills the window (double-click, `f`).
    pub fn zoom_to(&self, i: u32) {
        let Some(t) = self.trace() else { return };
        let iu = i as usize;
        if iu >= t.slices.len() {
            return;
        }
        let w = self.tl.vp.get_untracked().width_px;
        self.tl
            .vp
            .set(Viewport::around(t.slices.start[iu], t.slices.end(iu), w));
        self.show_slice_row(i);
    }

    /// Scrolls the rows so slice `i`'s lane is on screen, opening its group if it is collapsed.
    pub fn show_slice_row(&self, i: u32) {
        let Some(t) = self.trace() else { return };
        let iu = i as usize;
        let track = t.slices.track[iu] as usize;
        // Expand a collapsed group holding the slice, and its idle threads if it is on one.
        if let Some(g) = self.data.groups.iter().position(|g| g.holds(track)) {
            if self.data.groups[g].idle.contains(&track)
                && !self
                    .tl
                    .idle_open
                    .with_untracked(|v| v.get(g).copied().unwrap_or(false))
            {
                self.tl.idle_open.update(|v| {
                    if let Some(x) = v.get_mut(g) {
                        *x = true;
                    }
                });
            }
            if self
                .tl
                .collapsed
                .with_untracked(|c| c.get(g).copied().unwrap_or(false))
            {
                self.tl.collapsed.update(|c| {
                    if let Some(x) = c.get_mut(g) {
                        *x = false;
                    }
                });
            }
        }
        let rows = self.rows.get_untracked();
        if let Some(r) = rows
            .iter()
            .find(|r| matches!(r.kind, RowKind::Slices { track: tr, .. } if tr == track))
        {
            let h = self.tl.rows_height(super::layout::RULER_PX);
            self.tl.show_row(r, usize::from(t.slices.depth[iu]), h);
        }
    }
}
