//! memory_viz's replay of one device's trace (`process_alloc_data` in torch's `MemoryViz.js`): the
//! allocations (or segments) it creates and frees in order, the running total after each action,
//! and the peak. The definitions are in [`super::snapshot`]'s module doc. [`ReplayBuild`] runs it a
//! bounded number of entries at a time, for the page; [`replay`] runs it in one go.

use crate::ingest::snapshot::{Action, DeviceTrace, Snapshot, StackId};
use rustc_hash::FxHashMap;

/// An allocation in the replay (memory_viz's "element").
#[derive(Debug, Clone, Copy)]
pub struct Element {
    pub addr: u64,
    pub size: u64,
    pub stack: StackId,
    /// Trace index of the alloc; `None` when it predates the trace.
    pub start: Option<usize>,
    /// Trace index of the free; `None` when still live at the end.
    pub end: Option<usize>,
}

/// The result of replaying one device's trace.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    pub elements: Vec<Element>,
    /// `(trace index, total bytes after the action)`, one per action.
    pub series: Vec<(usize, u64)>,
    /// The element each entry of `series` acted on (empty when `series` is only the pre-existing
    /// total of a trace without actions).
    pub acted: Vec<u32>,
    pub preexisting_bytes: u64,
    pub peak_bytes: u64,
    /// Position in `series` of the first maximum.
    pub peak_pos: Option<usize>,
}

/// memory_viz `process_alloc_data` for one device: `segments = false` replays allocations (active
/// memory), `true` replays segments (reserved memory).
pub fn replay(s: &Snapshot, device: i64, segments: bool) -> Replay {
    let mut b = ReplayBuild::new(s, device, segments);
    loop {
        if let Some(r) = b.step(usize::MAX) {
            return r;
        }
    }
}

/// [`replay`] a bounded number of entries at a time, so the page can build it between frames
/// (5.6 M entries are ~180 ms in one task there) and the answer is the same.
pub struct ReplayBuild<'a> {
    s: &'a Snapshot,
    t: Option<&'a DeviceTrace>,
    device: i64,
    segments: bool,
    /// Trace entries read so far; past the trace, actions summed so far.
    i: usize,
    r: Replay,
    live: FxHashMap<u64, usize>,
    initially: Vec<usize>,
    actions: Vec<(usize, usize)>,
    /// After the trace: the dump's segments read so far (each block counts as a step's entry:
    /// a big snapshot's ~million blocks were one 100 ms step on the page).
    seg_i: usize,
    /// After the trace and the dump's segments: the running total and which elements are live.
    sums: Option<(u64, Vec<bool>, Vec<bool>)>,
}

impl<'a> ReplayBuild<'a> {
    pub fn new(s: &'a Snapshot, device: i64, segments: bool) -> Self {
        let t = s.trace(device);
        // Room for every action at once: growing the columns by doubling copied tens of MB in
        // one step (a 65 ms task on the page for 5.6 M entries).
        let (mut allocs, mut frees) = (0usize, 0usize);
        for &a in t.map_or(&[][..], |t| t.action.as_slice()) {
            let (is_alloc, is_free) = if segments {
                (a == Action::SegmentAlloc, a == Action::SegmentFree)
            } else {
                (
                    a == Action::Alloc,
                    matches!(a, Action::Free | Action::FreeCompleted),
                )
            };
            allocs += usize::from(is_alloc);
            frees += usize::from(is_free);
        }
        let mut r = Replay::default();
        r.elements.reserve_exact(allocs);
        r.series.reserve_exact(allocs + frees);
        r.acted.reserve_exact(allocs + frees);
        ReplayBuild {
            s,
            t,
            device,
            segments,
            i: 0,
            r,
            live: FxHashMap::default(),
            initially: Vec::new(),
            actions: Vec::with_capacity(allocs + frees),
            seg_i: 0,
            sums: None,
        }
    }

    /// Reads at most `n` more entries (or actions); the replay once it is whole.
    pub fn step(&mut self, n: usize) -> Option<Replay> {
        let n = n.max(1);
        let len = self.t.map_or(0, DeviceTrace::len);
        if self.sums.is_none() && self.i < len {
            let stop = self.i.saturating_add(n).min(len);
            self.read_entries(stop);
            return None;
        }
        if self.sums.is_none() {
            if !self.read_dump(n) {
                return None;
            }
            return self.begin_sums();
        }
        let stop = self.i.saturating_add(n).min(self.actions.len());
        self.sum_actions(stop);
        (self.i >= self.actions.len()).then(|| std::mem::take(&mut self.r))
    }

    fn read_entries(&mut self, stop: usize) {
        let Some(t) = self.t else { return };
        let r = &mut self.r;
        for i in self.i..stop {
            let a = t.action[i];
            let (is_alloc, is_free) = if self.segments {
                (a == Action::SegmentAlloc, a == Action::SegmentFree)
            } else {
                (
                    a == Action::Alloc,
                    matches!(a, Action::Free | Action::FreeCompleted),
                )
            };
            if is_alloc {
                r.elements.push(Element {
                    addr: t.addr[i],
                    size: t.size[i],
                    stack: t.stack[i],
                    start: Some(i),
                    end: None,
                });
                self.live.insert(t.addr[i], r.elements.len() - 1);
                self.actions.push((r.elements.len() - 1, i));
            } else if is_free {
                if let Some(e) = self.live.remove(&t.addr[i]) {
                    r.elements[e].end = Some(i);
                    self.actions.push((e, i));
                } else {
                    r.elements.push(Element {
                        addr: t.addr[i],
                        size: t.size[i],
                        stack: t.stack[i],
                        start: None,
                        end: Some(i),
                    });
                    self.initially.push(r.elements.len() - 1);
                    self.actions.push((r.elements.len() - 1, i));
                }
            }
        }
        self.i = stop;
    }

    /// The dump's segments (or blocks) not seen in the trace, from where the last call stopped,
    /// about `n` of them (a segment and each of its blocks count one); whether all are read.
    fn read_dump(&mut self, n: usize) -> bool {
        let (s, device, r) = (self.s, self.device, &mut self.r);
        let mut work = 0usize;
        while self.seg_i < s.segments.len() {
            if work >= n {
                return false;
            }
            let si = self.seg_i;
            self.seg_i += 1;
            work += 1;
            if s.segments.device[si] != device {
                continue;
            }
            if self.segments {
                if !self.live.contains_key(&s.segments.address[si]) {
                    r.elements.push(Element {
                        addr: s.segments.address[si],
                        size: s.segments.total_size[si],
                        stack: 0,
                        start: None,
                        end: None,
                    });
                    self.initially.push(r.elements.len() - 1);
                }
                continue;
            }
            let (a, b) = (
                s.segments.first_block[si] as usize,
                s.segments.first_block[si + 1] as usize,
            );
            work = work.saturating_add(b.saturating_sub(a));
            for bi in a..b {
                let active = s.str(s.blocks.state[bi]) == "active_allocated";
                if active && !self.live.contains_key(&s.blocks.address[bi]) {
                    r.elements.push(Element {
                        addr: s.blocks.address[bi],
                        size: s.blocks.requested_size[bi],
                        stack: s.blocks.stack[bi],
                        start: None,
                        end: None,
                    });
                    self.initially.push(r.elements.len() - 1);
                }
            }
        }
        true
    }

    /// The pre-existing total, after [`Self::read_dump`]; the whole replay when there are no
    /// actions to sum.
    fn begin_sums(&mut self) -> Option<Replay> {
        let r = &mut self.r;
        self.live = FxHashMap::default();
        // With no actions memory_viz still draws the pre-existing ones: one becomes the only
        // action. Saturating: hostile sizes near u64::MAX must not overflow the sum (fuzz
        // regression).
        let total: u64 = self
            .initially
            .iter()
            .fold(0u64, |t, &e| t.saturating_add(r.elements[e].size));
        r.preexisting_bytes = total;
        if self.actions.is_empty() && !self.initially.is_empty() {
            r.series.push((0, total));
            r.peak_bytes = total;
            r.peak_pos = Some(0);
            return Some(std::mem::take(r));
        }
        let mut seen = vec![false; r.elements.len()];
        let mut current = vec![false; r.elements.len()];
        for &e in &self.initially {
            seen[e] = true;
            current[e] = true;
        }
        self.sums = Some((total, seen, current));
        self.i = 0;
        self.actions.is_empty().then(|| std::mem::take(&mut self.r))
    }

    fn sum_actions(&mut self, stop: usize) {
        let Some((total, seen, current)) = &mut self.sums else {
            return;
        };
        let r = &mut self.r;
        for &(e, i) in &self.actions[self.i..stop] {
            let size = r.elements[e].size;
            if current[e] {
                current[e] = false;
                *total = total.saturating_sub(size);
            } else if !seen[e] {
                seen[e] = true;
                current[e] = true;
                *total = total.saturating_add(size);
            }
            r.series.push((i, *total));
            r.acted.push(e as u32);
            if r.peak_pos.is_none() || *total > r.peak_bytes {
                r.peak_bytes = *total;
                r.peak_pos = Some(r.series.len() - 1);
            }
        }
        self.i = stop;
    }
}
