//! The aligned timelines of a run's ranks: every rank's tracks stacked in one canvas on one shown
//! clock, each rank shifted by its alignment offset (`report::run::Alignment`: its clock minus
//! the first rank's), so the same collective's kernels line up across ranks whatever the hosts'
//! clocks said. One group per rank: collapsed it is a summary (its GPU streams and its memory
//! curve, the rows a straggler hunt reads), expanded every track and counter of the rank.
//!
//! Rows reuse the one-trace layout's [`Row`] (`RowKind::Group(k)` is rank `k`'s header), so the
//! painters and hit tests of the timeline serve both.

use super::counters::CounterTrack;
use super::hit::{hit, Hit};
use super::layout::{Group, Row, RowKind, COUNTER_PX, GROUP_PX, LANE_PX, MEMORY_PX, ROW_PAD_PX};
use super::lod::LodIndex;
use super::steps::StepMark;
use super::viewport::Viewport;
use crate::model::{Ns, Trace, TrackKind};

/// One rank's timeline: its trace and derived index, and its clock against the shown one.
pub struct RankTimeline<'a> {
    pub t: &'a Trace,
    pub lod: &'a LodIndex,
    pub counters: &'a [CounterTrack],
    pub groups: &'a [Group],
    /// The rank's `ProfilerStep#N` marks, drawn in its header row.
    pub steps: &'a [StepMark],
    pub label: String,
    /// The rank's clock minus the shown clock: trace ns = shown ns + `offset_ns`.
    pub offset_ns: Ns,
    /// Label of the rank's memory file lane (its allocator snapshot or memory timeline, which
    /// the trace does not hold), if it has one: a [`RowKind::Memory`] row under its tracks,
    /// collapsed or not, since memory is half of what tells ranks apart.
    pub memory: Option<String>,
    /// Tracks holding this rank's matched collectives' kernels: collapsed, a rank shows only
    /// those of its GPU streams (the rows a straggler hunt lines up), its other streams folded
    /// until it is opened; empty = no collectives, every GPU stream shown.
    pub collective_tracks: Vec<usize>,
}

/// A row of the aligned view: the rank it belongs to (index into the ranks given) and its layout.
#[derive(Clone, Debug, PartialEq)]
pub struct RankRow {
    pub rank: usize,
    pub row: Row,
}

/// Rows of a collapsed rank: its GPU streams that carry collectives (all of them when none
/// does) and its memory-allocated curves, and how many streams are folded; a rank without GPU
/// work shows its CPU tracks instead (otherwise it would be an empty header).
fn summary(r: &RankTimeline) -> (Vec<usize>, Vec<usize>, usize) {
    let all: Vec<usize> = r
        .groups
        .iter()
        .flat_map(|g| g.tracks.iter().copied())
        .collect();
    let gpu: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| r.t.tracks.get(i).is_some_and(|t| t.kind == TrackKind::Gpu))
        .collect();
    let with_coll: Vec<usize> = gpu
        .iter()
        .copied()
        .filter(|i| r.collective_tracks.contains(i))
        .collect();
    let folded = if with_coll.is_empty() {
        0
    } else {
        gpu.len() - with_coll.len()
    };
    let tracks = match (gpu.is_empty(), with_coll.is_empty()) {
        (true, _) => all,
        (false, true) => gpu,
        (false, false) => with_coll,
    };
    let mem = (0..r.counters.len())
        .filter(|&c| r.counters[c].label.starts_with("Memory allocated"))
        .collect();
    (tracks, mem, folded)
}

/// Rows of `ranks` top to bottom; `expanded[k]` shows all of rank `k`'s tracks and counters
/// instead of its summary.
pub fn rows(ranks: &[RankTimeline], expanded: &[bool]) -> Vec<RankRow> {
    let mut y = 0.0;
    let mut out = Vec::new();
    for (k, r) in ranks.iter().enumerate() {
        let (tracks, counters, folded) = if expanded.get(k).copied().unwrap_or(false) {
            (
                r.groups
                    .iter()
                    .flat_map(|g| g.tracks.iter().copied())
                    .collect(),
                (0..r.counters.len()).collect(),
                0,
            )
        } else {
            summary(r)
        };
        let label = match folded {
            0 => r.label.clone(),
            1 => format!("{} · 1 stream folded", r.label),
            n => format!("{} · {n} streams folded", r.label),
        };
        out.push(RankRow {
            rank: k,
            row: Row {
                kind: RowKind::Group(k),
                label,
                group: k,
                y,
                h: GROUP_PX,
            },
        });
        y += GROUP_PX;
        for tr in tracks {
            let depths = r.lod.depths(tr).max(1);
            let h = depths as f64 * LANE_PX + 2.0 * ROW_PAD_PX;
            out.push(RankRow {
                rank: k,
                row: Row {
                    kind: RowKind::Slices { track: tr, depths },
                    label: r.t.track_label(tr),
                    group: k,
                    y,
                    h,
                },
            });
            y += h;
        }
        for c in counters {
            out.push(RankRow {
                rank: k,
                row: Row {
                    kind: RowKind::Counter(c),
                    label: r.counters[c].label.clone(),
                    group: k,
                    y,
                    h: COUNTER_PX,
                },
            });
            y += COUNTER_PX;
        }
        if let Some(label) = &r.memory {
            out.push(RankRow {
                rank: k,
                row: Row {
                    kind: RowKind::Memory(k),
                    label: label.clone(),
                    group: k,
                    y,
                    h: MEMORY_PX,
                },
            });
            y += MEMORY_PX;
        }
    }
    out
}

/// The shown clock's extent: the union of every rank's time bounds, each moved by its offset.
pub fn bounds(ranks: &[RankTimeline]) -> Option<(Ns, Ns)> {
    ranks
        .iter()
        .filter_map(|r| {
            let (a, b) = r.t.time_bounds()?;
            Some((a - r.offset_ns, b - r.offset_ns))
        })
        .reduce(|x, y| (x.0.min(y.0), x.1.max(y.1)))
}

/// Index in `rows` of the row showing `track` of rank `rank`, if shown.
pub fn track_row(rows: &[RankRow], rank: usize, track: usize) -> Option<usize> {
    rows.iter().position(|r| {
        r.rank == rank && matches!(r.row.kind, RowKind::Slices { track: t, .. } if t == track)
    })
}

/// Content y (0 = top of the first row) of the middle of `slice`'s lane in rank `rank`, if its
/// row is shown.
pub fn slice_mid_y(rows: &[RankRow], rank: usize, t: &Trace, slice: usize) -> Option<f64> {
    let s = &t.slices;
    let track = *s.track.get(slice)? as usize;
    let r = &rows[track_row(rows, rank, track)?].row;
    Some(r.lane_y(usize::from(s.depth[slice])) + LANE_PX / 2.0)
}

/// The slice under `x` (track-area px) and `y` (content px), as (rank index, slice of that
/// rank's trace): the one-trace hit test on the row there, in that rank's clock.
pub fn hit_slice(
    ranks: &[RankTimeline],
    rows: &[RankRow],
    vp: &Viewport,
    x: f64,
    y: f64,
) -> Option<(usize, u32)> {
    let rr = rows
        .iter()
        .find(|r| r.row.y <= y && y < r.row.y + r.row.h)?;
    let r = ranks.get(rr.rank)?;
    let shifted = Viewport::new(
        vp.start_ns + r.offset_ns,
        vp.end_ns + r.offset_ns,
        vp.width_px,
    );
    match hit(r.t, r.lod, std::slice::from_ref(&rr.row), &shifted, x, y) {
        Hit::Slice(s) => Some((rr.rank, s)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::counters::counter_tracks;
    use crate::view::layout::groups;
    use crate::view::testutil::trace_of;

    #[test]
    fn ranks_stack_collapsed_to_their_gpu_streams_and_shift_by_their_offsets() {
        // Rank 1's clock runs 5 ms ahead: the same kernel at 100 µs (rank 0) and 5100 µs (rank 1).
        let a = trace_of(&[
            ("ProfilerStep#1", "user_annotation", 1, 0.0, 300.0),
            ("aten::mm", "cpu_op", 1, 10.0, 20.0),
            ("nccl", "kernel", 7, 100.0, 50.0),
        ]);
        let b = trace_of(&[
            ("ProfilerStep#1", "user_annotation", 1, 5000.0, 300.0),
            ("nccl", "kernel", 7, 5100.0, 50.0),
        ]);
        let (la, lb) = (LodIndex::build(&a), LodIndex::build(&b));
        let (ca, cb) = (counter_tracks(&a), counter_tracks(&b));
        let (ga, gb) = (groups(&a, &ca), groups(&b, &cb));
        let ranks = [
            RankTimeline {
                t: &a,
                lod: &la,
                counters: &ca,
                groups: &ga,
                steps: &[],
                label: "rank 0".into(),
                offset_ns: 0,
                memory: None,
                collective_tracks: Vec::new(),
            },
            RankTimeline {
                t: &b,
                lod: &lb,
                counters: &cb,
                groups: &gb,
                steps: &[],
                label: "rank 1".into(),
                offset_ns: 5_000_000,
                memory: Some("memory_rank1.pkl".into()),
                collective_tracks: Vec::new(),
            },
        ];
        assert_eq!(bounds(&ranks), Some((0, 300_000)));
        // Collapsed: header + the one GPU stream per rank, stacked without gaps; rank 1's memory
        // file lane last, under its stream.
        let r = rows(&ranks, &[]);
        assert_eq!(r.len(), 5, "{r:?}");
        let gpu_h = LANE_PX + 2.0 * ROW_PAD_PX;
        assert_eq!(r[2].row.y, GROUP_PX + gpu_h);
        assert_eq!(r[3].rank, 1);
        assert_eq!(r[4].row.kind, RowKind::Memory(1));
        assert_eq!(r[4].row.y, 2.0 * (GROUP_PX + gpu_h));
        assert_eq!(r[4].row.label, "memory_rank1.pkl");
        // Expanded, the lane stays the rank's last row.
        let e1 = rows(&ranks, &[false, true]);
        assert_eq!(e1.last().map(|x| &x.row.kind), Some(&RowKind::Memory(1)));
        // The kernel sits in lane 0 of its rank's GPU row.
        let k = (0..b.slices.len())
            .find(|&i| b.str(b.slices.name[i]) == "nccl")
            .unwrap_or(0);
        assert_eq!(
            slice_mid_y(&r, 1, &b, k),
            Some(2.0 * GROUP_PX + gpu_h + ROW_PAD_PX + LANE_PX / 2.0)
        );
        // Expanded rank 0: its CPU thread (two depths) and its counters join.
        let e = rows(&ranks, &[true, false]);
        let cpu = e
            .iter()
            .find(|x| matches!(x.row.kind, RowKind::Slices { depths: 2, .. }));
        assert!(cpu.is_some_and(|x| x.rank == 0), "{e:?}");
        assert_eq!(
            e.iter()
                .filter(|x| matches!(x.row.kind, RowKind::Counter(_)))
                .count(),
            ca.len()
        );
        // The CPU thread is not shown collapsed, so the aten op has no y there.
        let mm = (0..a.slices.len())
            .find(|&i| a.str(a.slices.name[i]) == "aten::mm")
            .unwrap_or(0);
        assert_eq!(slice_mid_y(&r, 0, &a, mm), None);
        assert!(slice_mid_y(&e, 0, &a, mm).is_some());
        // A click at shown time 125 µs on rank 1's stream hits its kernel (5100–5150 µs on its own
        // clock); at 200 µs nothing. 1 px = 1 µs here.
        let vp = Viewport::new(0, 300_000, 300.0);
        let y = slice_mid_y(&r, 1, &b, k).unwrap_or(0.0);
        assert_eq!(hit_slice(&ranks, &r, &vp, 125.0, y), Some((1, k as u32)));
        assert_eq!(hit_slice(&ranks, &r, &vp, 200.0, y), None);
    }

    #[test]
    fn collapsed_ranks_keep_the_streams_with_collectives_and_fold_the_rest() {
        // Two GPU streams: compute on 7, the collective on 9. By construction the collapsed rank
        // shows stream 9 alone and says one stream is folded; opened, both; without collectives
        // (nothing to line up) both streams stay.
        let t = trace_of(&[
            ("ProfilerStep#1", "user_annotation", 1, 0.0, 300.0),
            ("gemm", "kernel", 7, 10.0, 50.0),
            ("nccl:all_reduce", "kernel", 9, 100.0, 50.0),
        ]);
        let (l, c) = (LodIndex::build(&t), counter_tracks(&t));
        let g = groups(&t, &c);
        let track_of = |name: &str| {
            (0..t.slices.len())
                .find(|&i| t.str(t.slices.name[i]) == name)
                .map(|i| t.slices.track[i] as usize)
        };
        let (Some(gemm), Some(nccl)) = (track_of("gemm"), track_of("nccl:all_reduce")) else {
            panic!("kernels not read")
        };
        assert_ne!(gemm, nccl);
        let rank = |coll: Vec<usize>| RankTimeline {
            t: &t,
            lod: &l,
            counters: &c,
            groups: &g,
            steps: &[],
            label: "rank 0".into(),
            offset_ns: 0,
            memory: None,
            collective_tracks: coll,
        };
        let slices = |r: &[RankRow]| -> Vec<usize> {
            r.iter()
                .filter_map(|x| match x.row.kind {
                    RowKind::Slices { track, .. } => Some(track),
                    _ => None,
                })
                .collect()
        };
        let with = [rank(vec![nccl])];
        let r = rows(&with, &[false]);
        assert_eq!(slices(&r), vec![nccl]);
        assert_eq!(r[0].row.label, "rank 0 · 1 stream folded");
        let open = rows(&with, &[true]);
        assert!(slices(&open).contains(&gemm) && slices(&open).contains(&nccl));
        assert_eq!(open[0].row.label, "rank 0");
        let without = [rank(Vec::new())];
        let r = rows(&without, &[false]);
        let mut got = slices(&r);
        got.sort_unstable();
        let mut want = vec![gemm, nccl];
        want.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(r[0].row.label, "rank 0");
    }
}
