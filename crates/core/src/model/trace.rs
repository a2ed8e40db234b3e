//! What a loaded Kineto trace is, as tables.
//!
//! Slices are sorted by (track, start, longest first) after loading, so a track's slices are one
//! contiguous range and a parent always precedes its children. GPU-only details (grid, registers…)
//! live in a sparse side table keyed by slice index, so CPU-heavy traces do not pay for them.

use super::arg_keys::text as k;
use super::args::ArgsArena;
use super::ids::Ids;
use super::strings::{Interner, StrId};
use super::time::Ns;
use crate::warnings::Warnings;
use serde::Serialize;

/// A `pid`/`tid` as written: Kineto uses integers, older traces strings such as `"stream 7"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdVal {
    Int(i64),
    Str(StrId),
}

/// No parent / no link.
pub const NONE: u32 = u32::MAX;
pub use super::ids::NO_ID;

/// What a slice is, from its category (old and new spellings both map here).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum SliceKind {
    CpuOp,
    UserAnnotation,
    PythonFunction,
    Runtime,
    Driver,
    Kernel,
    Memcpy,
    Memset,
    GpuAnnotation,
    Other,
}

impl SliceKind {
    /// Maps a `cat` value. Case-insensitive; unknown categories are `Other`, never an error.
    pub fn from_cat(cat: &str) -> SliceKind {
        let lower = |s: &str| cat.eq_ignore_ascii_case(s);
        if lower("cpu_op") || lower("operator") {
            SliceKind::CpuOp
        } else if lower("user_annotation") {
            SliceKind::UserAnnotation
        } else if lower("python_function") {
            SliceKind::PythonFunction
        } else if lower("cuda_runtime")
            || lower("runtime")
            || lower("mtia_runtime")
            || lower("cuda_sync")
        {
            SliceKind::Runtime
        } else if lower("cuda_driver") {
            SliceKind::Driver
        } else if lower("kernel") || lower("mtia_ccp_events") {
            SliceKind::Kernel
        } else if lower("gpu_memcpy") || lower("memcpy") {
            SliceKind::Memcpy
        } else if lower("gpu_memset") || lower("memset") {
            SliceKind::Memset
        } else if lower("gpu_user_annotation") {
            SliceKind::GpuAnnotation
        } else {
            SliceKind::Other
        }
    }

    /// Work that runs on the device (kernels and copies/sets), the input of every GPU analysis.
    pub fn is_gpu_work(self) -> bool {
        matches!(
            self,
            SliceKind::Kernel | SliceKind::Memcpy | SliceKind::Memset
        )
    }

    pub fn is_launch(self) -> bool {
        matches!(self, SliceKind::Runtime | SliceKind::Driver)
    }

    pub fn label(self) -> &'static str {
        match self {
            SliceKind::CpuOp => "cpu_op",
            SliceKind::UserAnnotation => "user_annotation",
            SliceKind::PythonFunction => "python_function",
            SliceKind::Runtime => "runtime",
            SliceKind::Driver => "driver",
            SliceKind::Kernel => "kernel",
            SliceKind::Memcpy => "memcpy",
            SliceKind::Memset => "memset",
            SliceKind::GpuAnnotation => "gpu_user_annotation",
            SliceKind::Other => "other",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrackKind {
    /// A host thread.
    Cpu,
    /// A device stream (kernels, copies).
    Gpu,
}

#[derive(Debug, Clone)]
pub struct Process {
    pub pid: IdVal,
    pub name: StrId,
    pub labels: StrId,
    pub sort_index: Option<i64>,
}

#[derive(Debug, Clone)]
pub struct Track {
    pub pid: IdVal,
    pub tid: IdVal,
    /// `thread_name` metadata, else a name made from the ids.
    pub name: StrId,
    pub sort_index: Option<i64>,
    pub kind: TrackKind,
    /// Device index for GPU tracks (the `device` arg, else the pid).
    pub device: Option<i64>,
    /// Stream for GPU tracks (the `stream` arg, else the tid).
    pub stream: Option<i64>,
    /// This track's slices: `slices[first..first + count]`.
    pub first: u32,
    pub count: u32,
    pub max_depth: u16,
}

/// All duration events, one row each.
#[derive(Debug, Clone, Default)]
pub struct Slices {
    pub start: Vec<Ns>,
    pub dur: Vec<Ns>,
    pub track: Vec<u32>,
    pub name: Vec<StrId>,
    pub cat: Vec<StrId>,
    pub kind: Vec<SliceKind>,
    pub depth: Vec<u16>,
    /// Enclosing slice on the same track, or [`NONE`].
    pub parent: Vec<u32>,
    pub external_id: Ids,
    pub correlation: Ids,
    /// `Record function id`, for linking Chakra execution-trace nodes.
    pub rf_id: Ids,
    /// `Input Dims` as compact JSON text, interned (ops with the same shapes share one id).
    pub input_dims: Vec<StrId>,
    /// `Input type` as compact JSON text, interned.
    pub input_types: Vec<StrId>,
    /// Offset/length of the compact args JSON in [`Trace::args`]; length 0 = no args.
    pub args: Vec<(u32, u32)>,
}

impl Slices {
    pub fn len(&self) -> usize {
        self.start.len()
    }
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }
    pub fn end(&self, i: usize) -> Ns {
        self.start[i].saturating_add(self.dur[i])
    }
}

/// Device-side details of kernels/memcpy/memset, sparse: one row per GPU slice, sorted by `slice`.
#[derive(Debug, Clone, Default)]
pub struct GpuDetails {
    pub slice: Vec<u32>,
    pub device: Vec<i32>,
    pub stream: Vec<i32>,
    pub grid: Vec<[u32; 3]>,
    pub block: Vec<[u32; 3]>,
    pub registers: Vec<u32>,
    pub shared_memory: Vec<u32>,
    pub blocks_per_sm: Vec<f32>,
    pub warps_per_sm: Vec<f32>,
    pub occupancy_pct: Vec<f32>,
    pub bytes: Vec<u64>,
    pub bandwidth_gbs: Vec<f32>,
    /// The runtime/driver call that launched it, or [`NONE`].
    pub launch: Vec<u32>,
}

impl GpuDetails {
    /// Row of a GPU slice, by binary search.
    pub fn row(&self, slice: u32) -> Option<usize> {
        self.slice.binary_search(&slice).ok()
    }
}

/// `flops` written into the trace by old torch versions, sparse and sorted by slice.
#[derive(Debug, Clone, Default)]
pub struct SliceFlops {
    pub slice: Vec<u32>,
    pub flops: Vec<f64>,
}

/// Instant events other than `[memory]`.
#[derive(Debug, Clone, Default)]
pub struct Instants {
    pub ts: Vec<Ns>,
    pub track: Vec<u32>,
    pub name: Vec<StrId>,
    pub cat: Vec<StrId>,
    pub args: Vec<(u32, u32)>,
}

/// `[memory]` instant events (profile_memory=True): one row per allocation or free.
#[derive(Debug, Clone, Default)]
pub struct MemoryEvents {
    pub ts: Vec<Ns>,
    pub track: Vec<u32>,
    /// Kineto device type: 0 = CPU, 1 = CUDA (others for other backends).
    pub device_type: Vec<i16>,
    pub device_id: Vec<i16>,
    pub addr: Vec<u64>,
    /// Positive for allocations, negative for frees.
    pub bytes: Vec<i64>,
    pub total_allocated: Vec<i64>,
    pub total_reserved: Vec<i64>,
}

/// Counter (`ph: C`) samples; `series` indexes [`Counters::series_name`].
#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub series_name: Vec<StrId>,
    pub series_pid: Vec<IdVal>,
    pub series: Vec<u32>,
    pub ts: Vec<Ns>,
    pub value: Vec<f64>,
}

/// Flow arrows resolved to the slices they join.
#[derive(Debug, Clone, Default)]
pub struct Flows {
    pub cat: Vec<StrId>,
    pub from: Vec<u32>,
    pub to: Vec<u32>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct DeviceProps {
    pub id: i64,
    pub name: String,
    pub total_global_mem: u64,
    pub compute_major: i64,
    pub compute_minor: i64,
    pub num_sms: i64,
    pub max_threads_per_sm: i64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct DistributedInfo {
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub backend: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TraceMeta {
    pub schema_version: Option<i64>,
    pub trace_name: Option<String>,
    pub display_time_unit: Option<String>,
    pub base_time_ns: Option<i64>,
    pub devices: Vec<DeviceProps>,
    pub distributed: Option<DistributedInfo>,
    /// The file was a bare array of events (Chrome "array format").
    pub bare_array: bool,
}

/// One loaded Kineto trace.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub strings: Interner,
    pub meta: TraceMeta,
    pub processes: Vec<Process>,
    pub tracks: Vec<Track>,
    pub slices: Slices,
    pub gpu: GpuDetails,
    pub flops: SliceFlops,
    pub instants: Instants,
    pub memory: MemoryEvents,
    pub counters: Counters,
    pub flows: Flows,
    /// Compact JSON text of every kept `args` object.
    pub args: ArgsArena,
    pub warnings: Warnings,
    /// Entries of `traceEvents` read (the CLI contract's `events`).
    pub event_count: u64,
    /// Decoded bytes read.
    pub bytes_read: u64,
    /// How this trace's steps are named ([`Trace::step_rule`]), decided on first use.
    step_rule: std::sync::OnceLock<super::steps::StepRule>,
}

impl Trace {
    pub fn str(&self, id: StrId) -> &str {
        self.strings.resolve(id)
    }

    /// How this trace's steps are named (`model::steps`: `ProfilerStep#N`, else a numbered
    /// loop annotation such as `train_step_N`), decided once from its host annotations. Build
    /// the trace fully before the first call: the answer is kept.
    pub fn step_rule(&self) -> &super::steps::StepRule {
        self.step_rule
            .get_or_init(|| super::steps::StepRule::of(self))
    }

    /// The step number of a slice named `name`, if that name is one of this trace's steps.
    pub fn step_number(&self, name: StrId) -> Option<i64> {
        self.step_rule().number(self.str(name))
    }

    /// Whether a slice named `name` is one of this trace's steps ([`Trace::step_rule`]).
    pub fn is_step(&self, name: StrId) -> bool {
        self.step_number(name).is_some()
    }

    /// `f` of every slice's name, evaluated once per distinct name: name tests (`contains` on
    /// 200-character kernel names) were a tenth of the analyses' time when run per slice.
    pub fn slice_name_test(&self, f: impl Fn(&str) -> bool) -> Vec<bool> {
        let mut memo: Vec<Option<bool>> = vec![None; self.strings.len()];
        self.slices
            .name
            .iter()
            .map(|&id| match memo.get_mut(id.0 as usize) {
                Some(Some(v)) => *v,
                Some(slot) => *slot.insert(f(self.str(id))),
                None => f(self.str(id)),
            })
            .collect()
    }

    /// The args of slice `i` as compact JSON text (`{}` when it had none): the typed values kept
    /// in columns (ids, shapes, kernel launch parameters) first, then the rest as stored.
    pub fn slice_args(&self, i: usize) -> String {
        use std::fmt::Write;
        let s = &self.slices;
        let mut out = String::from("{");
        let sep = |out: &mut String| {
            if out.len() > 1 {
                out.push(',');
            }
        };
        for (key, v) in [
            (k::EXTERNAL_ID, s.external_id.get(i)),
            (k::RECORD_FUNCTION_ID, s.rf_id.get(i)),
            (k::CORRELATION, s.correlation.get(i)),
        ] {
            if v != NO_ID {
                sep(&mut out);
                let _ = write!(out, "\"{key}\":{v}");
            }
        }
        for (key, v) in [
            (k::INPUT_DIMS, s.input_dims[i]),
            (k::INPUT_TYPE, s.input_types[i]),
        ] {
            if v != StrId::EMPTY {
                sep(&mut out);
                let _ = write!(out, "\"{key}\":{}", self.str(v));
            }
        }
        if let Some(r) = self.gpu.row(i as u32) {
            let g = &self.gpu;
            for (key, v) in [(k::DEVICE, g.device[r]), (k::STREAM, g.stream[r])] {
                if v >= 0 {
                    sep(&mut out);
                    let _ = write!(out, "\"{key}\":{v}");
                }
            }
            match s.kind[i] {
                SliceKind::Kernel => {
                    let [a, b, c] = g.grid[r];
                    let [x, y, z] = g.block[r];
                    sep(&mut out);
                    let _ = write!(
                        out,
                        "\"{}\":[{a},{b},{c}],\"{}\":[{x},{y},{z}],\"{}\":{},\"{}\":{}",
                        k::GRID,
                        k::BLOCK,
                        k::REGISTERS,
                        g.registers[r],
                        k::SHARED_MEMORY,
                        g.shared_memory[r]
                    );
                    for (key, v) in [
                        (k::BLOCKS_PER_SM, g.blocks_per_sm[r]),
                        (k::WARPS_PER_SM, g.warps_per_sm[r]),
                        (k::OCCUPANCY, g.occupancy_pct[r]),
                    ] {
                        if v.is_finite() {
                            let _ = write!(out, ",\"{key}\":{v}");
                        }
                    }
                }
                SliceKind::Memcpy | SliceKind::Memset => {
                    sep(&mut out);
                    let _ = write!(out, "\"{}\":{}", k::BYTES, g.bytes[r]);
                    if g.bandwidth_gbs[r].is_finite() {
                        let _ = write!(out, ",\"{}\":{}", k::BANDWIDTH, g.bandwidth_gbs[r]);
                    }
                }
                _ => {}
            }
        }
        let rest = self.slice_args_stored(i);
        let inner = rest
            .strip_prefix('{')
            .and_then(|r| r.strip_suffix('}'))
            .unwrap_or("");
        if !inner.is_empty() {
            sep(&mut out);
            out.push_str(inner);
        }
        out.push('}');
        out
    }

    /// The args of slice `i` that have no column, as stored (`{}` when none).
    pub fn slice_args_stored(&self, i: usize) -> std::borrow::Cow<'_, str> {
        self.args_text(self.slices.args[i])
    }

    /// Where slice `i`'s whole args object lies in the stream it was read from, `(offset,
    /// length)`, when the reader left some of its keys there
    /// ([`crate::ingest::kineto::KinetoReader::leave_args_in_file`]); [`Trace::slice_args`] then
    /// has only the others.
    pub fn slice_args_in_file(&self, i: usize) -> Option<(u64, u32)> {
        let r = *self.slices.args.get(i)?;
        if r.1 == 0 {
            return None;
        }
        self.args.file_span(r)
    }

    /// An integer arg of slice `i` that has no column (`Sequence number`, `Python id`…).
    pub fn slice_arg_int(&self, i: usize, key: &str) -> Option<i64> {
        let r = *self.slices.args.get(i)?;
        if r.1 == 0 {
            return None;
        }
        self.args.int_value(r, key)
    }

    /// A string arg of slice `i` that has no column (`CallFrom`), unescaped text only.
    pub fn slice_arg_str(&self, i: usize, key: &str) -> Option<&str> {
        let r = *self.slices.args.get(i)?;
        if r.1 == 0 {
            return None;
        }
        self.args.str_value(r, key)
    }

    pub fn args_text(&self, r: (u32, u32)) -> std::borrow::Cow<'_, str> {
        if r.1 == 0 {
            return "{}".into();
        }
        self.args.text(r).unwrap_or_else(|| "{}".into())
    }

    /// First and last instant covered by any slice, instant, memory event or counter.
    pub fn time_bounds(&self) -> Option<(Ns, Ns)> {
        let b = self.point_bounds();
        Trace::bounds_with(b, self.slice_bounds(0..self.slices.len()))
    }

    /// [`Trace::time_bounds`] of the slices in `rows` alone (the page takes a big trace's in
    /// parts, a task each).
    pub fn slice_bounds(&self, rows: std::ops::Range<usize>) -> Option<(Ns, Ns)> {
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        for i in rows.start..rows.end.min(self.slices.len()) {
            lo = lo.min(self.slices.start[i]);
            hi = hi.max(self.slices.end(i));
        }
        (lo <= hi).then_some((lo, hi))
    }

    /// [`Trace::time_bounds`] of the instants, memory events and counters alone.
    pub fn point_bounds(&self) -> Option<(Ns, Ns)> {
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        for &t in self
            .instants
            .ts
            .iter()
            .chain(&self.memory.ts)
            .chain(&self.counters.ts)
        {
            lo = lo.min(t);
            hi = hi.max(t);
        }
        (lo <= hi).then_some((lo, hi))
    }

    /// The bounds covering both.
    pub fn bounds_with(a: Option<(Ns, Ns)>, b: Option<(Ns, Ns)>) -> Option<(Ns, Ns)> {
        match (a, b) {
            (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
            (a, b) => a.or(b),
        }
    }

    /// Display name of a track: "thread name (tid)" or "stream N" under its process.
    pub fn track_label(&self, t: usize) -> String {
        let tr = &self.tracks[t];
        self.str(tr.name).to_owned()
    }

    pub fn process_label(&self, pid: IdVal) -> String {
        if let Some(p) = self.processes.iter().find(|p| p.pid == pid) {
            if p.name != StrId::EMPTY {
                return self.str(p.name).to_owned();
            }
        }
        match pid {
            IdVal::Int(v) => format!("pid {v}"),
            IdVal::Str(s) => self.str(s).to_owned(),
        }
    }

    pub fn idval_text(&self, v: IdVal) -> String {
        match v {
            IdVal::Int(i) => i.to_string(),
            IdVal::Str(s) => self.str(s).to_owned(),
        }
    }

    /// Rough heap size of the model, for the memory benchmark.
    pub fn heap_bytes(&self) -> usize {
        let s = &self.slices;
        let per_slice = 8 + 8 + 4 + 4 + 4 + 1 + 2 + 4 + 4 + 4 + 8;
        self.strings.heap_bytes()
            + s.start.capacity() * per_slice
            + s.external_id.capacity_bytes()
            + s.correlation.capacity_bytes()
            + s.rf_id.capacity_bytes()
            + self.gpu.slice.capacity() * 64
            + self.args.heap_bytes()
            + self.memory.ts.capacity() * 46
            + self.instants.ts.capacity() * 28
            + self.counters.ts.capacity() * 20
            + self.flows.from.capacity() * 12
    }
}
