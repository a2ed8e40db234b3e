//! Level-of-detail index for drawing millions of slices: per track, per depth ("lane"), the raw
//! slice list plus mip levels of merged spans, built once at load.
//!
//! Level `k` merges neighbours whose gap is at most `1 µs · 4^k`; a level is stored only when it at
//! least halves the span count of the last stored one, so the index stays below ~1 span per slice
//! (20 bytes each) in the worst case. A query picks the coarsest level whose merge gap is under one
//! pixel, so a zoomed-out frame touches about one span per pixel per lane instead of every slice,
//! and busy regions stay busy: spans are merged, never dropped. Spans whose longest slice is wide
//! enough to carry a label are refined through finer levels, so labels survive merging.
//! (Perfetto does the same with quantized "mipmap" slice tables: `track_helper.ts`.)

use crate::model::Trace;

mod build;
#[cfg(test)]
use build::{merged, runs};
pub use build::{LodBuild, LodSort};

/// One drawable run: `[start, end)` in trace ns, `rep` the longest slice in it (its colour and,
/// when `count == 1`, its name), `count` the slices merged into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: i64,
    pub end: i64,
    pub rep: u32,
    pub count: u32,
}

/// Spans merged at one gap threshold, columnar.
#[derive(Clone, Debug, Default)]
struct Level {
    gap_ns: i64,
    start: Vec<i64>,
    end: Vec<i64>,
    rep: Vec<u32>,
    count: Vec<u32>,
}

impl Level {
    fn with_capacity(gap_ns: i64, n: usize) -> Level {
        Level {
            gap_ns,
            start: Vec::with_capacity(n),
            end: Vec::with_capacity(n),
            rep: Vec::with_capacity(n),
            count: Vec::with_capacity(n),
        }
    }
    fn len(&self) -> usize {
        self.start.len()
    }
    #[cfg(test)]
    fn spans(&self) -> impl Iterator<Item = Span> + '_ {
        (0..self.len()).map(|j| self.span(j))
    }
    fn span(&self, i: usize) -> Span {
        Span {
            start: self.start[i],
            end: self.end[i],
            rep: self.rep[i],
            count: self.count[i],
        }
    }
    fn push(&mut self, s: Span) {
        self.start.push(s.start);
        self.end.push(s.end);
        self.rep.push(s.rep);
        self.count.push(s.count);
    }
}

/// The slices of one track at one depth. Same-depth slices never overlap (the nesting pass puts an
/// overlapping slice one level deeper), so both starts and ends are sorted.
#[derive(Clone, Debug, Default)]
struct Lane {
    slices: Vec<u32>,
    levels: Vec<Level>,
}

/// The index: lanes of track `t` are `lanes[first[t] .. first[t + 1]]`, one per depth.
#[derive(Clone, Debug, Default)]
pub struct LodIndex {
    first: Vec<u32>,
    lanes: Vec<Lane>,
}

/// Finest merge gap.
const BASE_GAP_NS: i64 = 1_000;
/// A merged span is split into finer detail when its longest slice is at least this wide.
pub const LABEL_MIN_PX: f64 = 24.0;

impl LodIndex {
    pub fn build(t: &Trace) -> LodIndex {
        let mut b = LodBuild::new(t);
        while b.step(t) {}
        b.finish()
    }

    /// Number of lanes (depths) of track `track`.
    pub fn depths(&self, track: usize) -> usize {
        match (self.first.get(track), self.first.get(track + 1)) {
            (Some(&a), Some(&b)) => (b - a) as usize,
            _ => 0,
        }
    }

    /// Lanes of track `track` needed to show its slices overlapping `[t0, t1)`: one more than the
    /// deepest lane holding such a slice (0 when none does). Each lane is sorted by start and by
    /// end, so this is one binary search per lane.
    pub fn depths_in(&self, t: &Trace, track: usize, (t0, t1): (i64, i64)) -> usize {
        (0..self.depths(track))
            .rev()
            .find(|&d| {
                let s = self.lane_slices(track, d);
                let k = s.partition_point(|&i| t.slices.end(i as usize) <= t0);
                s.get(k).is_some_and(|&i| t.slices.start[i as usize] < t1)
            })
            .map_or(0, |d| d + 1)
    }

    fn lane(&self, track: usize, depth: usize) -> Option<&Lane> {
        let a = *self.first.get(track)? as usize;
        (depth < self.depths(track))
            .then(|| self.lanes.get(a + depth))
            .flatten()
    }

    /// Raw slices of a lane, sorted by start (and end).
    pub fn lane_slices(&self, track: usize, depth: usize) -> &[u32] {
        self.lane(track, depth).map_or(&[], |l| &l.slices)
    }

    /// Spans stored in all levels, for the memory budget.
    pub fn stored_spans(&self) -> usize {
        self.lanes
            .iter()
            .flat_map(|l| &l.levels)
            .map(Level::len)
            .sum()
    }

    /// Appends to `out` what to draw of lane (`track`, `depth`) over `[t0, t1)` at `ns_per_px`:
    /// spans in time order, narrow neighbours closer than a pixel merged into one. Every slice
    /// overlapping the window is inside exactly one output span.
    pub fn query(
        &self,
        t: &Trace,
        track: usize,
        depth: usize,
        (t0, t1): (i64, i64),
        ns_per_px: f64,
        out: &mut Vec<Span>,
    ) {
        let Some(lane) = self.lane(track, depth) else {
            return;
        };
        let npp = if ns_per_px.is_finite() && ns_per_px > 0.0 {
            ns_per_px
        } else {
            1.0
        };
        let level = lane.levels.iter().rposition(|l| (l.gap_ns as f64) <= npp);
        let mut m = Merger {
            npp,
            cur: None,
            out,
        };
        emit(t, lane, level, (t0, t1), &mut m);
        m.finish();
    }
}

/// Emits the items of `level` (None = raw slices) overlapping `[t0, t1)`, refining spans whose
/// longest slice could carry a label.
fn emit(t: &Trace, lane: &Lane, level: Option<usize>, (t0, t1): (i64, i64), m: &mut Merger) {
    let s = &t.slices;
    match level.and_then(|k| lane.levels.get(k).map(|l| (k, l))) {
        None => {
            let sl = &lane.slices;
            let a = sl.partition_point(|&i| s.end(i as usize) <= t0 && s.start[i as usize] < t0);
            for &i in &sl[a..] {
                let iu = i as usize;
                if s.start[iu] >= t1 {
                    break;
                }
                m.push(Span {
                    start: s.start[iu],
                    end: s.end(iu),
                    rep: i,
                    count: 1,
                });
            }
        }
        Some((k, l)) => {
            let a = l.end.partition_point(|&e| e <= t0);
            for j in a..l.len() {
                let sp = l.span(j);
                if sp.start >= t1 {
                    break;
                }
                let rep_px = s.dur.get(sp.rep as usize).copied().unwrap_or(0) as f64 / m.npp;
                if sp.count > 1 && rep_px >= LABEL_MIN_PX {
                    let finer = k.checked_sub(1);
                    emit(t, lane, finer, (sp.start.max(t0), sp.end.min(t1)), m);
                } else {
                    m.push(sp);
                }
            }
        }
    }
}

/// Joins narrow runs: a run that starts narrower than a pixel keeps absorbing narrow neighbours
/// whose gap is under a pixel. Wide items pass through untouched, so their names can be drawn.
struct Merger<'a> {
    npp: f64,
    cur: Option<(Span, bool, i64)>,
    out: &'a mut Vec<Span>,
}

impl Merger<'_> {
    fn narrow(&self, s: &Span) -> bool {
        ((s.end - s.start) as f64) < self.npp
    }
    fn push(&mut self, s: Span) {
        let narrow = self.narrow(&s);
        if let Some((c, blob, rep_w)) = &mut self.cur {
            if *blob && narrow && ((s.start - c.end) as f64) < self.npp {
                // The widest member stays the representative (its colour is the blob's).
                if s.end - s.start > *rep_w {
                    *rep_w = s.end - s.start;
                    c.rep = s.rep;
                }
                c.end = c.end.max(s.end);
                c.count += s.count;
                return;
            }
        }
        self.finish();
        self.cur = Some((s, narrow, s.end - s.start));
    }
    fn finish(&mut self) {
        if let Some((c, _, _)) = self.cur.take() {
            self.out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::testutil::trace_of;

    /// 100k back-to-back 1 µs kernels with 100 ns gaps, plus one long kernel after a pause.
    fn busy() -> Trace {
        let mut ev = Vec::new();
        for i in 0..100_000u64 {
            ev.push(("k", "kernel", 0, i as f64 * 1.1, 1.0));
        }
        ev.push(("long", "kernel", 0, 200_000.0, 5_000.0));
        trace_of(&ev)
    }

    #[test]
    fn zoomed_out_query_is_small_and_covers_every_slice() {
        let t = busy();
        let idx = LodIndex::build(&t);
        assert!(
            idx.stored_spans() < t.slices.len(),
            "index stays under one span per slice"
        );
        let (lo, hi) = t.time_bounds().unwrap_or((0, 1));
        let mut out = Vec::new();
        let npp = (hi - lo) as f64 / 1000.0;
        idx.query(&t, 0, 0, (lo, hi + 1), npp, &mut out);
        assert!(
            out.len() <= 4,
            "zoomed out, the busy run is one span: {out:?}"
        );
        let covered: u32 = out.iter().map(|s| s.count).sum();
        assert_eq!(covered as usize, t.slices.len(), "no slice dropped");
        // The busy region is drawn busy: one span from the first kernel to the last.
        assert_eq!(out[0].start, 0);
        assert!(out[0].end >= 109_999_000);
        // The long kernel is its own span and keeps its name.
        let last = out[out.len() - 1];
        assert_eq!(last.count, 1);
        assert_eq!(t.str(t.slices.name[last.rep as usize]), "long");
    }

    /// Each stored level is the slices merged at its own gap directly, though it was made from
    /// the coarsest level kept before it; and levels are made at their final size.
    #[test]
    fn levels_made_from_coarser_ones_equal_merging_the_slices() {
        // Gaps of every size between 0.1 and 400 us, slices of 1 to 50 us, nested pairs too.
        let mut x: u64 = 7;
        let mut ts = 0.0;
        let mut ev = Vec::new();
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let dur = 1.0 + (x % 50) as f64;
            ev.push(("k", "kernel", 0, ts, dur));
            ts += dur + [0.1, 0.5, 3.0, 20.0, 400.0][(x >> 9) as usize % 5];
        }
        let t = trace_of(&ev);
        let idx = LodIndex::build(&t);
        let Some(lane) = idx.lane(0, 0) else {
            panic!("no lane")
        };
        assert!(lane.levels.len() >= 3, "{} levels", lane.levels.len());
        let s = &t.slices;
        let raw = || {
            lane.slices.iter().map(|&i| Span {
                start: s.start[i as usize],
                end: s.end(i as usize),
                rep: i,
                count: 1,
            })
        };
        for l in &lane.levels {
            let direct = merged(&t, raw(), l.gap_ns, runs(raw(), l.gap_ns));
            assert_eq!(
                l.spans().collect::<Vec<_>>(),
                direct.spans().collect::<Vec<_>>()
            );
            assert_eq!(l.start.capacity(), l.len());
        }
    }

    #[test]
    fn zoomed_in_query_returns_real_slices() {
        let t = busy();
        let idx = LodIndex::build(&t);
        let mut out = Vec::new();
        // 11 µs window at 10 ns per pixel: about ten kernels, each 100 px wide.
        idx.query(&t, 0, 0, (0, 11_000), 10.0, &mut out);
        assert_eq!(out.len(), 10);
        assert!(out.iter().all(|s| s.count == 1 && s.end - s.start == 1_000));
    }

    #[test]
    fn every_zoom_counts_every_visible_slice_once() {
        let t = busy();
        let idx = LodIndex::build(&t);
        for npp in [1.0, 50.0, 900.0, 5_000.0, 80_000.0, 1e6] {
            let mut out = Vec::new();
            idx.query(&t, 0, 0, (0, 300_000_000), npp, &mut out);
            let covered: u32 = out.iter().map(|s| s.count).sum();
            assert_eq!(covered as usize, t.slices.len(), "at {npp} ns/px");
            assert!(
                out.windows(2).all(|w| w[0].end <= w[1].start),
                "sorted, disjoint"
            );
        }
    }

    /// Two tracks (kernels on one stream, nested CPU ops on a thread) so there are several lanes.
    fn two_tracks() -> Trace {
        let mut ev = Vec::new();
        for i in 0..5_000u64 {
            ev.push(("k", "kernel", 0, i as f64 * 1.5, 1.0));
        }
        for i in 0..2_000u64 {
            ev.push(("op", "cpu_op", 1, i as f64 * 4.0, 3.0));
            ev.push(("child", "cpu_op", 1, i as f64 * 4.0 + 0.5, 1.0));
        }
        trace_of(&ev)
    }

    #[test]
    fn stepwise_build_matches_one_shot_build() {
        let t = two_tracks();
        let whole = LodIndex::build(&t);
        let mut b = LodBuild::new(&t);
        let mut steps = 1;
        while b.step(&t) {
            steps += 1;
        }
        let stepped = b.finish();
        let lanes: usize = (0..t.tracks.len()).map(|k| whole.depths(k)).sum();
        assert_eq!(steps, lanes, "one step per lane");
        assert_eq!(stepped.stored_spans(), whole.stored_spans());
        let (lo, hi) = t.time_bounds().unwrap_or((0, 1));
        for track in 0..t.tracks.len() {
            for depth in 0..whole.depths(track) {
                for npp in [1.0, 700.0, 20_000.0] {
                    let (mut a, mut c) = (Vec::new(), Vec::new());
                    whole.query(&t, track, depth, (lo, hi + 1), npp, &mut a);
                    stepped.query(&t, track, depth, (lo, hi + 1), npp, &mut c);
                    assert_eq!(a, c, "track {track} depth {depth} at {npp} ns/px");
                }
            }
        }
    }

    /// Steps of a few spans, stopping inside a lane's levels (while counting a gap's runs and
    /// while making a level), build the index a lane a step builds.
    #[test]
    fn steps_within_a_budget_build_what_a_lane_a_step_builds() {
        let t = two_tracks();
        let whole = LodIndex::build(&t);
        for budget in [1, 2, 7, 100, 4_999] {
            let mut b = LodBuild::new(&t);
            let mut steps = 1;
            while b.step_within(&t, budget) {
                steps += 1;
            }
            let stepped = b.finish();
            if budget < 100 {
                assert!(steps > 1000, "budget {budget}: {steps} steps");
            }
            assert_eq!(
                stepped.stored_spans(),
                whole.stored_spans(),
                "budget {budget}"
            );
            for (a, c) in whole.lanes.iter().zip(&stepped.lanes) {
                assert_eq!(a.levels.len(), c.levels.len(), "budget {budget}");
                for (x, y) in a.levels.iter().zip(&c.levels) {
                    assert_eq!(x.gap_ns, y.gap_ns);
                    assert_eq!(
                        (&x.start, &x.end, &x.rep, &x.count),
                        (&y.start, &y.end, &y.rep, &y.count)
                    );
                }
            }
        }
    }

    /// The slices sorted into lanes a few at a time, stopping inside a track's count and inside
    /// its placing, give the lanes of the sort in one go (empty tracks between included).
    #[test]
    fn sorting_in_steps_gives_the_lanes_of_one_sort() {
        let mut ev = Vec::new();
        for i in 0..300u64 {
            let tid = [1, 2, 2, 5][i as usize % 4];
            ev.push(("op", "cpu_op", tid, i as f64 * 4.0, 3.0));
            ev.push(("child", "cpu_op", tid, i as f64 * 4.0 + 0.5, 1.0));
        }
        let t = trace_of(&ev);
        let whole = LodIndex::build(&t);
        // Each track's lanes, a depth each, its slices in model order; counted from the model.
        let (mut first, mut want) = (Vec::new(), Vec::new());
        for tr in &t.tracks {
            first.push(want.len() as u32);
            if tr.count == 0 {
                continue;
            }
            for d in 0..=tr.max_depth {
                let rows = tr.first..tr.first + tr.count;
                want.push(
                    rows.filter(|&i| t.slices.depth[i as usize] == d)
                        .collect::<Vec<u32>>(),
                );
            }
        }
        first.push(want.len() as u32);
        assert!(want.len() >= 6);
        for budget in [1, 2, 5, 97, 1_000_000] {
            let mut s = LodSort::new(&t);
            let mut steps = 1;
            while s.step(&t, budget) {
                steps += 1;
            }
            if budget == 1 {
                assert!(steps >= 2 * t.slices.len() - 4, "{steps} steps");
            }
            let mut b = s.done();
            while b.step(&t) {}
            let got = b.finish();
            assert_eq!(got.first, first, "budget {budget}");
            let lanes: Vec<Vec<u32>> = got.lanes.iter().map(|l| l.slices.clone()).collect();
            assert_eq!(lanes, want, "budget {budget}");
            assert_eq!(got.stored_spans(), whole.stored_spans(), "budget {budget}");
        }
    }

    #[test]
    fn next_len_counts_each_lanes_slices_in_step_order() {
        let t = two_tracks();
        let mut b = LodBuild::new(&t);
        // Each slice is in the lane of its track and depth, counted from the model.
        let mut want = Vec::new();
        for tr in &t.tracks {
            if tr.count == 0 {
                continue;
            }
            let mut per_depth = vec![0usize; usize::from(tr.max_depth) + 1];
            for i in tr.first as usize..(tr.first + tr.count) as usize {
                per_depth[usize::from(t.slices.depth[i])] += 1;
            }
            want.extend(per_depth);
        }
        let mut got = Vec::new();
        while let Some(n) = b.next_len() {
            got.push(n);
            b.step(&t);
        }
        assert_eq!(got, want);
        assert_eq!(got.iter().sum::<usize>(), t.slices.len());
        assert_eq!(b.next_len(), None);
    }

    #[test]
    fn an_unfinished_build_still_answers_from_raw_slices() {
        let t = two_tracks();
        let idx = LodBuild::new(&t).finish();
        let (lo, hi) = t.time_bounds().unwrap_or((0, 1));
        let mut covered = 0;
        for track in 0..t.tracks.len() {
            for depth in 0..idx.depths(track) {
                let mut out = Vec::new();
                idx.query(&t, track, depth, (lo, hi + 1), 20_000.0, &mut out);
                covered += out.iter().map(|s| s.count as usize).sum::<usize>();
            }
        }
        assert_eq!(covered, t.slices.len(), "no slice dropped without levels");
    }

    #[test]
    fn missing_lanes_are_empty_not_panics() {
        let t = busy();
        let idx = LodIndex::build(&t);
        let mut out = Vec::new();
        idx.query(&t, 7, 3, (0, 10), f64::NAN, &mut out);
        assert!(out.is_empty());
        assert_eq!(idx.depths(99), 0);
    }
}
