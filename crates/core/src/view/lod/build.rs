//! Building the index: lanes sorted out of the slices, then each lane's mip levels, counted
//! before they are made.

use super::{Lane, Level, LodIndex, Span, BASE_GAP_NS};
use crate::model::Trace;

/// [`LodIndex::build`] in steps, one lane's mip levels per [`LodBuild::step`] (or a bounded number
/// of spans per [`LodBuild::step_within`]), so a caller on the browser's main thread can yield
/// between steps and keep the page responsive while the index is built right after a load
/// (instead of on the first view of the timeline).
pub struct LodBuild {
    index: LodIndex,
    next: usize,
    /// The levels of lane `next` being made, where a step stopped inside it.
    job: Option<LaneJob>,
}

/// [`LodBuild::new`]'s sort of the slices into lanes in steps of a bounded number of slices: on
/// a 10 GB trace (20 M slices) it was one task of ~160 ms on the page's thread.
pub struct LodSort {
    first: Vec<u32>,
    lanes: Vec<Lane>,
    /// The track being sorted, and how far into its slices the current pass is.
    track: usize,
    pos: usize,
    /// Its first pass counts the slices of each depth; the second places them in their lanes.
    placing: bool,
    sizes: Vec<u32>,
}

impl LodSort {
    pub fn new(t: &Trace) -> LodSort {
        LodSort {
            first: Vec::with_capacity(t.tracks.len() + 1),
            lanes: Vec::new(),
            track: 0,
            pos: 0,
            placing: false,
            sizes: Vec::new(),
        }
    }

    /// Goes over at most about `budget` slices (at least one); false once every track is sorted.
    pub fn step(&mut self, t: &Trace, budget: usize) -> bool {
        let s = &t.slices;
        let mut left = budget.max(1);
        while left > 0 {
            let Some(tr) = t.tracks.get(self.track) else {
                return false;
            };
            if tr.count == 0 {
                self.first.push(self.lanes.len() as u32);
                self.track += 1;
                continue;
            }
            let (a, b) = (tr.first as usize, (tr.first + tr.count) as usize);
            let rows = a.min(s.len())..b.min(s.len());
            let from = rows.start + self.pos;
            let to = from.saturating_add(left).min(rows.end);
            left -= to - from;
            if !self.placing {
                if self.pos == 0 {
                    self.sizes.clear();
                    self.sizes.resize(usize::from(tr.max_depth) + 1, 0);
                }
                for &d in &s.depth[from..to] {
                    if let Some(n) = self.sizes.get_mut(usize::from(d)) {
                        *n += 1;
                    }
                }
                self.pos = to - rows.start;
                if to == rows.end {
                    self.first.push(self.lanes.len() as u32);
                    self.lanes.extend(self.sizes.iter().map(|&n| Lane {
                        slices: Vec::with_capacity(n as usize),
                        levels: Vec::new(),
                    }));
                    (self.placing, self.pos) = (true, 0);
                }
                continue;
            }
            let base = self.first.last().copied().unwrap_or(0) as usize;
            for i in from..to {
                if let Some(l) = self.lanes.get_mut(base + usize::from(s.depth[i])) {
                    l.slices.push(i as u32);
                }
            }
            self.pos = to - rows.start;
            if to == rows.end {
                (self.placing, self.pos) = (false, 0);
                self.track += 1;
            }
        }
        self.track < t.tracks.len()
    }

    /// The index to build the levels of (every track sorted: call [`LodSort::step`] until false).
    pub fn done(mut self) -> LodBuild {
        self.first.push(self.lanes.len() as u32);
        self.lanes.shrink_to_fit();
        LodBuild {
            index: LodIndex {
                first: self.first,
                lanes: self.lanes,
            },
            next: 0,
            job: None,
        }
    }
}

/// One lane's levels part made: merging at `gap`, first counting the runs, then (when the level
/// is kept) making it, over the source (the lane's slices, or its last level kept) from `pos`.
struct LaneJob {
    gap: i64,
    extent: i64,
    last_stored: usize,
    pos: usize,
    /// Runs counted so far at `gap`, and the current run's end.
    len: usize,
    end: Option<i64>,
    /// The level being made and its current span, once counting kept it.
    making: Option<(Level, Option<Span>)>,
}

impl LodBuild {
    /// Sorts the slices into lanes; the levels come from `step`. Each lane is counted first and
    /// made at its final size: grown by doubling, the lanes' spare capacity and the copies left
    /// behind grew the page's wasm memory (which never shrinks) by twice what the index keeps.
    pub fn new(t: &Trace) -> LodBuild {
        let mut s = LodSort::new(t);
        while s.step(t, usize::MAX) {}
        s.done()
    }

    /// How many slices the lane [`LodBuild::step`] builds next has (its cost grows with them);
    /// `None` once every lane is done.
    pub fn next_len(&self) -> Option<usize> {
        self.index.lanes.get(self.next).map(|l| l.slices.len())
    }

    /// Builds the levels of the next lane (the rest of it, where [`LodBuild::step_within`]
    /// stopped inside it); false once every lane is done.
    pub fn step(&mut self, t: &Trace) -> bool {
        self.step_within(t, usize::MAX)
    }

    /// Builds levels of the next lane, going over at most about `budget` spans (at least one),
    /// and stops at the lane's end; false once every lane is done. A 10 GB trace's lanes hold
    /// millions of slices: a lane a step, the page's thread had tasks of 150-300 ms.
    pub fn step_within(&mut self, t: &Trace, budget: usize) -> bool {
        let Some(lane) = self.index.lanes.get_mut(self.next) else {
            return false;
        };
        let job = match self.job.take() {
            Some(j) => Some(j),
            None => LaneJob::start(t, &lane.slices),
        };
        if let Some(mut job) = job {
            if !job.run(t, lane, budget.max(1)) {
                self.job = Some(job);
                return true;
            }
        }
        lane.levels.shrink_to_fit();
        self.next += 1;
        self.next < self.index.lanes.len()
    }

    /// The index. Lanes `step` has not reached have no levels yet: queries on them still answer
    /// correctly from the raw slices, only slower.
    pub fn finish(self) -> LodIndex {
        self.index
    }
}

/// The mip levels of one lane. Merging at gap `g` chains neighbours whose gap to the run's end so
/// far is at most `g`, so a level can be made from any finer one (or the slices) and comes out the
/// same: each is made from the last one kept, first counted and only then, when it is kept, made
/// at its final size. Levels not kept are never made, and nothing is grown by doubling (the page's
/// wasm memory never shrinks: the transient copies grew it by twice what the index keeps).
impl LaneJob {
    /// `None` for a lane of fewer than two slices (no levels).
    fn start(t: &Trace, slices: &[u32]) -> Option<LaneJob> {
        let s = &t.slices;
        let n = slices.len();
        if n < 2 {
            return None;
        }
        let lo = slices.first().map_or(0, |&i| s.start[i as usize]);
        let hi = slices
            .iter()
            .map(|&i| s.end(i as usize))
            .max()
            .unwrap_or(lo);
        Some(LaneJob {
            gap: BASE_GAP_NS,
            extent: (hi - lo).max(1),
            last_stored: n,
            pos: 0,
            len: 0,
            end: None,
            making: None,
        })
    }

    /// Goes on over about `budget` spans; true once the lane's levels are all made.
    fn run(&mut self, t: &Trace, lane: &mut Lane, budget: usize) -> bool {
        let mut left = budget;
        loop {
            let gap = self.gap;
            let src_len = lane.levels.last().map_or(lane.slices.len(), Level::len);
            let to = src_len.min(self.pos.saturating_add(left));
            let span = |k: usize| match lane.levels.last() {
                Some(l) => l.span(k),
                None => {
                    let i = lane.slices[k];
                    Span {
                        start: t.slices.start[i as usize],
                        end: t.slices.end(i as usize),
                        rep: i,
                        count: 1,
                    }
                }
            };
            match &mut self.making {
                None => {
                    for k in self.pos..to {
                        let sp = span(k);
                        match self.end {
                            Some(e) if sp.start - e <= gap => self.end = Some(e.max(sp.end)),
                            _ => {
                                self.len += 1;
                                self.end = Some(sp.end);
                            }
                        }
                    }
                }
                Some((level, cur)) => {
                    for k in self.pos..to {
                        let sp = span(k);
                        match *cur {
                            Some(ref mut c) if sp.start - c.end <= gap => {
                                if dur_of(t, sp.rep) > dur_of(t, c.rep) {
                                    c.rep = sp.rep;
                                }
                                c.end = c.end.max(sp.end);
                                c.count += sp.count;
                            }
                            _ => {
                                if let Some(done) = cur.take() {
                                    level.push(done);
                                }
                                *cur = Some(sp);
                            }
                        }
                    }
                }
            }
            left -= to - self.pos;
            self.pos = to;
            if self.pos < src_len {
                return false;
            }
            // The source is done at this gap.
            self.pos = 0;
            match self.making.take() {
                None if self.len * 2 <= self.last_stored => {
                    self.making = Some((Level::with_capacity(self.gap, self.len), None));
                    if left == 0 {
                        return false;
                    }
                    continue;
                }
                None => {}
                Some((mut level, cur)) => {
                    if let Some(c) = cur {
                        level.push(c);
                    }
                    self.last_stored = self.len;
                    lane.levels.push(level);
                }
            }
            if self.len <= 1 || self.gap > self.extent {
                return true;
            }
            self.gap = self.gap.saturating_mul(4);
            self.len = 0;
            self.end = None;
            if left == 0 {
                return false;
            }
        }
    }
}

/// How many spans merging `spans` at `gap` makes (as [`merged`] counts them): the definition the
/// tests check each level against.
#[cfg(test)]
pub(super) fn runs(spans: impl Iterator<Item = Span>, gap: i64) -> usize {
    let mut len = 0;
    let mut end: Option<i64> = None;
    for sp in spans {
        match end {
            Some(e) if sp.start - e <= gap => end = Some(e.max(sp.end)),
            _ => {
                len += 1;
                end = Some(sp.end);
            }
        }
    }
    len
}

/// `spans` merged at `gap`: a span joins the run before it when it starts at most `gap` after the
/// run's end so far; the run's longest slice represents it. `len` is [`runs`]' count.
#[cfg(test)]
pub(super) fn merged(t: &Trace, spans: impl Iterator<Item = Span>, gap: i64, len: usize) -> Level {
    let mut next = Level::with_capacity(gap, len);
    let mut cur: Option<Span> = None;
    for sp in spans {
        match &mut cur {
            Some(c) if sp.start - c.end <= gap => {
                if dur_of(t, sp.rep) > dur_of(t, c.rep) {
                    c.rep = sp.rep;
                }
                c.end = c.end.max(sp.end);
                c.count += sp.count;
            }
            c => {
                if let Some(done) = c.take() {
                    next.push(done);
                }
                *c = Some(sp);
            }
        }
    }
    if let Some(c) = cur {
        next.push(c);
    }
    next
}

fn dur_of(t: &Trace, i: u32) -> i64 {
    t.slices.dur.get(i as usize).copied().unwrap_or(0)
}
