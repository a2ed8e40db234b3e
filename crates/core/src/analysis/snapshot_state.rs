//! The allocator's state at any point of a snapshot's trace (memory_viz's "Allocator State
//! History"): which segments existed and which byte ranges of them were allocated.
//!
//! At the dump it is the snapshot's own `segments[].blocks[]` (exact, with their states). Before
//! it, the state after trace entry `i` is rebuilt from the two replays memory_viz does
//! ([`super::snapshot::replay`]): the segments live after `i` (segment_alloc / segment_free, the
//! dump's segments counting from the start) and the allocations live after `i`, each placed in
//! the segment holding its address; the rest of a segment is cached (free). Like memory_viz's
//! segment replay, expandable segments' map/unmap are not replayed (they count at their final
//! size), and an allocation whose segment is unknown at `i` is counted apart (`unplaced_bytes`).

use super::snapshot::{replay, Replay};
use crate::ingest::snapshot::Snapshot;
use serde::Serialize;

/// What a byte range of a segment holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RangeState {
    Allocated,
    /// Freed by the program, waiting for its stream's work (`active_awaiting_free`): only at the dump.
    AwaitingFree,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentState {
    pub address: u64,
    pub size: u64,
    /// `segment_pool_id`: a private pool's segments are packed on rows of their own.
    pub pool: (i64, i64),
    /// `(offset in the segment, size, state)`, by offset; the gaps are cached, free memory.
    pub ranges: Vec<(u64, u64, RangeState)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct AllocatorState {
    /// Segments by pool, then (size, address) as memory_viz packs them.
    pub segments: Vec<SegmentState>,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    /// Allocations live at that point that lie in no segment live then.
    pub unplaced_bytes: u64,
}

fn finish(mut segments: Vec<SegmentState>, unplaced: u64) -> AllocatorState {
    crate::sort::by_key(&mut segments, |s| (s.pool, s.size, s.address));
    let mut st = AllocatorState {
        reserved_bytes: segments.iter().fold(0u64, |t, s| t.saturating_add(s.size)),
        allocated_bytes: 0,
        unplaced_bytes: unplaced,
        segments,
    };
    for s in &mut st.segments {
        crate::sort::by_key(&mut s.ranges, |r| r.0);
        st.allocated_bytes = s.ranges.iter().fold(st.allocated_bytes, |t, r| {
            if r.2 == RangeState::Allocated {
                t.saturating_add(r.1)
            } else {
                t
            }
        });
    }
    st
}

/// The state at the dump, from the snapshot's segments and blocks.
pub fn state_at_dump(s: &Snapshot, device: i64) -> AllocatorState {
    let sg = &s.segments;
    let mut out = Vec::new();
    for si in 0..sg.len() {
        if sg.device[si] != device {
            continue;
        }
        let mut ranges = Vec::new();
        for bi in sg.first_block[si] as usize..sg.first_block[si + 1] as usize {
            let state = match s.str(s.blocks.state[bi]) {
                "active_allocated" => RangeState::Allocated,
                "active_awaiting_free" | "active_pending_free" => RangeState::AwaitingFree,
                _ => continue,
            };
            let off = s.blocks.address[bi].saturating_sub(sg.address[si]);
            ranges.push((off, s.blocks.size[bi], state));
        }
        out.push(SegmentState {
            address: sg.address[si],
            size: sg.total_size[si],
            pool: sg.pool_id[si],
            ranges,
        });
    }
    finish(out, 0)
}

/// The two replays of a device [`state_after_in`] reads (segments and allocations), made once for
/// every position of a scrubber: each position replayed all of a trace's entries twice (~0.4 s a
/// position on a 5.6 M-entry snapshot in the page).
pub struct Replays {
    segs: Replay,
    allocs: Replay,
}

impl Replays {
    pub fn of(s: &Snapshot, device: i64) -> Replays {
        Replays {
            segs: replay(s, device, true),
            allocs: replay(s, device, false),
        }
    }

    /// From the segment replay (`replay(s, device, true)`) and the allocation replay
    /// (`replay(s, device, false)`) of one device, built elsewhere (the page builds them in
    /// steps, `ReplayBuild`).
    pub fn from_parts(segs: Replay, allocs: Replay) -> Replays {
        Replays { segs, allocs }
    }
}

/// The state after trace entry `at` of `device` (see the module doc).
pub fn state_after(s: &Snapshot, device: i64, at: usize) -> AllocatorState {
    state_after_in(s, device, at, &Replays::of(s, device))
}

/// [`state_after`] from replays made before ([`Replays::of`] of the same snapshot and device).
pub fn state_after_in(s: &Snapshot, device: i64, at: usize, r: &Replays) -> AllocatorState {
    let live = |start: Option<usize>, end: Option<usize>| {
        start.is_none_or(|a| a <= at) && end.is_none_or(|b| b > at)
    };
    let segs = &r.segs;
    // A segment's pool is known from the dump's segments (the trace's entries do not carry it in
    // the model): one released before the dump counts in the default pool.
    let pool_of: rustc_hash::FxHashMap<u64, (i64, i64)> = (0..s.segments.len())
        .filter(|&i| s.segments.device[i] == device)
        .map(|i| (s.segments.address[i], s.segments.pool_id[i]))
        .collect();
    let mut out: Vec<SegmentState> = segs
        .elements
        .iter()
        .filter(|e| live(e.start, e.end))
        .map(|e| SegmentState {
            address: e.addr,
            size: e.size,
            pool: pool_of.get(&e.addr).copied().unwrap_or((0, 0)),
            ranges: Vec::new(),
        })
        .collect();
    crate::sort::by_key(&mut out, |s| s.address);
    let allocs = &r.allocs;
    let mut unplaced = 0u64;
    for e in allocs.elements.iter().filter(|e| live(e.start, e.end)) {
        let k = out.partition_point(|s| s.address <= e.addr);
        match k.checked_sub(1).map(|k| &mut out[k]) {
            Some(seg) if e.addr < seg.address.saturating_add(seg.size) => {
                seg.ranges
                    .push((e.addr - seg.address, e.size, RangeState::Allocated));
            }
            _ => unplaced = unplaced.saturating_add(e.size),
        }
    }
    finish(out, unplaced)
}

/// memory_viz's packing of a state's segments into rows: in order (by size, then address), a new
/// row when the next does not fit in a row as wide as the largest segment, a small gap between
/// neighbours; and a new row where the pool changes, so each private pool (CUDA graph, MemPool)
/// has rows of its own (with one pool, memory_viz's packing exactly). Returns each segment's `(row, byte offset in the row)`, the rows and the row width.
pub fn pack(st: &AllocatorState) -> (Vec<(usize, u64)>, usize, u64) {
    let max = st.segments.iter().map(|s| s.size).max().unwrap_or(0).max(1);
    let gap = max / 400;
    let (mut row, mut used) = (0usize, 0u64);
    let mut out = Vec::with_capacity(st.segments.len());
    let mut pool = st.segments.first().map(|s| s.pool);
    for s in &st.segments {
        let new_pool = pool != Some(s.pool);
        pool = Some(s.pool);
        if used > 0 && (new_pool || used.saturating_add(s.size) > max) {
            row += 1;
            used = 0;
        }
        out.push((row, used));
        used = used.saturating_add(s.size).saturating_add(gap);
    }
    let rows = if out.is_empty() { 0 } else { row + 1 };
    (out, rows, max)
}
