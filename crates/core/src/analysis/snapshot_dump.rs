//! What a snapshot holds at the moment it was dumped, without its history: the blocks live then
//! (with their allocation stacks, pools and `user_metadata`), the totals per pool (the default
//! pool, CUDA-graph pools and `torch.cuda.MemPool`s as rows of their own), and the live bytes
//! grouped by metadata. The snapshot diff ([`super::snapshot_diff`]) and a run's OOM dumps
//! ([`super::snapshot_ranks`]) read it; it needs no trace entries, so a segments-only snapshot
//! (`include_traces=False`, history never enabled) gives all of it.
//!
//! Definitions (docs/definitions.md, `.snapshot.devices[].dump`):
//! - a **live block** is a block in state `active_allocated` (its `size` bytes; the sum over a
//!   device is the allocator's `allocated_size` total);
//! - a block's stack is its own `frames`, or where the dump has none, the stack of the trace's
//!   `alloc` entry it came from;
//! - a block's **`user_metadata`** is that of the trace's last `alloc` entry at the block's
//!   address not freed since (torch records metadata on trace entries only: the calling thread's
//!   `_set_memory_metadata` string when the allocation happened); its **annotations** are the
//!   `user_metadata` of later `annotate` entries at that address (`_annotate_tensor`). Without
//!   trace entries both are empty;
//! - a **pool** is the segments sharing a `segment_pool_id`: `(0, 0)` the default pool, `(n, 0)`
//!   a pool a CUDA graph created for itself (captured without `pool=`), `(0, n)` one the user
//!   created (`torch.cuda.MemPool()`, `graph_pool_handle()`): c10's `generate_mempool_id`.

use super::snapshot_frames::{attribution_frame, frame_text, top_frames, FrameRanker};
use crate::ingest::snapshot::{Action, Snapshot, StackId};
use crate::model::StrId;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// At most this many live blocks are listed, largest first (the count says how many there were).
pub const MAX_LIVE_BLOCKS: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolKind {
    Default,
    /// A pool a CUDA graph capture created for itself: id `(n, 0)`.
    CudaGraph,
    /// A user-created pool: `torch.cuda.MemPool()` or `graph_pool_handle()`, id `(0, n)`.
    MemPool,
}

impl PoolKind {
    pub fn of(id: (i64, i64)) -> PoolKind {
        match id {
            (0, 0) => PoolKind::Default,
            (_, 0) => PoolKind::CudaGraph,
            _ => PoolKind::MemPool,
        }
    }
}

/// A pool's name as the page and the CLI show it.
pub fn pool_name(id: (i64, i64)) -> String {
    match PoolKind::of(id) {
        PoolKind::Default => "default pool".into(),
        PoolKind::CudaGraph => format!("CUDA graph pool {}", id.0),
        PoolKind::MemPool => format!("MemPool ({}, {})", id.0, id.1),
    }
}

/// One block live at the dump, by ids (named by [`LiveBlockRow`] for reports).
#[derive(Debug, Clone)]
pub struct LiveBlock {
    pub segment: u32,
    pub addr: u64,
    pub size: u64,
    pub requested_size: u64,
    pub stack: StackId,
    pub user_metadata: StrId,
    /// `annotate` entries' metadata at its address after its allocation, in trace order.
    pub annotations: Vec<StrId>,
}

/// The blocks of `device` live at the dump, in segment and address order.
pub fn live_blocks(s: &Snapshot, device: i64) -> Vec<LiveBlock> {
    // By address, from the trace: the last alloc not freed since (its metadata and stack), and
    // its annotations.
    let mut meta: FxHashMap<u64, (StrId, Vec<StrId>, StackId)> = FxHashMap::default();
    if let Some(t) = s.trace(device) {
        for i in 0..t.len() {
            match t.action[i] {
                Action::Alloc => {
                    meta.insert(t.addr[i], (t.user_metadata[i], Vec::new(), t.stack[i]));
                }
                Action::Free | Action::FreeCompleted => {
                    meta.remove(&t.addr[i]);
                }
                Action::Annotate => meta
                    .entry(t.addr[i])
                    .or_insert((StrId::EMPTY, Vec::new(), 0))
                    .1
                    .push(t.user_metadata[i]),
                _ => {}
            }
        }
    }
    let sg = &s.segments;
    let mut out = Vec::new();
    for si in 0..sg.len() {
        if sg.device[si] != device {
            continue;
        }
        for bi in sg.first_block[si] as usize..sg.first_block[si + 1] as usize {
            if s.str(s.blocks.state[bi]) != "active_allocated" {
                continue;
            }
            let addr = s.blocks.address[bi];
            let (user_metadata, annotations, alloc_stack) =
                meta.remove(&addr).unwrap_or((StrId::EMPTY, Vec::new(), 0));
            // A block dumped without frames keeps its allocation's stack from the trace.
            let stack = match s.blocks.stack[bi] {
                0 => alloc_stack,
                st => st,
            };
            out.push(LiveBlock {
                segment: si as u32,
                addr,
                size: s.blocks.size[bi],
                requested_size: s.blocks.requested_size[bi],
                stack,
                user_metadata,
                annotations,
            });
        }
    }
    out
}

/// A live block named for reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LiveBlockRow {
    pub addr: u64,
    pub size: u64,
    pub requested_size: u64,
    pub pool: String,
    /// The frame it is attributed to (`snapshot_frames::attribution_frame`), or `<no stack>`.
    pub frame: String,
    pub top_frames: Vec<String>,
    pub user_metadata: String,
    pub annotations: Vec<String>,
}

impl LiveBlockRow {
    pub fn of(s: &Snapshot, ranks: &mut FrameRanker, b: &LiveBlock) -> LiveBlockRow {
        LiveBlockRow {
            addr: b.addr,
            size: b.size,
            requested_size: b.requested_size,
            pool: pool_name(s.segments.pool_id[b.segment as usize]),
            frame: frame_of(s, ranks, b.stack),
            top_frames: top_frames(s, b.stack),
            user_metadata: s.str(b.user_metadata).to_owned(),
            annotations: b.annotations.iter().map(|&a| s.str(a).to_owned()).collect(),
        }
    }
}

/// The attributed frame's text, or `<no stack>`.
pub fn frame_of(s: &Snapshot, ranks: &mut FrameRanker, stack: StackId) -> String {
    attribution_frame(s, ranks, stack).map_or_else(|| "<no stack>".into(), |f| frame_text(s, f))
}

/// One pool's totals on a device.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PoolRow {
    pub pool_id: (i64, i64),
    pub kind: PoolKind,
    pub name: String,
    pub segments: u64,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub live_blocks: u64,
}

/// Live bytes sharing one `user_metadata` string (`""`: none recorded).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetadataGroup {
    pub user_metadata: String,
    pub blocks: u64,
    pub bytes: u64,
}

/// One device at the dump (the default: not computed, as in a snapshot worker's first figures).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DumpState {
    /// Whether the device's trace has entries: without, there is no timeline, only this state.
    pub has_trace: bool,
    pub live_blocks: u64,
    pub live_bytes: u64,
    /// Every pool, by id (the default `(0, 0)` first).
    pub pools: Vec<PoolRow>,
    /// Largest bytes first.
    pub by_metadata: Vec<MetadataGroup>,
    /// The [`MAX_LIVE_BLOCKS`] largest live blocks.
    pub largest_blocks: Vec<LiveBlockRow>,
}

/// [`DumpState`] of `device`.
pub fn dump_state(s: &Snapshot, device: i64) -> DumpState {
    let blocks = live_blocks(s, device);
    let sg = &s.segments;
    let mut pools: std::collections::BTreeMap<(i64, i64), PoolRow> = Default::default();
    let mut pool_of_seg: FxHashMap<u32, (i64, i64)> = FxHashMap::default();
    for si in 0..sg.len() {
        if sg.device[si] != device {
            continue;
        }
        let id = sg.pool_id[si];
        pool_of_seg.insert(si as u32, id);
        let p = pools.entry(id).or_insert_with(|| PoolRow {
            pool_id: id,
            kind: PoolKind::of(id),
            name: pool_name(id),
            segments: 0,
            reserved_bytes: 0,
            allocated_bytes: 0,
            live_blocks: 0,
        });
        p.segments += 1;
        p.reserved_bytes = p.reserved_bytes.saturating_add(sg.total_size[si]);
        p.allocated_bytes = p.allocated_bytes.saturating_add(sg.allocated_size[si]);
    }
    let mut by_meta: FxHashMap<StrId, (u64, u64)> = FxHashMap::default();
    let mut live_bytes = 0u64;
    for b in &blocks {
        live_bytes = live_bytes.saturating_add(b.size);
        if let Some(p) = pool_of_seg.get(&b.segment).and_then(|k| pools.get_mut(k)) {
            p.live_blocks += 1;
        }
        let g = by_meta.entry(b.user_metadata).or_insert((0, 0));
        g.0 += 1;
        g.1 = g.1.saturating_add(b.size);
    }
    let mut by_metadata: Vec<MetadataGroup> = by_meta
        .into_iter()
        .map(|(m, (n, bytes))| MetadataGroup {
            user_metadata: s.str(m).to_owned(),
            blocks: n,
            bytes,
        })
        .collect();
    crate::sort::by(&mut by_metadata, |a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then(a.user_metadata.cmp(&b.user_metadata))
    });
    let mut order: Vec<&LiveBlock> = blocks.iter().collect();
    crate::sort::by(&mut order, |a, b| {
        b.size.cmp(&a.size).then(a.addr.cmp(&b.addr))
    });
    let mut ranks = FrameRanker::default();
    DumpState {
        has_trace: s.trace(device).is_some_and(|t| !t.is_empty()),
        live_blocks: blocks.len() as u64,
        live_bytes,
        pools: pools.into_values().collect(),
        by_metadata,
        largest_blocks: order
            .into_iter()
            .take(MAX_LIVE_BLOCKS)
            .map(|b| LiveBlockRow::of(s, &mut ranks, b))
            .collect(),
    }
}
