//! CUDA caching-allocator memory snapshots: the pickle `torch.cuda.memory._dump_snapshot()` writes.
//!
//! Format (torch `torch/cuda/memory.py::_snapshot` docstring; what real 2023–2026 dumps hold): a dict
//! with `segments` (each: `device`, `address`, `total_size`, `allocated_size`, `active_size`,
//! `requested_size`, `stream`, `segment_type`, `segment_pool_id`, `is_expandable`, `frames`, `blocks[]`
//! of `address`, `size`, `requested_size`, `state`, `frames`), `device_traces` (one list per device of
//! entries with `action`, `addr`, `size`, `stream`, `time_us`, `frames`, and `device_free` on `oom`),
//! and optionally `allocator_settings` and `external_annotations`, which are kept raw as JSON.
//!
//! Supported variants: with or without `device_traces`, empty per-device traces, several devices,
//! C++ frames (`filename` `"??"`; `stacks="python"` dumps have none), `user_metadata` on trace entries,
//! no `time_us` (2024 dumps: the entry index is the clock), ring-buffer
//! traces (frees of allocations the trace never saw), torch 1.13's bare list of segments, and the dict
//! memory_viz's `profile_plot` builds from a profile ([`SnapshotKind::ProfilePlot`]: blocks without
//! `address`, segments without the size totals — addresses are laid out the way `MemoryViz.js`
//! `annotate_snapshot` does and the totals recomputed from the blocks, with a warning).
//!
//! Frames are interned once and stacks (frame-id lists) once, so the hundreds of thousands of repeated
//! frames in a real dump cost a `u32` each.

mod read;
pub mod stream;
pub mod wire;
pub use read::from_pickle;
pub use stream::{parse_streamed, SnapshotStream};

use super::pickle;
use crate::error::{Error, ErrorKind, Result};
use crate::model::{Interner, StrId};
use crate::warnings::{WarningKind, Warnings};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Index into [`Stacks`]; 0 is the empty stack.
pub type StackId = u32;

/// Unique frames, columnar.
#[derive(Debug, Clone, Default)]
pub struct Frames {
    pub filename: Vec<StrId>,
    pub line: Vec<i64>,
    pub name: Vec<StrId>,
}

/// Unique stacks: stack `k` is `frames[start[k]..start[k + 1]]`, innermost (allocation site) first,
/// as torch records them.
#[derive(Debug, Clone)]
pub struct Stacks {
    pub start: Vec<u32>,
    pub frames: Vec<u32>,
}

impl Default for Stacks {
    fn default() -> Self {
        Stacks {
            start: vec![0, 0],
            frames: Vec::new(),
        }
    }
}

impl Stacks {
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, id: StackId) -> &[u32] {
        let i = id as usize;
        match (self.start.get(i), self.start.get(i + 1)) {
            (Some(&a), Some(&b)) => self.frames.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// Allocator segments (one `cudaMalloc` each, or one expandable range), columnar.
#[derive(Debug, Clone, Default)]
pub struct Segments {
    pub device: Vec<i64>,
    pub address: Vec<u64>,
    pub total_size: Vec<u64>,
    pub allocated_size: Vec<u64>,
    pub active_size: Vec<u64>,
    pub requested_size: Vec<u64>,
    pub stream: Vec<u64>,
    pub segment_type: Vec<StrId>,
    /// `segment_pool_id`: `(0, 0)` is the default pool; anything else a private pool (CUDA graphs,
    /// `torch.cuda.MemPool`).
    pub pool_id: Vec<(i64, i64)>,
    pub is_expandable: Vec<bool>,
    pub stack: Vec<StackId>,
    /// Blocks of segment `s` are `first_block[s]..first_block[s + 1]` (length = segments + 1).
    pub first_block: Vec<u32>,
}

impl Segments {
    pub fn len(&self) -> usize {
        self.device.len()
    }

    pub fn is_empty(&self) -> bool {
        self.device.is_empty()
    }
}

/// Blocks inside segments, columnar.
#[derive(Debug, Clone, Default)]
pub struct Blocks {
    pub segment: Vec<u32>,
    pub address: Vec<u64>,
    pub size: Vec<u64>,
    pub requested_size: Vec<u64>,
    /// `active_allocated`, `active_awaiting_free` (older: `active_pending_free`), `inactive`.
    pub state: Vec<StrId>,
    pub stack: Vec<StackId>,
}

impl Blocks {
    pub fn len(&self) -> usize {
        self.segment.len()
    }

    pub fn is_empty(&self) -> bool {
        self.segment.is_empty()
    }
}

/// What a trace entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Alloc,
    /// Older dumps, and memory_viz's merged `free_requested` + `free_completed`.
    Free,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Snapshot,
    Oom,
    Annotate,
    Other,
}

impl Action {
    pub fn parse(s: &str) -> Action {
        match s {
            "alloc" => Action::Alloc,
            "free" => Action::Free,
            "free_requested" => Action::FreeRequested,
            "free_completed" => Action::FreeCompleted,
            "segment_alloc" => Action::SegmentAlloc,
            "segment_free" => Action::SegmentFree,
            "segment_map" => Action::SegmentMap,
            "segment_unmap" => Action::SegmentUnmap,
            "snapshot" => Action::Snapshot,
            "oom" => Action::Oom,
            "annotate" => Action::Annotate,
            _ => Action::Other,
        }
    }
}

/// One device's `device_traces` list, columnar, in recorded order.
#[derive(Debug, Clone, Default)]
pub struct DeviceTrace {
    /// The raw action name (kept so unknown actions are still counted by name).
    pub action_name: Vec<StrId>,
    pub action: Vec<Action>,
    /// 0 where the entry has none (`oom`).
    pub addr: Vec<u64>,
    pub size: Vec<u64>,
    pub stream: Vec<u64>,
    /// Absent in some dumps (2024); then the entry index is the only clock.
    pub time_us: Vec<Option<i64>>,
    pub stack: Vec<StackId>,
    /// `device_free` of `oom` entries (bytes CUDA reported free), else 0.
    pub device_free: Vec<u64>,
    /// `category` of memory_viz `profile_plot` entries (empty string id when absent).
    pub category: Vec<StrId>,
    /// `user_metadata`: the calling thread's `torch.cuda.memory._set_memory_metadata` string when
    /// the entry was recorded, or the annotation of an `annotate` entry (empty string id when
    /// absent). torch records it on trace entries only, never on blocks: a block's metadata is its
    /// allocation's (`analysis::snapshot_blocks`).
    pub user_metadata: Vec<StrId>,
}

impl DeviceTrace {
    pub fn len(&self) -> usize {
        self.action.len()
    }

    pub fn is_empty(&self) -> bool {
        self.action.is_empty()
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotKind {
    /// `torch.cuda.memory._dump_snapshot` (the caching allocator's own state).
    #[default]
    Allocator,
    /// memory_viz `_profile_to_snapshot` output (built from a profile, not the allocator).
    ProfilePlot,
}

/// A decoded memory snapshot (the default: an allocator snapshot with nothing in it).
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub kind: SnapshotKind,
    pub strings: Interner,
    pub frames: Frames,
    pub stacks: Stacks,
    pub segments: Segments,
    pub blocks: Blocks,
    /// `device_traces[d]` is device `d`'s trace; empty when history was never recorded.
    pub device_traces: Vec<DeviceTrace>,
    pub allocator_settings: Option<serde_json::Value>,
    pub external_annotations: Option<serde_json::Value>,
    pub warnings: Warnings,
}

impl Snapshot {
    pub fn str(&self, id: StrId) -> &str {
        self.strings.resolve(id)
    }

    /// Records read: segments plus trace entries (the CLI's `events`).
    pub fn records(&self) -> u64 {
        self.segments.len() as u64
            + self
                .device_traces
                .iter()
                .map(|t| t.len() as u64)
                .sum::<u64>()
    }

    /// Every device with segments or a trace slot, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut d: Vec<i64> = (0..self.device_traces.len() as i64).collect();
        d.extend(self.segments.device.iter().copied());
        d.sort_unstable();
        d.dedup();
        d
    }

    /// Whether any device recorded history. Without (`include_traces=False`, history never
    /// enabled) the snapshot is its segments alone: state at the dump, no timeline to draw.
    pub fn has_trace_entries(&self) -> bool {
        self.device_traces.iter().any(|t| !t.is_empty())
    }

    pub fn trace(&self, device: i64) -> Option<&DeviceTrace> {
        usize::try_from(device)
            .ok()
            .and_then(|d| self.device_traces.get(d))
    }
}

/// Decodes snapshot bytes (an uncompressed pickle).
pub fn parse(bytes: &[u8]) -> Result<Snapshot> {
    let p = pickle::decode(bytes)?;
    from_pickle(&p)
}
