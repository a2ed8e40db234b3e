//! The diff of two allocator snapshots (two steps, two runs, before and after a change): the
//! totals and fragmentation of each, the segments only one side has, and the live bytes of each
//! side matched by allocation site, what appeared, grew, shrank or was freed.
//!
//! Definitions (docs/definitions.md, `diff .snapshot`):
//! - each side is every device of its snapshot at the dump ([`super::snapshot_dump`]): live
//!   bytes are `active_allocated` blocks' `size`; `fragmentation_bytes` is reserved − allocated;
//! - segments are matched as torch's `_memory_viz.compare` matches them, by `(address,
//!   total_size)`: a segment of A with no such segment in B was released (or resized, as an
//!   expandable segment does), one of B with none in A is new;
//! - rows group live blocks by the frame each is attributed to (`by_frame`: the grouping of the
//!   Memory tab's allocations by stack), by their whole allocation stack (`by_stack`: every frame
//!   memory_viz shows, so a change deeper in the stack is a row of its own), by `user_metadata`
//!   (`by_metadata`) and by pool (`by_pool`); groups are matched across sides by their text, so
//!   two files need not share anything but names;
//! - a row's status: `appeared` (no bytes in A), `freed` (none in B), `grew`, `shrank`, `same`.

use super::snapshot_dump::{frame_of, live_blocks, pool_name};
use super::snapshot_frames::{frame_text, shown_frames, FrameRanker};
use crate::ingest::snapshot::Snapshot;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// At most this many rows per grouping, largest change first (`*_rows` says how many there were).
pub const MAX_ROWS: usize = 50;

/// One side's totals over all its devices.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SideTotals {
    pub devices: u64,
    pub segments: u64,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub active_bytes: u64,
    pub fragmentation_bytes: u64,
    pub largest_free_block_bytes: u64,
    pub live_blocks: u64,
    pub trace_entries: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Appeared,
    Grew,
    Same,
    Shrank,
    Freed,
}

impl Change {
    fn of(a: u64, b: u64) -> Change {
        match (a, b) {
            (0, x) if x > 0 => Change::Appeared,
            (x, 0) if x > 0 => Change::Freed,
            _ if b > a => Change::Grew,
            _ if b < a => Change::Shrank,
            _ => Change::Same,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Change::Appeared => "appeared",
            Change::Grew => "grew",
            Change::Same => "same",
            Change::Shrank => "shrank",
            Change::Freed => "freed",
        }
    }
}

/// One group's live bytes on both sides.
#[derive(Debug, Clone, Serialize)]
pub struct DiffRow {
    /// The group: a frame (`file:line:name`), a stack's frames joined by ` ← ` (innermost first),
    /// a `user_metadata` string or a pool's name.
    pub key: String,
    pub a_bytes: u64,
    pub b_bytes: u64,
    pub delta_bytes: i64,
    pub a_blocks: u64,
    pub b_blocks: u64,
    pub change: Change,
}

/// A segment one side has and the other not.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentRef {
    pub device: i64,
    pub address: u64,
    pub total_size: u64,
    pub allocated_size: u64,
    pub pool: String,
    pub is_expandable: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SegmentsDiff {
    /// Segments in both, by `(address, total_size)`.
    pub both: u64,
    pub only_a: Vec<SegmentRef>,
    pub only_b: Vec<SegmentRef>,
    pub only_a_bytes: u64,
    pub only_b_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SnapshotDiff {
    pub a: SideTotals,
    pub b: SideTotals,
    pub segments: SegmentsDiff,
    pub by_frame: Vec<DiffRow>,
    pub by_frame_rows: u64,
    pub by_stack: Vec<DiffRow>,
    pub by_stack_rows: u64,
    pub by_metadata: Vec<DiffRow>,
    pub by_pool: Vec<DiffRow>,
}

/// Live bytes and blocks per group key, one side.
#[derive(Default)]
struct Groups {
    frame: FxHashMap<String, (u64, u64)>,
    stack: FxHashMap<String, (u64, u64)>,
    metadata: FxHashMap<String, (u64, u64)>,
    pool: FxHashMap<String, (u64, u64)>,
}

fn add(m: &mut FxHashMap<String, (u64, u64)>, k: String, bytes: u64) {
    let g = m.entry(k).or_insert((0, 0));
    g.0 = g.0.saturating_add(bytes);
    g.1 += 1;
}

/// The whole stack's shown frames (memory_viz's filter), innermost first, ` ← `-joined.
fn stack_key(s: &Snapshot, shown: &[bool], stack: u32) -> String {
    let frames: Vec<String> = s
        .stacks
        .get(stack)
        .iter()
        .filter(|&&f| shown.get(f as usize).copied().unwrap_or(false))
        .map(|&f| frame_text(s, f))
        .collect();
    if frames.is_empty() {
        "<no stack>".into()
    } else {
        frames.join(" ← ")
    }
}

fn side(s: &Snapshot) -> (SideTotals, Groups) {
    let mut t = SideTotals::default();
    let mut g = Groups::default();
    let mut ranks = FrameRanker::default();
    let mut frame_cache: FxHashMap<u32, String> = FxHashMap::default();
    let shown = shown_frames(s);
    let mut stack_cache: FxHashMap<u32, String> = FxHashMap::default();
    let sg = &s.segments;
    for si in 0..sg.len() {
        t.segments += 1;
        t.reserved_bytes = t.reserved_bytes.saturating_add(sg.total_size[si]);
        t.allocated_bytes = t.allocated_bytes.saturating_add(sg.allocated_size[si]);
        t.active_bytes = t.active_bytes.saturating_add(sg.active_size[si]);
        for bi in sg.first_block[si] as usize..sg.first_block[si + 1] as usize {
            if s.str(s.blocks.state[bi]) == "inactive" {
                t.largest_free_block_bytes = t.largest_free_block_bytes.max(s.blocks.size[bi]);
            }
        }
    }
    t.fragmentation_bytes = t.reserved_bytes.saturating_sub(t.allocated_bytes);
    t.trace_entries = s.device_traces.iter().map(|d| d.len() as u64).sum();
    let devices = s.devices();
    t.devices = devices.len() as u64;
    for d in devices {
        for b in live_blocks(s, d) {
            t.live_blocks += 1;
            let f = frame_cache
                .entry(b.stack)
                .or_insert_with(|| frame_of(s, &mut ranks, b.stack))
                .clone();
            add(&mut g.frame, f, b.size);
            let k = stack_cache
                .entry(b.stack)
                .or_insert_with(|| stack_key(s, &shown, b.stack))
                .clone();
            add(&mut g.stack, k, b.size);
            add(&mut g.metadata, s.str(b.user_metadata).to_owned(), b.size);
            add(
                &mut g.pool,
                pool_name(s.segments.pool_id[b.segment as usize]),
                b.size,
            );
        }
    }
    (t, g)
}

/// Rows of both sides' groups, largest change first (then largest B, then the key), cut to
/// `max`; returns the rows and how many there were.
fn rows(
    a: &FxHashMap<String, (u64, u64)>,
    b: &FxHashMap<String, (u64, u64)>,
    max: usize,
) -> (Vec<DiffRow>, u64) {
    let mut keys: BTreeMap<&str, [(u64, u64); 2]> = BTreeMap::new();
    for (k, v) in a {
        keys.entry(k).or_default()[0] = *v;
    }
    for (k, v) in b {
        keys.entry(k).or_default()[1] = *v;
    }
    let mut out: Vec<DiffRow> = keys
        .into_iter()
        .map(|(k, [(ab, an), (bb, bn)])| DiffRow {
            key: k.to_owned(),
            a_bytes: ab,
            b_bytes: bb,
            delta_bytes: (bb as i128 - ab as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64,
            a_blocks: an,
            b_blocks: bn,
            change: Change::of(ab, bb),
        })
        .collect();
    let n = out.len() as u64;
    crate::sort::by(&mut out, |x, y| {
        y.delta_bytes
            .unsigned_abs()
            .cmp(&x.delta_bytes.unsigned_abs())
            .then(y.b_bytes.cmp(&x.b_bytes))
            .then(x.key.cmp(&y.key))
    });
    out.truncate(max);
    (out, n)
}

fn segment_ref(s: &Snapshot, si: usize) -> SegmentRef {
    let sg = &s.segments;
    SegmentRef {
        device: sg.device[si],
        address: sg.address[si],
        total_size: sg.total_size[si],
        allocated_size: sg.allocated_size[si],
        pool: pool_name(sg.pool_id[si]),
        is_expandable: sg.is_expandable[si],
    }
}

fn segments(a: &Snapshot, b: &Snapshot) -> SegmentsDiff {
    let key = |s: &Snapshot, i: usize| {
        (
            s.segments.device[i],
            s.segments.address[i],
            s.segments.total_size[i],
        )
    };
    let ka: rustc_hash::FxHashSet<_> = (0..a.segments.len()).map(|i| key(a, i)).collect();
    let kb: rustc_hash::FxHashSet<_> = (0..b.segments.len()).map(|i| key(b, i)).collect();
    let mut d = SegmentsDiff::default();
    for i in 0..a.segments.len() {
        if kb.contains(&key(a, i)) {
            d.both += 1;
        } else {
            d.only_a_bytes = d.only_a_bytes.saturating_add(a.segments.total_size[i]);
            d.only_a.push(segment_ref(a, i));
        }
    }
    for i in 0..b.segments.len() {
        if !ka.contains(&key(b, i)) {
            d.only_b_bytes = d.only_b_bytes.saturating_add(b.segments.total_size[i]);
            d.only_b.push(segment_ref(b, i));
        }
    }
    for v in [&mut d.only_a, &mut d.only_b] {
        crate::sort::by(v, |x, y| {
            y.total_size
                .cmp(&x.total_size)
                .then(x.address.cmp(&y.address))
        });
    }
    d
}

/// The diff of snapshot `a` (before) and `b` (after).
pub fn diff(a: &Snapshot, b: &Snapshot) -> SnapshotDiff {
    let (ta, ga) = side(a);
    let (tb, gb) = side(b);
    let (by_frame, by_frame_rows) = rows(&ga.frame, &gb.frame, MAX_ROWS);
    let (by_stack, by_stack_rows) = rows(&ga.stack, &gb.stack, MAX_ROWS);
    SnapshotDiff {
        a: ta,
        b: tb,
        segments: segments(a, b),
        by_frame,
        by_frame_rows,
        by_stack,
        by_stack_rows,
        by_metadata: rows(&ga.metadata, &gb.metadata, MAX_ROWS).0,
        by_pool: rows(&ga.pool, &gb.pool, MAX_ROWS).0,
    }
}
