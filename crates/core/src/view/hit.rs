//! Hit testing: which slice (or row) is under a point, without a canvas.

use super::layout::{row_at, Row, RowKind, LANE_PX, ROW_PAD_PX};
use super::lod::LodIndex;
use super::viewport::Viewport;
use crate::model::Trace;

#[derive(Clone, Debug, PartialEq)]
pub enum Hit {
    Slice(u32),
    /// A group header (click toggles collapse).
    Group(usize),
    /// A group's "N idle threads" row (click shows or hides them).
    Idle(usize),
    /// A row, but no slice under the point.
    Empty(usize),
    None,
}

/// Slop, in pixels, for clicking slices narrower than the pointer.
pub const SLOP_PX: f64 = 3.0;

/// What is at `x` (track-area `view_px`) and `y` (`content_px`).
pub fn hit(t: &Trace, lod: &LodIndex, rows: &[Row], vp: &Viewport, x: f64, y: f64) -> Hit {
    let Some(r) = row_at(rows, y) else {
        return Hit::None;
    };
    let row = &rows[r];
    let track = match row.kind {
        RowKind::Group(g) => return Hit::Group(g),
        RowKind::Idle(g) => return Hit::Idle(g),
        RowKind::Counter(_) | RowKind::Memory(_) => return Hit::Empty(r),
        RowKind::Slices { track, .. } => track,
    };
    let dy = y - row.y - ROW_PAD_PX;
    if dy < 0.0 {
        return Hit::Empty(r);
    }
    let depth = (dy / LANE_PX) as usize;
    match slice_at(t, lod, track, depth, vp, x) {
        Some(i) => Hit::Slice(i),
        None => Hit::Empty(r),
    }
}

/// The slice of a lane under `x`, else the nearest one within [`SLOP_PX`].
pub fn slice_at(
    t: &Trace,
    lod: &LodIndex,
    track: usize,
    depth: usize,
    vp: &Viewport,
    x: f64,
) -> Option<u32> {
    let s = &t.slices;
    let lane = lod.lane_slices(track, depth);
    let at = vp.ns_at(x);
    let slop = (SLOP_PX * vp.ns_per_px()).round() as i64;
    let k = lane.partition_point(|&i| s.end(i as usize) <= at);
    let mut best: Option<(i64, u32)> = None;
    for j in [k.checked_sub(1), Some(k)].into_iter().flatten() {
        let Some(&i) = lane.get(j) else { continue };
        let (a, b) = (s.start[i as usize], s.end(i as usize));
        let d = if at < a {
            a - at
        } else if at >= b {
            at - b
        } else {
            0
        };
        if d <= slop && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, i));
        }
    }
    best.map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::counters::counter_tracks;
    use crate::view::layout::{groups, rows, RowsOf};
    use crate::view::testutil::trace_of;

    #[test]
    fn finds_the_slice_under_the_pointer_by_lane() {
        let t = trace_of(&[
            ("outer", "cpu_op", 1, 0.0, 100.0),
            ("inner", "cpu_op", 1, 10.0, 20.0),
            ("later", "cpu_op", 1, 200.0, 1.0),
        ]);
        let lod = LodIndex::build(&t);
        let c = counter_tracks(&t);
        let g = groups(&t, &c);
        let r = rows(&t, &lod, &c, &g, RowsOf::default());
        let row = r
            .iter()
            .find(|r| matches!(r.kind, RowKind::Slices { .. }))
            .cloned();
        let Some(row) = row else {
            panic!("a slice row")
        };
        let vp = Viewport::new(0, 300_000, 300.0); // 1 µs per px
        let name = |h: Hit| match h {
            Hit::Slice(i) => t.str(t.slices.name[i as usize]).to_owned(),
            other => format!("{other:?}"),
        };
        let y0 = row.lane_y(0) + 2.0;
        let y1 = row.lane_y(1) + 2.0;
        assert_eq!(name(hit(&t, &lod, &r, &vp, 50.0, y0)), "outer");
        assert_eq!(name(hit(&t, &lod, &r, &vp, 15.0, y1)), "inner");
        // 1 px wide "later" is found with slop.
        assert_eq!(name(hit(&t, &lod, &r, &vp, 202.5, y0)), "later");
        assert!(matches!(hit(&t, &lod, &r, &vp, 150.0, y0), Hit::Empty(_)));
        assert_eq!(hit(&t, &lod, &r, &vp, 10.0, 1.0), Hit::Group(0));
        assert_eq!(hit(&t, &lod, &r, &vp, 10.0, -5.0), Hit::None);
    }
}
