//! Building the index: lanes sorted out of the slices, then each lane's mip levels, counted
//! before they are made.

use super::{Lane, Level, LodIndex, Span, BASE_GAP_NS};
use crate::model::Trace;

/// [`LodIndex::build`] in steps, one lane's mip levels per [`LodBuild::step`], so a caller on the
/// browser's main thread can yield between lanes and keep the page responsive while the index is
/// built right after a load (instead of on the first view of the timeline).
pub struct LodBuild {
    index: LodIndex,
    next: usize,
}

impl LodBuild {
    /// Sorts the slices into lanes; the levels come from `step`. Each lane is counted first and
    /// made at its final size: grown by doubling, the lanes' spare capacity and the copies left
    /// behind grew the page's wasm memory (which never shrinks) by twice what the index keeps.
    pub fn new(t: &Trace) -> LodBuild {
        let s = &t.slices;
        let mut first = Vec::with_capacity(t.tracks.len() + 1);
        let mut lanes: Vec<Lane> = Vec::new();
        let mut sizes: Vec<u32> = Vec::new();
        for tr in &t.tracks {
            first.push(lanes.len() as u32);
            if tr.count == 0 {
                continue;
            }
            let base = lanes.len();
            let depths = usize::from(tr.max_depth) + 1;
            let (a, b) = (tr.first as usize, (tr.first + tr.count) as usize);
            let rows = a.min(s.len())..b.min(s.len());
            sizes.clear();
            sizes.resize(depths, 0);
            for &d in &s.depth[rows.clone()] {
                if let Some(n) = sizes.get_mut(usize::from(d)) {
                    *n += 1;
                }
            }
            lanes.extend(sizes.iter().map(|&n| Lane {
                slices: Vec::with_capacity(n as usize),
                levels: Vec::new(),
            }));
            for i in rows {
                if let Some(l) = lanes.get_mut(base + usize::from(s.depth[i])) {
                    l.slices.push(i as u32);
                }
            }
        }
        first.push(lanes.len() as u32);
        lanes.shrink_to_fit();
        LodBuild {
            index: LodIndex { first, lanes },
            next: 0,
        }
    }

    /// How many slices the lane [`LodBuild::step`] builds next has (its cost grows with them);
    /// `None` once every lane is done.
    pub fn next_len(&self) -> Option<usize> {
        self.index.lanes.get(self.next).map(|l| l.slices.len())
    }

    /// Builds the levels of the next lane; false once every lane is done.
    pub fn step(&mut self, t: &Trace) -> bool {
        let Some(lane) = self.index.lanes.get_mut(self.next) else {
            return false;
        };
        lane.levels = build_levels(t, &lane.slices);
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
fn build_levels(t: &Trace, slices: &[u32]) -> Vec<Level> {
    let s = &t.slices;
    let n = slices.len();
    if n < 2 {
        return Vec::new();
    }
    let lo = slices.first().map_or(0, |&i| s.start[i as usize]);
    let hi = slices
        .iter()
        .map(|&i| s.end(i as usize))
        .max()
        .unwrap_or(lo);
    let extent = (hi - lo).max(1);
    let mut levels: Vec<Level> = Vec::new();
    let mut last_stored = n;
    let mut gap = BASE_GAP_NS;
    loop {
        let raw = || {
            slices.iter().map(|&i| {
                let iu = i as usize;
                Span {
                    start: s.start[iu],
                    end: s.end(iu),
                    rep: i,
                    count: 1,
                }
            })
        };
        let len = match levels.last() {
            None => runs(raw(), gap),
            Some(p) => runs(p.spans(), gap),
        };
        if len * 2 <= last_stored {
            let next = match levels.last() {
                None => merged(t, raw(), gap, len),
                Some(p) => merged(t, p.spans(), gap, len),
            };
            last_stored = len;
            levels.push(next);
        }
        if len <= 1 || gap > extent {
            break;
        }
        gap = gap.saturating_mul(4);
    }
    levels.shrink_to_fit();
    levels
}

/// How many spans merging `spans` at `gap` makes (as [`merged`] counts them).
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
