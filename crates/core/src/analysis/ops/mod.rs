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

use crate::model::{IdVal, Ns, SliceKind, StrId, Trace, TrackKind, NONE, NO_ID};
use rustc_hash::FxHashMap;

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
    /// Memory columns, one per entry where the trace has `[memory]` events and empty where it
    /// has none (most traces: `profile_memory` is off), which spares 32 bytes an entry; read
    /// them through [`OpTree::memory`].
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

impl OpTree {
    /// Entry `e`'s CPU, device, self CPU and self device bytes (all 0 in a trace without
    /// `[memory]` events).
    pub fn memory(&self, e: usize) -> (i64, i64, i64, i64) {
        if self.cpu_mem.is_empty() {
            return (0, 0, 0, 0);
        }
        (
            self.cpu_mem[e],
            self.device_mem[e],
            self.self_cpu_mem[e],
            self.self_device_mem[e],
        )
    }
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

/// Torch's nesting of the CPU events and its merges (passes 1 and 2 of [`op_tree`]): the tree's
/// `slice`, `parent`, `is_async` and `entry_of` before the merged duplicates are dropped.
struct Nesting {
    tr: OpTree,
    /// The entry each entry's figures go to (itself, or the parent it merged into).
    redirect: Vec<u32>,
    /// False for the duplicates merged into their parents.
    keep: Vec<bool>,
    overhead: Vec<u32>,
}

/// The slices of torch's tree, in slice order, after its merges: what [`op_tree`] keeps, without
/// its figures (a third of its working memory, for the per-step table).
pub fn tree_slices(t: &Trace) -> Vec<u32> {
    let Nesting { tr, keep, .. } = nesting(t);
    tr.slice
        .into_iter()
        .zip(keep)
        .filter(|&(_, k)| k)
        .map(|(i, _)| i)
        .collect()
}

/// Builds torch's event tree with device time and memory attached. O(n log n).
pub fn op_tree(t: &Trace) -> OpTree {
    let s = &t.slices;
    let Nesting {
        mut tr,
        redirect,
        keep,
        overhead,
    } = nesting(t);
    let m = tr.slice.len();
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
    if !mem.ts.is_empty() {
        tr.cpu_mem = vec![0; m];
        tr.device_mem = vec![0; m];
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
        // Already in order but for ties and threads: driftsort merges the runs.
        iv.sort();
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
    // Only the correlations of such calls are looked up (usually none), so the map holds those,
    // not every op's id.
    let outside = |i: usize| {
        s.kind[i].is_launch() && s.external_id.get(i) == NO_ID && s.correlation.get(i) != NO_ID
    };
    let mut by_ext: FxHashMap<i64, u32> = tr
        .slice
        .iter()
        .filter(|&&i| outside(i as usize))
        .map(|&i| (s.correlation.get(i as usize), NONE))
        .collect();
    if !by_ext.is_empty() {
        for (e, &i) in tr.slice.iter().enumerate() {
            let i = i as usize;
            if matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation) {
                if let Some(op) = by_ext.get_mut(&s.external_id.get(i)) {
                    if *op == NONE {
                        *op = e as u32;
                    }
                }
            }
        }
        for e in 0..m {
            let i = tr.slice[e] as usize;
            if !outside(i) {
                continue;
            }
            if let Some(&op) = by_ext.get(&s.correlation.get(i)) {
                if op != NONE {
                    let d = tr.self_device[redirect[op as usize] as usize];
                    tr.self_device[e] += d;
                    tr.repeated_device[e] += d;
                }
            }
        }
    }
    drop(by_ext);
    tr.device_total = tr.self_device.clone();
    // Self CPU starts at the duration and loses each kept child's (an async event's is 0).
    tr.self_cpu = tr
        .slice
        .iter()
        .zip(&tr.is_async)
        .map(|(&i, &a)| if a { 0 } else { s.dur[i as usize] })
        .collect();
    let with_memory = !tr.cpu_mem.is_empty();
    for e in (0..m).rev() {
        if !keep[e] {
            continue;
        }
        let p = tr.parent[e];
        if p != NONE {
            let p = p as usize;
            if !tr.is_async[p] {
                tr.self_cpu[p] -= s.dur[tr.slice[e] as usize];
            }
            tr.device_total[p] += tr.device_total[e];
            tr.repeated_device[p] += tr.repeated_device[e];
            if with_memory {
                tr.self_cpu_mem[p] -= tr.cpu_mem[e];
                tr.self_device_mem[p] -= tr.device_mem[e];
            }
        }
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

fn nesting(t: &Trace) -> Nesting {
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
    Nesting {
        tr,
        redirect,
        keep,
        overhead,
    }
}

/// The part of [`OpTree`] that the call costs and the roofline read: which kept op encloses each
/// launch, and the device time launched under each entry net of torch's repeats. A fifth of the
/// tree's bytes (20 of 73 per entry, plus 4 per slice): the analysis keeps this, not the tree,
/// from the op table to the roofline, where it sat under the call costs' working set at a
/// reader worker's peak.
#[derive(Debug, Clone, Default)]
pub struct LaunchTree {
    /// As [`OpTree::slice`], [`OpTree::parent`] and [`OpTree::entry_of`].
    pub slice: Vec<u32>,
    pub parent: Vec<u32>,
    pub entry_of: Vec<u32>,
    /// `device_total - repeated_device` of each entry.
    pub device_net: Vec<Ns>,
}

impl From<OpTree> for LaunchTree {
    /// Keeps the tree's columns it needs in place (no copy) and lets the rest go.
    fn from(tr: OpTree) -> LaunchTree {
        let mut device_net = tr.device_total;
        for (d, r) in device_net.iter_mut().zip(&tr.repeated_device) {
            *d -= r;
        }
        LaunchTree {
            slice: tr.slice,
            parent: tr.parent,
            entry_of: tr.entry_of,
            device_net,
        }
    }
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

mod table;
pub use table::*;
