//! The operator table, with torch `key_averages()` semantics (docs/definitions.md),
//! computed from the trace and checked against `key_averages()` on the generated corpus
//! (`tests/ops_vs_torch.rs`).
//!
//! How torch builds it (torch/autograd/profiler.py `_parse_kineto_results`, profiler_util.py
//! `EventList._build_tree`), reproduced here:
//! - Rows come from CPU-side events: `cpu_op`, `user_annotation`, `cuda_runtime`, `cuda_driver`,
//!   `overhead`; device events (kernels, memcpy, memset) are rows of their own with 0 CPU time.
//!   `gpu_user_annotation` and `python_function` are not rows. A few utility names torch filters
//!   out (`profiler::_record_function_*`, `aten::is_leaf`, `aten::output_nr`, `aten::_version`)
//!   are dropped before the tree is built, so they neither form rows nor reduce self time.
//! - Parent/child by time nesting per thread: sorted by (start, -end), a stack popped while the
//!   top cannot contain the event (`_populate_cpu_children`).
//! - Async events have no parent or children and self CPU time 0. The trace does not mark them;
//!   we treat as async the `user_annotation`s named `gloo:*`, `nccl:*`, `mpi:*`, `ucc:*`, `xccl:*`
//!   — the c10d work record functions that start on the caller and end on a worker thread.
//! - An event whose parent has it as only child and the same name is removed and its children
//!   lifted (`_remove_dup_nodes`): the redispatch `aten::mul` inside `aten::mul` counts once.
//! - `ProfilerStep#N` rows merge into `ProfilerStep*`.
//! - `python_function` frames (`with_stack=True`) take part in the nesting only in traces whose
//!   frames carry a `CallFrom` arg (torch 2.15 writes it and nests them; torch 2.11 writes
//!   `Python parent id` alone and leaves them out: both checked against key_averages, the CPU
//!   corpus and `tests/fixtures/torch-2.11-cuda13-h100/`).
//! - Kineto's `overhead` events (CUPTI's "Activity Buffer Request", written under pid -1) were
//!   recorded on the thread that launched work when the buffer ran out, and torch treats them so:
//!   they nest on the main thread (tid = pid), take their time out of the op they interrupted, and
//!   carry that op's own device time a second time (torch appends the kernels of the correlation
//!   id they share).
//! - `[memory]` events that fall inside no CPU event on any thread form a `[memory]` row of their
//!   own (torch's "top-level memory events").
//! - Self CPU = own duration − direct children's durations. CPU/device memory = sum of `[memory]`
//!   bytes with `start ≤ ts ≤ end` on any thread (torch's `MemRecordsAcc.in_interval`), CPU when
//!   the event's device type is CPU, device otherwise; self memory subtracts the children's.
//! - Device time: a kernel/memcpy/memset belongs to the op that encloses its launching runtime
//!   call (`GpuDetails::launch`; torch uses the `External id`, which is the same op); self device =
//!   the op's own launches; device total adds the children's totals.

use super::flops::{slice_flops, torch_shape_text, FlopsSource};
use super::scope::Mask;
use crate::model::{IdVal, Ns, SliceKind, StrId, Trace, TrackKind, NONE, NO_ID};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Names torch's `_filter_name` drops before building the tree.
const FILTERED: &[&str] = &[
    "[memory]",
    "[OutOfMemory]",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
];

const ASYNC_PREFIXES: &[&str] = &["gloo:", "nccl:", "mpi:", "ucc:", "xccl:"];

/// The CPU event tree torch builds, after its merges: one entry per kept CPU event.
#[derive(Debug, Clone, Default)]
pub struct OpTree {
    /// Slice index of each kept event, in slice order (parents before children).
    pub slice: Vec<u32>,
    /// Parent entry (index into these vectors) or [`NONE`].
    pub parent: Vec<u32>,
    pub is_async: Vec<bool>,
    pub self_cpu: Vec<Ns>,
    pub self_device: Vec<Ns>,
    pub device_total: Vec<Ns>,
    /// The part of `device_total` that overhead events below repeat (torch counts it twice;
    /// FLOP rates subtract it).
    pub repeated_device: Vec<Ns>,
    pub cpu_mem: Vec<i64>,
    pub device_mem: Vec<i64>,
    pub self_cpu_mem: Vec<i64>,
    pub self_device_mem: Vec<i64>,
    /// Entry of a kept event, by slice index ([`NONE`] for slices that are not CPU events).
    pub entry_of: Vec<u32>,
    /// `[memory]` events inside no CPU event: how many, and their CPU and device bytes.
    pub loose_memory: (u64, i64, i64),
    /// Those events (indices into `Trace::memory`), for a scoped table.
    pub loose_events: Vec<u32>,
}

/// Events of torch's tree. `python_function` events (`with_stack=True`) are in it but are not
/// rows: torch nests them like ops, so a user annotation's self time excludes the Python frames
/// directly under it, and a frame that starts inside an annotation but ends after it closes the
/// annotation to later events (torch's stack rule), as `key_averages` does.
fn is_cpu_event(k: SliceKind, python: bool) -> bool {
    match k {
        SliceKind::CpuOp | SliceKind::UserAnnotation | SliceKind::Runtime | SliceKind::Driver => {
            true
        }
        SliceKind::PythonFunction => python,
        _ => false,
    }
}

/// Whether this trace's torch nests `python_function` frames in its tree: the ones that do
/// write a `CallFrom` arg on each frame.
fn python_in_tree(t: &Trace) -> bool {
    let s = &t.slices;
    (0..s.len())
        .find(|&i| s.kind[i] == SliceKind::PythonFunction)
        .is_some_and(|i| t.slice_args_stored(i).contains("\"CallFrom\""))
}

/// Kineto `overhead` slices on its pid -1 row, and the host track they were recorded on (the
/// main thread: tid = pid, else the CPU track with the most slices).
fn overhead_slices(t: &Trace) -> (Vec<u32>, u32) {
    let s = &t.slices;
    let Some(cat) = t.strings.get("overhead") else {
        return (Vec::new(), NONE);
    };
    let mut out: Vec<u32> = Vec::new();
    for tr in &t.tracks {
        if tr.kind != TrackKind::Cpu || tr.pid != IdVal::Int(-1) {
            continue;
        }
        out.extend((tr.first..tr.first + tr.count).filter(|&i| s.cat[i as usize] == cat));
    }
    if out.is_empty() {
        return (out, NONE);
    }
    crate::sort::by_key(&mut out, |&i| (s.start[i as usize], -s.dur[i as usize]));
    let cpu = || {
        t.tracks
            .iter()
            .enumerate()
            .filter(|(_, tr)| tr.kind == TrackKind::Cpu && tr.pid != IdVal::Int(-1))
    };
    let main = cpu()
        .find(|(_, tr)| matches!((tr.pid, tr.tid), (IdVal::Int(p), IdVal::Int(q)) if p == q))
        .or_else(|| cpu().max_by_key(|(_, tr)| tr.count))
        .map_or(NONE, |(k, _)| k as u32);
    (out, main)
}

/// Builds torch's event tree with device time and memory attached. O(n log n).
pub fn op_tree(t: &Trace) -> OpTree {
    let s = &t.slices;
    let n = s.len();
    let filtered: Vec<StrId> = FILTERED.iter().filter_map(|f| t.strings.get(f)).collect();
    let mut tr = OpTree {
        entry_of: vec![NONE; n],
        ..Default::default()
    };
    // Pass 1: nesting per track with torch's stack rule. The overhead slices are merged into
    // their host track's sequence, in (start, -end) order like torch sorts.
    let python = python_in_tree(t);
    let (overhead, host) = overhead_slices(t);
    let is_overhead = |i: usize| overhead.binary_search(&(i as u32)).is_ok();
    let mut order: Vec<u32> = Vec::with_capacity(n);
    for (k, tr) in t.tracks.iter().enumerate() {
        let own = tr.first..tr.first + tr.count;
        if k as u32 != host {
            order.extend(own.filter(|&i| !is_overhead(i as usize)));
            continue;
        }
        let key = |i: u32| (s.start[i as usize], -s.dur[i as usize]);
        let mut extra = overhead.iter().copied().peekable();
        for i in own {
            while let Some(&o) = extra.peek() {
                if key(o) < key(i) {
                    order.push(o);
                    extra.next();
                } else {
                    break;
                }
            }
            order.push(i);
        }
        order.extend(extra);
    }
    let mut stack: Vec<u32> = Vec::new();
    let mut nchild: Vec<u32> = Vec::new();
    let mut cur_track = u32::MAX;
    for &i in &order {
        let i = i as usize;
        let k = s.kind[i];
        let relocated = host != NONE && is_overhead(i);
        if !(is_cpu_event(k, python) || relocated) || filtered.contains(&s.name[i]) {
            continue;
        }
        let track = if relocated { host } else { s.track[i] };
        if track != cur_track {
            cur_track = track;
            stack.clear();
        }
        let e = tr.slice.len() as u32;
        tr.entry_of[i] = e;
        tr.slice.push(i as u32);
        let name = t.str(s.name[i]);
        let is_async =
            k == SliceKind::UserAnnotation && ASYNC_PREFIXES.iter().any(|p| name.starts_with(p));
        tr.is_async.push(is_async);
        nchild.push(0);
        if is_async {
            tr.parent.push(NONE);
            continue;
        }
        let (start, end) = (s.start[i], s.end(i));
        let mut parent = NONE;
        while let Some(&top) = stack.last() {
            let ti = tr.slice[top as usize] as usize;
            if start >= s.end(ti) || end > s.end(ti) {
                stack.pop();
            } else {
                parent = top;
                break;
            }
        }
        tr.parent.push(parent);
        if parent != NONE {
            nchild[parent as usize] += 1;
        }
        stack.push(e);
    }
    // Pass 2: torch's `_remove_dup_nodes`, in order, so parents are settled before children.
    let m = tr.slice.len();
    let mut redirect: Vec<u32> = (0..m as u32).collect();
    let mut keep = vec![true; m];
    for e in 0..m {
        let p0 = tr.parent[e];
        if p0 == NONE {
            continue;
        }
        let p = redirect[p0 as usize];
        tr.parent[e] = p;
        let (si, sp) = (tr.slice[e] as usize, tr.slice[p as usize] as usize);
        if nchild[p as usize] == 1 && s.name[si] == s.name[sp] {
            keep[e] = false;
            redirect[e] = p;
            nchild[p as usize] = nchild[e];
        }
    }
    // Device time: each GPU slice goes to the kept op enclosing its launch call.
    tr.self_device = vec![0; m];
    let g = &t.gpu;
    for r in 0..g.slice.len() {
        let l = g.launch[r];
        if l == NONE {
            continue;
        }
        let le = tr.entry_of[l as usize];
        let owner = if le != NONE {
            tr.parent[le as usize]
        } else {
            enclosing_entry(t, &tr, l as usize)
        };
        if owner != NONE {
            let owner = redirect[owner as usize];
            tr.self_device[owner as usize] += s.dur[g.slice[r] as usize];
        }
    }
    // An overhead event carries the device time of the op it interrupted (the innermost op or
    // annotation above it), counted again as torch does.
    for &o in &overhead {
        let e = tr.entry_of[o as usize];
        if e == NONE {
            continue;
        }
        let mut p = tr.parent[e as usize];
        while p != NONE {
            let k = s.kind[tr.slice[p as usize] as usize];
            if matches!(k, SliceKind::CpuOp | SliceKind::UserAnnotation) {
                break;
            }
            p = tr.parent[p as usize];
        }
        if p != NONE {
            tr.self_device[e as usize] += tr.self_device[redirect[p as usize] as usize];
        }
    }
    // Memory in [start, end] on any thread, split CPU / device, by prefix sums.
    let mem = &t.memory;
    let mut pre_cpu = Vec::with_capacity(mem.ts.len() + 1);
    let mut pre_dev = Vec::with_capacity(mem.ts.len() + 1);
    let (mut c, mut d) = (0i64, 0i64);
    pre_cpu.push(0);
    pre_dev.push(0);
    for k in 0..mem.ts.len() {
        if mem.device_type[k] == 0 {
            c += mem.bytes[k];
        } else {
            d += mem.bytes[k];
        }
        pre_cpu.push(c);
        pre_dev.push(d);
    }
    tr.cpu_mem = vec![0; m];
    tr.device_mem = vec![0; m];
    if !mem.ts.is_empty() {
        for e in 0..m {
            let i = tr.slice[e] as usize;
            let a = mem.ts.partition_point(|&x| x < s.start[i]);
            let b = mem.ts.partition_point(|&x| x <= s.end(i));
            if b > a {
                tr.cpu_mem[e] = pre_cpu[b] - pre_cpu[a];
                tr.device_mem[e] = pre_dev[b] - pre_dev[a];
            }
        }
    }
    // Memory events inside no CPU event, on any thread: a sweep over the merged intervals.
    if !mem.ts.is_empty() {
        let mut iv: Vec<(Ns, Ns)> = tr
            .slice
            .iter()
            .map(|&i| (s.start[i as usize], s.end(i as usize)))
            .collect();
        iv.sort_unstable();
        let (mut k, mut reach) = (0usize, Ns::MIN);
        for (j, &ts) in mem.ts.iter().enumerate() {
            while k < iv.len() && iv[k].0 <= ts {
                reach = reach.max(iv[k].1);
                k += 1;
            }
            if ts > reach {
                tr.loose_events.push(j as u32);
                let l = &mut tr.loose_memory;
                l.0 += 1;
                if mem.device_type[j] == 0 {
                    l.1 += mem.bytes[j];
                } else {
                    l.2 += mem.bytes[j];
                }
            }
        }
    }
    // Children sums, bottom-up (children come after parents in slice order).
    tr.self_cpu = vec![0; m];

    tr.self_cpu_mem = tr.cpu_mem.clone();
    tr.self_device_mem = tr.device_mem.clone();
    tr.repeated_device = vec![0; m];
    for &o in &overhead {
        let e = tr.entry_of[o as usize];
        if e != NONE {
            tr.repeated_device[e as usize] = tr.self_device[e as usize];
        }
    }
    // A runtime call made outside any op (no `External id`) is keyed in torch by its CUPTI
    // `correlation`, which is looked up among the ops' External ids: where the two numbers
    // collide, torch gives the call that op's kernels (seen on `cudaStreamIsCapturing` in the
    // fused optimizer, 36 µs over 60 steps of the LM). A torch quirk reproduced so the columns
    // agree; FLOP rates leave it out.
    let mut by_ext: FxHashMap<i64, u32> = FxHashMap::default();
    for (e, &i) in tr.slice.iter().enumerate() {
        let i = i as usize;
        if matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation)
            && s.external_id[i] != NO_ID
        {
            by_ext.entry(s.external_id[i]).or_insert(e as u32);
        }
    }
    if !by_ext.is_empty() {
        for e in 0..m {
            let i = tr.slice[e] as usize;
            if s.kind[i].is_launch() && s.external_id[i] == NO_ID && s.correlation[i] != NO_ID {
                if let Some(&op) = by_ext.get(&s.correlation[i]) {
                    let d = tr.self_device[redirect[op as usize] as usize];
                    tr.self_device[e] += d;
                    tr.repeated_device[e] += d;
                }
            }
        }
    }
    tr.device_total = tr.self_device.clone();
    let mut child_dur = vec![0i64; m];
    for e in (0..m).rev() {
        if !keep[e] {
            continue;
        }
        let p = tr.parent[e];
        if p != NONE {
            let p = p as usize;
            child_dur[p] += s.dur[tr.slice[e] as usize];
            tr.device_total[p] += tr.device_total[e];
            tr.repeated_device[p] += tr.repeated_device[e];
            tr.self_cpu_mem[p] -= tr.cpu_mem[e];
            tr.self_device_mem[p] -= tr.device_mem[e];
        }
    }
    for (e, cd) in child_dur.iter().enumerate() {
        tr.self_cpu[e] = if tr.is_async[e] {
            0
        } else {
            s.dur[tr.slice[e] as usize] - cd
        };
    }
    // Drop the removed duplicates.
    if keep.iter().any(|k| !k) {
        let mut new_of = vec![NONE; m];
        let mut next = 0u32;
        for e in 0..m {
            if keep[e] {
                new_of[e] = next;
                next += 1;
            }
        }
        let sel = |v: &mut Vec<i64>| {
            let mut k = 0;
            v.retain(|_| {
                k += 1;
                keep[k - 1]
            });
        };
        sel(&mut tr.self_cpu);
        sel(&mut tr.self_device);
        sel(&mut tr.device_total);
        sel(&mut tr.repeated_device);
        sel(&mut tr.cpu_mem);
        sel(&mut tr.device_mem);
        sel(&mut tr.self_cpu_mem);
        sel(&mut tr.self_device_mem);
        let mut k = 0;
        tr.is_async.retain(|_| {
            k += 1;
            keep[k - 1]
        });
        let mut slice = Vec::with_capacity(next as usize);
        let mut parent = Vec::with_capacity(next as usize);
        for (e, &kept) in keep.iter().enumerate() {
            if kept {
                slice.push(tr.slice[e]);
                let p = tr.parent[e];
                parent.push(if p == NONE { NONE } else { new_of[p as usize] });
            }
        }
        for x in tr.entry_of.iter_mut() {
            if *x != NONE {
                *x = new_of[redirect[*x as usize] as usize];
            }
        }
        tr.slice = slice;
        tr.parent = parent;
    }
    tr
}

/// For a launch call that is not itself a kept event (filtered name): the innermost kept event
/// on its track that contains it.
fn enclosing_entry(t: &Trace, tr: &OpTree, l: usize) -> u32 {
    let mut p = t.slices.parent[l];
    while p != NONE {
        let e = tr.entry_of[p as usize];
        if e != NONE {
            return e;
        }
        p = t.slices.parent[p as usize];
    }
    NONE
}

/// One row of the table. Times in ns, memory in bytes.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OpRow {
    pub name: String,
    /// `Input Dims` in torch's text form, when grouping by input shape.
    pub input_shapes: Option<String>,
    /// Kernel/memcpy/memset rows (0 CPU time) vs CPU-side rows.
    pub on_device: bool,
    pub is_user_annotation: bool,
    pub calls: u64,
    pub self_cpu_ns: Ns,
    pub cpu_total_ns: Ns,
    pub self_device_ns: Ns,
    pub device_total_ns: Ns,
    pub self_cpu_mem_bytes: i64,
    pub cpu_mem_bytes: i64,
    pub self_device_mem_bytes: i64,
    pub device_mem_bytes: i64,
    pub flops: f64,
    pub flops_source: FlopsSource,
    /// How close its calls came to the roofline ([`super::roofline`]), filled in by the analysis
    /// that has the roofline; `None` without a known family, device time or device.
    pub pct_of_roof: Option<f64>,
}

impl OpRow {
    pub fn cpu_avg_ns(&self) -> f64 {
        self.cpu_total_ns as f64 / self.calls.max(1) as f64
    }
    pub fn device_avg_ns(&self) -> f64 {
        self.device_total_ns as f64 / self.calls.max(1) as f64
    }
}

/// The whole table plus the totals the % columns divide by.
#[derive(Debug, Clone, Serialize, Default)]
pub struct OpTable {
    pub rows: Vec<OpRow>,
    /// Sum of Self CPU over all rows (the table's "Self CPU time total").
    pub self_cpu_total_ns: Ns,
    /// Sum of Self device over the device rows, GPU annotations left out (torch's footer).
    pub self_device_total_ns: Ns,
    pub grouped_by_input_shape: bool,
}

/// Columns the table can be sorted by (torch's `sort_by` keys plus ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    SelfCpu,
    CpuTotal,
    CpuAvg,
    SelfDevice,
    DeviceTotal,
    DeviceAvg,
    SelfCpuMem,
    CpuMem,
    SelfDeviceMem,
    DeviceMem,
    Calls,
    Flops,
    Name,
}

impl SortKey {
    /// Accepts torch's names (`self_cpu_time_total`, `cuda_time_total`, `count`…) and ours.
    pub fn parse(s: &str) -> Option<SortKey> {
        Some(match s {
            "self_cpu" | "self_cpu_time_total" | "self_cpu_us" => SortKey::SelfCpu,
            "cpu_total" | "cpu_time_total" | "cpu_total_us" => SortKey::CpuTotal,
            "cpu_avg" | "cpu_time" => SortKey::CpuAvg,
            "self_device"
            | "self_cuda_time_total"
            | "self_device_time_total"
            | "self_device_us" => SortKey::SelfDevice,
            "device_total" | "cuda_time_total" | "device_time_total" | "device_total_us" => {
                SortKey::DeviceTotal
            }
            "device_avg" | "cuda_time" | "device_time" => SortKey::DeviceAvg,
            "self_cpu_memory_usage" | "self_cpu_mem" => SortKey::SelfCpuMem,
            "cpu_memory_usage" | "cpu_mem" => SortKey::CpuMem,
            "self_cuda_memory_usage" | "self_device_memory_usage" | "self_device_mem" => {
                SortKey::SelfDeviceMem
            }
            "cuda_memory_usage" | "device_memory_usage" | "device_mem" => SortKey::DeviceMem,
            "count" | "calls" => SortKey::Calls,
            "flops" => SortKey::Flops,
            "name" => SortKey::Name,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct OpOptions {
    pub group_by_input_shape: bool,
}

/// Builds the table, sorted by Self CPU descending (then device total, then name).
pub fn op_table(t: &Trace, opts: OpOptions) -> OpTable {
    op_table_indexed(t, opts).0
}

/// The table, the tree it was built from, and each tree entry's row in the table ([`NONE`] for
/// entries that form no row: `python_function` frames). The A/B diff walks the tree to match ops
/// renamed between two traces through their parents (`report::diff`).
pub fn op_table_indexed(t: &Trace, opts: OpOptions) -> (OpTable, OpTree, Vec<u32>) {
    op_table_masked(t, opts, Mask::ALL, &|_| true)
}

/// [`op_table_indexed`] over the slices `keep` passes and the `[memory]` events whose time
/// `mem_in` passes (a scope, [`super::scope`]): each kept event with its own figures, as in the
/// whole table (self time net of all its children, the device time of all it launched).
pub fn op_table_masked(
    t: &Trace,
    opts: OpOptions,
    keep: Mask<'_>,
    mem_in: &dyn Fn(Ns) -> bool,
) -> (OpTable, OpTree, Vec<u32>) {
    let tree = op_tree(t);
    let mut row_of_entry = vec![NONE; tree.slice.len()];
    let s = &t.slices;
    // Key: (name id or step marker, input dims, on_device, user annotation).
    let mut index: FxHashMap<(StrId, bool, u32, bool, bool), usize> = FxHashMap::default();
    // Input Dims text -> torch's shape text, deduplicated (TensorLists collapse to `[]`).
    let mut shape_of: FxHashMap<StrId, u32> = FxHashMap::default();
    let mut shape_ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut shape_texts: Vec<String> = Vec::new();
    let mut rows: Vec<OpRow> = Vec::new();
    let name_key = |id: StrId| -> (StrId, bool) {
        let n = t.str(id);
        if n.starts_with("ProfilerStep#") {
            (StrId::EMPTY, true)
        } else {
            (id, false)
        }
    };
    let mut flops_cache: FxHashMap<(StrId, StrId), (f64, FlopsSource)> = FxHashMap::default();
    for (e, row_of) in row_of_entry.iter_mut().enumerate() {
        let i = tree.slice[e] as usize;
        if s.kind[i] == SliceKind::PythonFunction || !keep.has(i) {
            continue;
        }
        let (nid, step) = name_key(s.name[i]);
        let dims = if opts.group_by_input_shape {
            *shape_of.entry(s.input_dims[i]).or_insert_with(|| {
                let d = t.str(s.input_dims[i]);
                let text = if d.is_empty() {
                    "[]".to_owned()
                } else {
                    torch_shape_text(d)
                };
                let next = shape_texts.len() as u32;
                *shape_ids.entry(text.clone()).or_insert_with(|| {
                    shape_texts.push(text);
                    next
                })
            })
        } else {
            u32::MAX
        };
        let ua = s.kind[i] == SliceKind::UserAnnotation;
        let key = (nid, step, dims, false, ua);
        let flops = if t.str(s.name[i]) == "aten::conv2d" || !t.flops.slice.is_empty() {
            slice_flops(t, i)
        } else {
            *flops_cache
                .entry((s.name[i], s.input_dims[i]))
                .or_insert_with(|| slice_flops(t, i))
        };
        let r = *index.entry(key).or_insert_with(|| {
            let mut row = new_row(t, i, step, false, ua);
            if opts.group_by_input_shape {
                row.input_shapes = shape_texts.get(dims as usize).cloned();
            }
            rows.push(row);
            rows.len() - 1
        });
        *row_of = r as u32;
        let row = &mut rows[r];
        row.calls += 1;
        row.self_cpu_ns += tree.self_cpu[e];
        row.cpu_total_ns += s.dur[i];
        row.self_device_ns += tree.self_device[e];
        row.device_total_ns += tree.device_total[e];
        row.cpu_mem_bytes += tree.cpu_mem[e];
        row.device_mem_bytes += tree.device_mem[e];
        row.self_cpu_mem_bytes += tree.self_cpu_mem[e];
        row.self_device_mem_bytes += tree.self_device_mem[e];
        if flops.1 != FlopsSource::None {
            row.flops += flops.0;
            row.flops_source = row.flops_source.max(flops.1);
        }
    }
    let (n_loose, cpu_b, dev_b) = if keep.0.is_none() {
        tree.loose_memory
    } else {
        let m = &t.memory;
        let mut l = (0u64, 0i64, 0i64);
        for &j in &tree.loose_events {
            let j = j as usize;
            if mem_in(m.ts[j]) {
                l.0 += 1;
                if m.device_type[j] == 0 {
                    l.1 += m.bytes[j];
                } else {
                    l.2 += m.bytes[j];
                }
            }
        }
        l
    };
    if n_loose > 0 {
        let row = OpRow {
            name: "[memory]".to_owned(),
            input_shapes: opts.group_by_input_shape.then(|| "[]".to_owned()),
            on_device: false,
            is_user_annotation: false,
            calls: n_loose,
            self_cpu_ns: 0,
            cpu_total_ns: 0,
            self_device_ns: 0,
            device_total_ns: 0,
            self_cpu_mem_bytes: cpu_b,
            cpu_mem_bytes: cpu_b,
            self_device_mem_bytes: dev_b,
            device_mem_bytes: dev_b,
            flops: 0.0,
            flops_source: FlopsSource::None,
            pct_of_roof: None,
        };
        rows.push(row);
    }
    // Device rows: kernels, memcpy and memset, and the GPU side of user annotations
    // (`gpu_user_annotation`, a record_function's device span), as in key_averages; on the
    // device, `ProfilerStep#N` merges too.
    for i in 0..s.len() {
        let ua = s.kind[i] == SliceKind::GpuAnnotation;
        if !(ua || s.kind[i].is_gpu_work()) || !keep.has(i) {
            continue;
        }
        let (nid, step) = if ua {
            name_key(s.name[i])
        } else {
            (s.name[i], false)
        };
        let r = *index
            .entry((nid, step, u32::MAX, true, ua))
            .or_insert_with(|| {
                let mut row = new_row(t, i, step, true, ua);
                if ua && opts.group_by_input_shape {
                    row.input_shapes = Some("[]".to_owned());
                }
                rows.push(row);
                rows.len() - 1
            });
        let row = &mut rows[r];
        row.calls += 1;
        row.self_device_ns += s.dur[i];
        row.device_total_ns += s.dur[i];
    }
    let mut table = OpTable {
        self_cpu_total_ns: rows.iter().map(|r| r.self_cpu_ns).sum(),
        // torch's "Self CUDA time total": device rows only (CPU rows repeat their kernels'
        // time) and not the GPU annotations, which span the kernels they enclose.
        self_device_total_ns: rows
            .iter()
            .filter(|r| r.on_device && !r.is_user_annotation)
            .map(|r| r.self_device_ns)
            .sum(),
        rows,
        grouped_by_input_shape: opts.group_by_input_shape,
    };
    // Sorted through an index so the entries' rows can follow.
    let mut idx: Vec<usize> = (0..table.rows.len()).collect();
    crate::sort::by(&mut idx, |&x, &y| {
        row_order(SortKey::SelfCpu, &table.rows[x], &table.rows[y])
    });
    let mut new_pos = vec![NONE; idx.len()];
    for (p, &o) in idx.iter().enumerate() {
        new_pos[o] = p as u32;
    }
    let mut old: Vec<Option<OpRow>> = std::mem::take(&mut table.rows)
        .into_iter()
        .map(Some)
        .collect();
    table.rows = idx.iter().filter_map(|&o| old[o].take()).collect();
    for r in row_of_entry.iter_mut().filter(|r| **r != NONE) {
        *r = new_pos[*r as usize];
    }
    (table, tree, row_of_entry)
}

fn new_row(t: &Trace, i: usize, step: bool, dev: bool, ua: bool) -> OpRow {
    let s = &t.slices;
    OpRow {
        name: if step {
            "ProfilerStep*".to_owned()
        } else {
            t.str(s.name[i]).to_owned()
        },
        input_shapes: None,
        on_device: dev,
        is_user_annotation: ua,
        calls: 0,
        self_cpu_ns: 0,
        cpu_total_ns: 0,
        self_device_ns: 0,
        device_total_ns: 0,
        self_cpu_mem_bytes: 0,
        cpu_mem_bytes: 0,
        self_device_mem_bytes: 0,
        device_mem_bytes: 0,
        flops: 0.0,
        flops_source: FlopsSource::None,
        pct_of_roof: None,
    }
}

/// Sorts descending by `key` (ascending for [`SortKey::Name`]); ties by name, then shapes, so the
/// output is deterministic.
pub fn sort_rows(rows: &mut [OpRow], key: SortKey) {
    crate::sort::by(rows, |a, b| row_order(key, a, b));
}

fn row_order(key: SortKey, a: &OpRow, b: &OpRow) -> std::cmp::Ordering {
    let v = |r: &OpRow| -> f64 {
        match key {
            SortKey::SelfCpu => r.self_cpu_ns as f64,
            SortKey::CpuTotal => r.cpu_total_ns as f64,
            SortKey::CpuAvg => r.cpu_avg_ns(),
            SortKey::SelfDevice => r.self_device_ns as f64,
            SortKey::DeviceTotal => r.device_total_ns as f64,
            SortKey::DeviceAvg => r.device_avg_ns(),
            SortKey::SelfCpuMem => r.self_cpu_mem_bytes as f64,
            SortKey::CpuMem => r.cpu_mem_bytes as f64,
            SortKey::SelfDeviceMem => r.self_device_mem_bytes as f64,
            SortKey::DeviceMem => r.device_mem_bytes as f64,
            SortKey::Calls => r.calls as f64,
            SortKey::Flops => r.flops,
            SortKey::Name => 0.0,
        }
    };
    v(b).total_cmp(&v(a))
        .then_with(|| a.name.cmp(&b.name))
        .then_with(|| a.input_shapes.cmp(&b.input_shapes))
        .then_with(|| a.on_device.cmp(&b.on_device))
}
