//! Memory-snapshot analysis: per-device state figures, replayed peaks, the blocks live at the peak,
//! allocations by stack, OOMs, private pools and the active-memory timeline.
//!
//! Definitions (docs/definitions.md, `.snapshot`):
//! - **State figures** (`segments`, `reserved_bytes`, `allocated_bytes`, `active_bytes`,
//!   `requested_bytes`, `blocks`) are sums over the snapshot's segments (`total_size`,
//!   `allocated_size`, `active_size`, `requested_size`) and block states: the allocator's own numbers
//!   at dump time. `largest_free_block_bytes` is the largest `inactive` block; `fragmentation_bytes`
//!   is reserved − allocated (cached but unused).
//! - **Peaks** replay `device_traces[d]` exactly as torch's `MemoryViz.js` `process_alloc_data` does:
//!   an `alloc` adds its `size`; a `free` / `free_completed` removes the matching alloc, and one
//!   without a matching alloc in the trace is an allocation that existed before the trace began
//!   (ring buffer, or history enabled late): it counts from the start until that free. Blocks still
//!   `active_allocated` at the end that the trace never allocated also count from the start (with
//!   their `requested_size`). The peak is the largest total *after* an action. `peak_reserved_bytes`
//!   is the same replay over `segment_alloc` / `segment_free` with the snapshot's segments as the
//!   pre-existing set (memory_viz's segment timeline; like it, `segment_map`/`segment_unmap` of
//!   expandable segments are not replayed, so those segments count at their final size).

pub(crate) use super::snapshot_frames::frame_text;
pub use super::snapshot_frames::{
    attribution_frame, frame_rank, frame_shown, top_frames, top_user_frame, FrameRank, FrameRanker,
    TOP_FRAMES,
};
use crate::ingest::snapshot::{Action, DeviceTrace, Snapshot, StackId};
use crate::model::StrId;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// At most this many blocks are listed at the peak (the count says how many there were).
pub const MAX_PEAK_BLOCKS: usize = 100;
/// At most this many stack groups are listed.
pub const MAX_GROUPS: usize = 50;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeakBlock {
    pub addr: u64,
    pub size: u64,
    /// Trace index of the alloc, `None` for allocations that predate the trace.
    pub alloc_index: Option<usize>,
    /// The allocation stack, innermost first, memory_viz's frame filter applied,
    /// `file:line:name`; empty when the allocation predates the trace and only its free was seen.
    pub top_frames: Vec<String>,
    /// The frame it is attributed to ([`attribution_frame`]), `file:line:name`, `<no stack>`, or
    /// `<allocated before the trace>`: never a free stack (issue 18), that one is [`Self::freed_at`].
    pub frame: String,
    /// For a block seen only at its free: the frame that freed it (`THPVariable_clear`, …).
    pub freed_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StackGroup {
    /// The frame the allocations are attributed to (`file:line:name`), see [`attribution_frame`].
    pub frame: String,
    pub allocs: u64,
    pub total_bytes: u64,
    pub live_at_peak_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OomEvent {
    pub index: usize,
    pub time_us: Option<i64>,
    pub requested_bytes: u64,
    pub device_free_bytes: u64,
    pub stream: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrivatePool {
    pub pool_id: (i64, i64),
    pub kind: super::snapshot_dump::PoolKind,
    pub segments: u64,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
}

/// One device's figures. The first fields are the JSON contract (docs/definitions.md), in its
/// order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceMemory {
    pub device: i64,
    pub segments: u64,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub active_bytes: u64,
    pub requested_bytes: u64,
    pub largest_free_block_bytes: u64,
    pub blocks: BTreeMap<String, u64>,
    pub trace_entries: u64,
    pub actions: BTreeMap<String, u64>,
    pub peak_active_bytes: u64,
    pub peak_reserved_bytes: u64,
    /// Trace index of the action that reached `peak_active_bytes` (`None`: no actions).
    pub peak_active_index: Option<usize>,
    pub peak_active_time_us: Option<i64>,
    pub fragmentation_bytes: u64,
    pub expandable_segments: u64,
    /// Bytes live before the trace began (memory_viz's "initially allocated").
    pub preexisting_bytes: u64,
    pub peak_blocks_count: u64,
    pub peak_blocks: Vec<PeakBlock>,
    pub by_stack: Vec<StackGroup>,
    pub ooms: Vec<OomEvent>,
    pub private_pools: Vec<PrivatePool>,
    /// The state at the dump: live blocks, every pool, bytes by `user_metadata`.
    pub dump: super::snapshot_dump::DumpState,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotSummary {
    pub kind: crate::ingest::snapshot::SnapshotKind,
    pub devices: Vec<DeviceMemory>,
}

pub use super::snapshot_replay::{replay, Element, Replay, ReplayBuild};

/// Group key of blocks whose allocation site the snapshot does not have.
const BEFORE_TRACE: u32 = u32::MAX;

/// Whether this trace's free entries carry the stack of the allocation they free rather than the
/// stack that freed it. torch records a free with `context ? context : block->context_when_allocated`
/// (`CUDACachingAllocator.cpp`, `free` and `free_block`): under
/// `_record_memory_history(context="alloc")` there is no free-time context, so every free repeats
/// its allocation's stack; under `"all"` (the default) the free stack differs from the allocation
/// stack (at least in its allocator frames). So: every alloc/free pair seen in the trace has the
/// same non-empty stack at both ends. Then a free whose alloc predates the trace names the
/// allocation site, and is attributed like any allocation.
pub fn frees_carry_alloc_stacks(t: &DeviceTrace, elements: &[Element]) -> bool {
    let mut pairs = 0u64;
    for e in elements {
        let (Some(_), Some(end)) = (e.start, e.end) else {
            continue;
        };
        if e.stack == 0 || t.stack.get(end) != Some(&e.stack) {
            return false;
        }
        pairs += 1;
    }
    pairs > 0
}

fn device_memory(s: &Snapshot, device: i64) -> DeviceMemory {
    device_memory_in(
        s,
        device,
        &replay(s, device, false),
        &replay(s, device, true),
    )
}

/// One device's figures from its allocation replay (`replay(s, device, false)`) and segment
/// replay (`replay(s, device, true)`), made once for the figures, the chart and the flame graph
/// (`report::snapshot_wire::SnapshotViews::of`).
pub fn device_memory_in(s: &Snapshot, device: i64, active: &Replay, segs: &Replay) -> DeviceMemory {
    let mut d = device_figures_in(s, device, active, segs);
    peak_tables(s, device, active, &mut d);
    d.dump = super::snapshot_dump::dump_state(s, device);
    d
}

/// [`device_memory_in`] without the tables (`peak_blocks`, `by_stack` empty; `dump` the default):
/// the figures the Memory tab's head shows above the chart, in a fraction of the time (the
/// tables name and rank every live block's stack: ~60 % of a 50 MB snapshot's views). The
/// snapshot worker sends these with the charts first (`report::snapshot_wire::SnapshotViews::first`).
pub fn device_figures_in(
    s: &Snapshot,
    device: i64,
    active: &Replay,
    segs: &Replay,
) -> DeviceMemory {
    let mut d = DeviceMemory {
        device,
        segments: 0,
        reserved_bytes: 0,
        allocated_bytes: 0,
        active_bytes: 0,
        requested_bytes: 0,
        largest_free_block_bytes: 0,
        blocks: BTreeMap::new(),
        trace_entries: 0,
        actions: BTreeMap::new(),
        peak_active_bytes: 0,
        peak_reserved_bytes: 0,
        peak_active_index: None,
        peak_active_time_us: None,
        fragmentation_bytes: 0,
        expandable_segments: 0,
        preexisting_bytes: 0,
        peak_blocks_count: 0,
        peak_blocks: Vec::new(),
        by_stack: Vec::new(),
        ooms: Vec::new(),
        private_pools: Vec::new(),
        dump: Default::default(),
    };
    let sg = &s.segments;
    let mut pools: BTreeMap<(i64, i64), PrivatePool> = BTreeMap::new();
    // Counted by interned id, named once at the end (not a `String` per block or entry).
    let mut block_states: FxHashMap<StrId, u64> = FxHashMap::default();
    for si in 0..sg.len() {
        if sg.device[si] != device {
            continue;
        }
        d.segments += 1;
        d.reserved_bytes = d.reserved_bytes.saturating_add(sg.total_size[si]);
        d.allocated_bytes = d.allocated_bytes.saturating_add(sg.allocated_size[si]);
        d.active_bytes = d.active_bytes.saturating_add(sg.active_size[si]);
        d.requested_bytes = d.requested_bytes.saturating_add(sg.requested_size[si]);
        d.expandable_segments += u64::from(sg.is_expandable[si]);
        if sg.pool_id[si] != (0, 0) {
            let p = pools.entry(sg.pool_id[si]).or_insert(PrivatePool {
                pool_id: sg.pool_id[si],
                kind: super::snapshot_dump::PoolKind::of(sg.pool_id[si]),
                segments: 0,
                reserved_bytes: 0,
                allocated_bytes: 0,
            });
            p.segments += 1;
            p.reserved_bytes = p.reserved_bytes.saturating_add(sg.total_size[si]);
            p.allocated_bytes = p.allocated_bytes.saturating_add(sg.allocated_size[si]);
        }
        for bi in sg.first_block[si] as usize..sg.first_block[si + 1] as usize {
            *block_states.entry(s.blocks.state[bi]).or_insert(0) += 1;
            if s.str(s.blocks.state[bi]) == "inactive" {
                d.largest_free_block_bytes = d.largest_free_block_bytes.max(s.blocks.size[bi]);
            }
        }
    }
    d.private_pools = pools.into_values().collect();
    for (state, n) in block_states {
        *d.blocks.entry(s.str(state).to_owned()).or_insert(0) += n;
    }
    d.fragmentation_bytes = d.reserved_bytes.saturating_sub(d.allocated_bytes);

    if let Some(t) = s.trace(device) {
        d.trace_entries = t.len() as u64;
        let mut actions: FxHashMap<StrId, u64> = FxHashMap::default();
        for i in 0..t.len() {
            *actions.entry(t.action_name[i]).or_insert(0) += 1;
            if t.action[i] == Action::Oom {
                d.ooms.push(OomEvent {
                    index: i,
                    time_us: t.time_us[i],
                    requested_bytes: t.size[i],
                    device_free_bytes: t.device_free[i],
                    stream: t.stream[i],
                });
            }
        }
        for (name, n) in actions {
            *d.actions.entry(s.str(name).to_owned()).or_insert(0) += n;
        }
    }

    d.peak_active_bytes = active.peak_bytes;
    d.preexisting_bytes = active.preexisting_bytes;
    if let Some(pos) = active.peak_pos {
        let (idx, _) = active.series[pos];
        d.peak_active_index = Some(idx);
        d.peak_active_time_us = s
            .trace(device)
            .and_then(|t| t.time_us.get(idx).copied().flatten());
        d.peak_blocks_count = live_at(s, device, active, idx).count() as u64;
    }
    d.peak_reserved_bytes = segs.peak_bytes;
    d
}

/// The blocks live after trace entry `idx`: started at or before it (or before the trace) and not
/// ended by then; every block when the device has no trace.
fn live_at<'a>(
    s: &Snapshot,
    device: i64,
    active: &'a Replay,
    idx: usize,
) -> impl Iterator<Item = &'a Element> {
    let all = s.trace(device).is_none_or(|t| t.is_empty());
    active
        .elements
        .iter()
        .filter(move |e| all || (e.start.is_none_or(|a| a <= idx) && e.end.is_none_or(|b| b > idx)))
}

/// The peak's tables of `d`: its largest live blocks and the stacks that hold the most.
fn peak_tables(s: &Snapshot, device: i64, active: &Replay, d: &mut DeviceMemory) {
    if let Some(idx) = d.peak_active_index {
        let mut live: Vec<&Element> = live_at(s, device, active, idx).collect();
        crate::sort::by(&mut live, |a, b| {
            b.size.cmp(&a.size).then(a.addr.cmp(&b.addr))
        });
        let mut ranks = FrameRanker::default();
        let frame_name = |f: Option<u32>| match f {
            Some(BEFORE_TRACE) => "<allocated before the trace>".to_owned(),
            Some(f) => frame_text(s, f),
            None => "<no stack>".into(),
        };
        // A block first seen at its free was allocated before the trace (or before what the ring
        // buffer kept): its stack says where it was freed (`THPVariable_clear`, a backward node's
        // `release_variables`), not who allocated it — unless the frees carry allocation stacks.
        let alloc_stacks = s
            .trace(device)
            .is_some_and(|t| frees_carry_alloc_stacks(t, &active.elements));
        let freed_only = |e: &Element| e.start.is_none() && e.end.is_some() && !alloc_stacks;
        d.peak_blocks = live
            .iter()
            .take(MAX_PEAK_BLOCKS)
            .map(|e| {
                let f = frame_name(attribution_frame(s, &mut ranks, e.stack));
                let freed = freed_only(e);
                PeakBlock {
                    addr: e.addr,
                    size: e.size,
                    alloc_index: e.start,
                    top_frames: if freed {
                        Vec::new()
                    } else {
                        top_frames(s, e.stack)
                    },
                    frame: if freed {
                        frame_name(Some(BEFORE_TRACE))
                    } else {
                        f.clone()
                    },
                    freed_at: freed.then_some(f),
                }
            })
            .collect();
        // Grouped by frame id (frames are unique by file, line and name, so ids and texts agree);
        // the text is built once per group.
        let mut groups: FxHashMap<Option<u32>, (u64, u64, u64)> = FxHashMap::default();
        let mut frame_of: FxHashMap<StackId, Option<u32>> = FxHashMap::default();
        for e in &active.elements {
            let frame = if freed_only(e) {
                Some(BEFORE_TRACE)
            } else {
                *frame_of
                    .entry(e.stack)
                    .or_insert_with(|| attribution_frame(s, &mut ranks, e.stack))
            };
            let g = groups.entry(frame).or_insert((0, 0, 0));
            g.0 += 1;
            g.1 = g.1.saturating_add(e.size);
            let live_at_peak = e.start.is_none_or(|a| a <= idx) && e.end.is_none_or(|b| b > idx);
            if live_at_peak {
                g.2 = g.2.saturating_add(e.size);
            }
        }
        // Sorted by the numbers first: the text only breaks ties, so only the groups up to and
        // tying with the last one kept are formatted (a synthetic dump has ~50k groups).
        let mut keyed: Vec<(Option<u32>, (u64, u64, u64))> = groups.into_iter().collect();
        let key = |g: &(Option<u32>, (u64, u64, u64))| (g.1 .2, g.1 .1);
        crate::sort::by_key(&mut keyed, |g| std::cmp::Reverse(key(g)));
        if let Some(cut) = keyed.get(MAX_GROUPS.saturating_sub(1)).map(key) {
            let end = keyed
                .iter()
                .skip(MAX_GROUPS)
                .position(|g| key(g) != cut)
                .map_or(keyed.len(), |p| p + MAX_GROUPS);
            keyed.truncate(end);
        }
        let mut groups: Vec<StackGroup> = keyed
            .into_iter()
            .map(
                |(f, (allocs, total_bytes, live_at_peak_bytes))| StackGroup {
                    frame: frame_name(f),
                    allocs,
                    total_bytes,
                    live_at_peak_bytes,
                },
            )
            .collect();
        crate::sort::by(&mut groups, |a, b| {
            b.live_at_peak_bytes
                .cmp(&a.live_at_peak_bytes)
                .then(b.total_bytes.cmp(&a.total_bytes))
                .then(a.frame.cmp(&b.frame))
        });
        groups.truncate(MAX_GROUPS);
        d.by_stack = groups;
    }
}

/// Every device's figures, ascending by device.
pub fn summarize(s: &Snapshot) -> SnapshotSummary {
    SnapshotSummary {
        kind: s.kind,
        devices: s
            .devices()
            .into_iter()
            .map(|d| device_memory(s, d))
            .collect(),
    }
}

/// One allocation's lifetime for a stacked chart, in trace-index space (`start` 0 / `end` = trace
/// length for ones that predate or outlive the trace).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Interval {
    pub start: usize,
    pub end: usize,
    pub size: u64,
    pub addr: u64,
    pub stack: StackId,
}

/// The active-memory timeline of one device, ready to draw.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ActiveTimeline {
    /// `(trace index, time_us if recorded, active bytes after the action)`; when there are more
    /// actions than `max_points`, each bucket keeps its maximum (peaks never vanish).
    pub points: Vec<(usize, Option<i64>, u64)>,
    /// The `max_intervals` largest allocations, as memory_viz draws its `max_entries` largest.
    pub intervals: Vec<Interval>,
    /// The rest, merged: how many and their summed size.
    pub summarized_count: u64,
    pub summarized_bytes: u64,
}

/// Active memory over the trace of `device`. Time is the entry's `time_us` where recorded, else the
/// entry index is the clock.
pub fn active_timeline(
    s: &Snapshot,
    device: i64,
    max_points: usize,
    max_intervals: usize,
) -> ActiveTimeline {
    let r = replay(s, device, false);
    let t = s.trace(device);
    let n = t.map_or(0, |t| t.len());
    let time = |i: usize| t.and_then(|t| t.time_us.get(i).copied().flatten());
    let max_points = max_points.max(1);
    let points = if r.series.len() <= max_points {
        r.series.iter().map(|&(i, b)| (i, time(i), b)).collect()
    } else {
        let per = r.series.len().div_ceil(max_points);
        r.series
            .chunks(per)
            .filter_map(|c| c.iter().max_by_key(|p| p.1).map(|&(i, b)| (i, time(i), b)))
            .collect()
    };
    let mut order: Vec<usize> = (0..r.elements.len()).collect();
    crate::sort::by(&mut order, |&a, &b| {
        r.elements[b].size.cmp(&r.elements[a].size).then(a.cmp(&b))
    });
    let mut intervals = Vec::new();
    let (mut summarized_count, mut summarized_bytes) = (0u64, 0u64);
    for (k, &e) in order.iter().enumerate() {
        let el = &r.elements[e];
        if k < max_intervals {
            intervals.push(Interval {
                start: el.start.unwrap_or(0),
                end: el.end.unwrap_or(n),
                size: el.size,
                addr: el.addr,
                stack: el.stack,
            });
        } else {
            summarized_count += 1;
            summarized_bytes = summarized_bytes.saturating_add(el.size);
        }
    }
    crate::sort::by_key(&mut intervals, |i| (i.start, i.addr));
    ActiveTimeline {
        points,
        intervals,
        summarized_count,
        summarized_bytes,
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::snapshot_frames::short_symbol;

    #[test]
    fn cpp_symbols_lose_their_parameters_and_template_arguments() {
        for (full, short) in [
            (
                "torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)",
                "torch::autograd::generated::BmmBackward0::apply",
            ),
            (
                "at::native::(anonymous namespace)::mm_out(at::Tensor const&)",
                "at::native::(anonymous namespace)::mm_out",
            ),
            (
                "c10::function_ref<void (char**)>::callback_fn<at::{lambda(at::Tensor&)#1}>(long, char**)",
                "c10::function_ref<…>::callback_fn<…>",
            ),
            (
                "void torch::autograd::AccumulateGrad::accumulateGrad<torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)::{lambda(at::Tensor&&)#1}>(at::Tensor const&, at::Tensor&)",
                "void torch::autograd::AccumulateGrad::accumulateGrad<…>",
            ),
            ("??", "??"),
            ("(anonymous)", "(anonymous)"),
        ] {
            assert_eq!(short_symbol(full), short);
        }
    }
}
