//! Python call stacks of ops and kernels, and which line of the user's code launched them.
//!
//! With `with_stack=True` the trace holds a `python_function` slice per Python call, named
//! `file(line): function` (the line is the function's first line) or `nn.Module: Class_N` for a
//! module's `__call__`; torch 2.15 adds `CallFrom: "file:line"`, the line of the caller that made
//! the call. An op's stack is its enclosing frames, innermost first — what torch itself reports
//! as `FunctionEvent.stack` (with `_ExperimentalConfig(verbose=True)`), including torch's rule for
//! backward: the autograd node `XBackward0` and everything under it get the stack of the forward
//! op they differentiate (see [`super::autograd`]), so a backward kernel points at the forward
//! line; the `evaluate_function` wrapper keeps its own (`run_backward`) stack. torch drops a few
//! entries (`_filter_stack_entry`: `autograd/__init__` `backward` / `_make_grads`, …); so do we.
//! Checked against torch's stacks of every op and `key_averages(group_by_stack_n=5)` on
//! `tests/fixtures/torch-2.15-cpu` (`tests/modules.rs`).
//!
//! The *source line* of an op is the innermost frame of user code on its stack — not torch's own
//! (`torch/…`), not a builtin (`<built-in …>`), not a module call frame — at the line where that
//! frame made the call towards the op: the `CallFrom` of the frame just inside it. When the op
//! runs directly in the user frame (`y * 2` in `forward`) or the trace has no `CallFrom` (torch
//! ≤ 2.11), only the function is known and its first line is shown.

use super::autograd::Autograd;
use super::scope::Mask;
use crate::model::{Ns, SliceKind, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

pub const CALL_FROM: &str = "CallFrom";
/// The prefix of a module's call frame.
pub const MODULE_PREFIX: &str = "nn.Module: ";

/// torch's `_filter_stack_entry` (profiler_util.py): entries naming both parts are dropped.
const TORCH_FILTERED: &[(&str, &str)] = &[
    ("autograd/__init__", "_make_grads"),
    ("autograd/__init__", "backward"),
    ("torch/tensor", "backward"),
    ("_internal/common_utils", "prof_callable"),
    ("_internal/common_utils", "prof_func_call"),
    ("_internal/common_utils", "prof_meth_call"),
];

/// Whether torch keeps a frame name in `FunctionEvent.stack`.
pub fn torch_keeps(frame: &str) -> bool {
    TORCH_FILTERED
        .iter()
        .all(|(a, b)| !(frame.contains(a) && frame.contains(b)))
}

/// `file(line): function` split; `None` for builtins and module frames.
pub fn parse_frame(name: &str) -> Option<(&str, u32, &str)> {
    let (head, func) = name.split_once("): ")?;
    let (file, line) = head.rsplit_once('(')?;
    Some((file, line.parse().ok()?, func))
}

/// Whether a frame is the user's code rather than torch's, a builtin or a module call.
pub fn is_user_frame(name: &str) -> bool {
    match parse_frame(name) {
        Some((file, _, _)) => {
            !(file.starts_with("torch/")
                || file.contains("/torch/")
                || file.starts_with("<")
                || file.contains("site-packages/torch"))
        }
        None => false,
    }
}

/// Whose Python stack a slice has (torch's rules, see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackOf {
    /// The frames enclosing this slice (a kernel's launch, else the slice itself).
    Own(usize),
    /// The forward op's: the slice is (inside) an autograd node paired with it.
    Forward(usize),
    /// None: inside an autograd node without a forward op (`AccumulateGrad`, or a forward that
    /// ran before the window).
    Empty,
}

/// The autograd node a slice runs inside: the op directly under an `evaluate_function` wrapper
/// that carries the wrapper's node name. Walks up to the first Python frame.
fn enclosing_node(t: &Trace, i: usize) -> Option<usize> {
    let s = &t.slices;
    let mut x = i;
    for _ in 0..10_000 {
        if s.kind[x] == SliceKind::PythonFunction {
            return None;
        }
        let p = s.parent[x];
        if p == NONE {
            return None;
        }
        let pn = t.str(s.name[p as usize]);
        if let Some(node) = pn.strip_prefix(super::autograd::EVALUATE_PREFIX) {
            if t.str(s.name[x]) == node {
                return Some(x);
            }
        }
        x = p as usize;
    }
    None
}

/// Whose stack slice `i` has.
pub fn stack_of(t: &Trace, ag: &Autograd, i: usize) -> StackOf {
    let host = t.gpu.row(i as u32).map_or(i, |r| t.gpu.launch[r] as usize);
    if host >= t.slices.len() {
        return StackOf::Own(i);
    }
    match enclosing_node(t, host) {
        None => StackOf::Own(host),
        Some(node) => match ag.forward_of(node as u32) {
            Some(f) => StackOf::Forward(f as usize),
            None => StackOf::Empty,
        },
    }
}

/// The slice whose enclosing frames are slice `i`'s stack (see [`stack_of`]).
pub fn stack_host(t: &Trace, ag: &Autograd, i: usize) -> Option<usize> {
    match stack_of(t, ag, i) {
        StackOf::Own(h) | StackOf::Forward(h) => Some(h),
        StackOf::Empty => None,
    }
}

/// The innermost Python frame open when slice `h` began. For an op that is its enclosing frame;
/// a `record_function` begins inside the Python call that opens it and outlives it, so torch
/// (whose tree is built from start times) puts it under that call: the frames after its parent
/// that are still open at its start are searched.
fn innermost_open_frame(t: &Trace, h: usize) -> u32 {
    let s = &t.slices;
    let p = s.parent[h];
    if s.kind[h] == SliceKind::UserAnnotation {
        let lo = if p == NONE { 0 } else { p as usize + 1 };
        let start = s.start[h];
        for j in (lo..h).rev().take(100_000) {
            if s.track[j] == s.track[h]
                && s.kind[j] == SliceKind::PythonFunction
                && s.end(j) > start
            {
                return j as u32;
            }
        }
    }
    let mut x = p;
    while x != NONE && s.kind[x as usize] != SliceKind::PythonFunction {
        x = s.parent[x as usize];
    }
    x
}

/// The `python_function` frames enclosing slice `i` (through its launch, or the forward op of
/// its autograd node), innermost first: slice indices.
pub fn stack_frames(t: &Trace, ag: &Autograd, i: usize) -> Vec<u32> {
    let s = &t.slices;
    if i >= s.len() {
        return Vec::new();
    }
    let Some(host) = stack_host(t, ag, i) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut p = innermost_open_frame(t, host);
    let mut guard = 0;
    while p != NONE && guard < 100_000 {
        if s.kind[p as usize] == SliceKind::PythonFunction {
            out.push(p);
        }
        p = s.parent[p as usize];
        guard += 1;
    }
    out
}

/// The stack as torch reports it: frame names, innermost first, torch's filter applied.
pub fn torch_stack(t: &Trace, ag: &Autograd, i: usize) -> Vec<String> {
    stack_frames(t, ag, i)
        .into_iter()
        .map(|f| t.str(t.slices.name[f as usize]).to_owned())
        .filter(|n| torch_keeps(n))
        .collect()
}

/// One frame of a stack as the details panel shows it: its name, and where it was called from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frame {
    pub slice: u32,
    pub name: String,
    /// `file:line` of the call that made this frame (torch 2.15's `CallFrom`).
    pub call_from: Option<String>,
    pub user: bool,
}

/// The stack of slice `i` with call lines, innermost first (torch's filter applied).
pub fn frames(t: &Trace, ag: &Autograd, i: usize) -> Vec<Frame> {
    stack_frames(t, ag, i)
        .into_iter()
        .filter_map(|f| {
            let name = t.str(t.slices.name[f as usize]);
            torch_keeps(name).then(|| Frame {
                slice: f,
                name: name.to_owned(),
                call_from: t.slice_arg_str(f as usize, CALL_FROM).map(str::to_owned),
                user: is_user_frame(name),
            })
        })
        .collect()
}

/// A line of user code: the file, the line (the call's when known, else the function's first),
/// the function.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
    pub function: String,
    /// `line` is the line of the call (from `CallFrom`), not the function's first line.
    pub exact: bool,
}

impl SourceLine {
    /// `model.py:42 forward`, or `model.py(40): forward` when only the function is known.
    pub fn label(&self) -> String {
        if self.exact {
            format!("{}:{} {}", self.file, self.line, self.function)
        } else {
            format!("{}({}): {}", self.file, self.line, self.function)
        }
    }
}

/// The source line of slice `i`: see the module doc.
pub fn source_line(t: &Trace, ag: &Autograd, i: usize) -> Option<SourceLine> {
    let fr = stack_frames(t, ag, i);
    let k = fr
        .iter()
        .position(|&f| is_user_frame(t.str(t.slices.name[f as usize])))?;
    let (file, first, func) = parse_frame(t.str(t.slices.name[fr[k] as usize]))?;
    let call = k
        .checked_sub(1)
        .and_then(|c| t.slice_arg_str(fr[c] as usize, CALL_FROM))
        .and_then(|cf| cf.rsplit_once(':'))
        .filter(|(f, _)| *f == file)
        .and_then(|(_, l)| l.parse::<u32>().ok());
    Some(SourceLine {
        file: file.to_owned(),
        line: call.unwrap_or(first),
        function: func.to_owned(),
        exact: call.is_some(),
    })
}

/// One row of "group by source line".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SourceRow {
    pub source: SourceLine,
    /// Top-level ops (no op above them) run from this line in forward.
    pub ops: u64,
    /// Their host time.
    pub host_ns: Ns,
    /// Host time of the backward nodes of those ops (their `evaluate_function` wrappers).
    pub backward_host_ns: Ns,
    pub kernels: u64,
    /// GPU time of the kernels, memcpy and memset launched from this line in forward…
    pub gpu_ns: Ns,
    /// …and by the backward of the ops it ran.
    pub backward_gpu_ns: Ns,
}

/// GPU and host time grouped by source line, most GPU time first (then host time, then name).
/// Slices that reach no user frame are left out; `unattributed_gpu_ns` says how much GPU time
/// that is.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct SourceTable {
    pub rows: Vec<SourceRow>,
    pub unattributed_gpu_ns: Ns,
    /// GPU time of work without a launching call at all (no correlation).
    pub unlaunched_gpu_ns: Ns,
}

/// Per python frame, its source line when it is the innermost user frame of what runs inside it
/// directly (memoized: the stack walk is shared by every op under the same frames).
struct Lines<'a> {
    t: &'a Trace,
    ag: &'a Autograd,
    memo: FxHashMap<u32, Option<u32>>,
    keys: Vec<SourceLine>,
    ids: FxHashMap<SourceLine, u32>,
}

impl Lines<'_> {
    fn of(&mut self, i: usize) -> Option<u32> {
        let host = stack_host(self.t, self.ag, i)?;
        // The innermost python frame above the host decides; ops under one frame share it.
        let p = innermost_open_frame(self.t, host);
        if p == NONE {
            return None;
        }
        if let Some(&v) = self.memo.get(&p) {
            return v;
        }
        let v = source_line(self.t, self.ag, host).map(|l| {
            let next = self.keys.len() as u32;
            *self.ids.entry(l.clone()).or_insert_with(|| {
                self.keys.push(l);
                next
            })
        });
        self.memo.insert(p, v);
        v
    }
}

pub fn source_table(t: &Trace, ag: &Autograd) -> SourceTable {
    source_table_masked(t, ag, Mask::ALL)
}

/// [`source_table`] over the slices `keep` passes (a scope, [`super::scope`]).
pub fn source_table_masked(t: &Trace, ag: &Autograd, keep: Mask<'_>) -> SourceTable {
    let s = &t.slices;
    let mut lines = Lines {
        t,
        ag,
        memo: FxHashMap::default(),
        keys: Vec::new(),
        ids: FxHashMap::default(),
    };
    let mut rows: FxHashMap<u32, SourceRow> = FxHashMap::default();
    let mut out = SourceTable::default();
    let new_row = |l: &SourceLine| SourceRow {
        source: l.clone(),
        ops: 0,
        host_ns: 0,
        backward_host_ns: 0,
        kernels: 0,
        gpu_ns: 0,
        backward_gpu_ns: 0,
    };
    let has_op_above = |i: usize| {
        let mut p = s.parent[i];
        while p != NONE {
            if s.kind[p as usize] == SliceKind::CpuOp {
                return true;
            }
            p = s.parent[p as usize];
        }
        false
    };
    for i in 0..s.len() {
        if s.kind[i] != SliceKind::CpuOp || !keep.has(i) || has_op_above(i) {
            continue;
        }
        // Looked up once: the anchors are runs, each lookup a binary search.
        let anchor = ag.anchor.get(i);
        let backward = anchor != NONE;
        // A backward node's wrapper counts for the forward op's line.
        let at = if backward { anchor as usize } else { i };
        let Some(id) = lines.of(at) else { continue };
        let r = rows
            .entry(id)
            .or_insert_with(|| new_row(&lines.keys[id as usize]));
        if backward {
            r.backward_host_ns += s.dur[i];
        } else {
            r.ops += 1;
            r.host_ns += s.dur[i];
        }
    }
    let g = &t.gpu;
    for r in 0..g.slice.len() {
        let k = g.slice[r] as usize;
        if !keep.has(k) {
            continue;
        }
        let d = s.dur[k];
        if g.launch[r] == NONE {
            out.unlaunched_gpu_ns += d;
            continue;
        }
        let backward = ag.anchor_of(t, k) != NONE;
        match lines.of(k) {
            Some(id) => {
                let row = rows
                    .entry(id)
                    .or_insert_with(|| new_row(&lines.keys[id as usize]));
                row.kernels += 1;
                if backward {
                    row.backward_gpu_ns += d;
                } else {
                    row.gpu_ns += d;
                }
            }
            None => out.unattributed_gpu_ns += d,
        }
    }
    out.rows = rows.into_values().collect();
    crate::sort::by(&mut out.rows, |a, b| {
        (b.gpu_ns + b.backward_gpu_ns)
            .cmp(&(a.gpu_ns + a.backward_gpu_ns))
            .then((b.host_ns + b.backward_host_ns).cmp(&(a.host_ns + a.backward_host_ns)))
            .then_with(|| a.source.cmp(&b.source))
    });
    out
}

/// The slices a source-line row stands for: the top-level ops run from that line in forward,
/// in slice order ("show in timeline").
pub fn source_slices(t: &Trace, ag: &Autograd, line: &SourceLine) -> Vec<u32> {
    let s = &t.slices;
    let mut memo: FxHashMap<u32, bool> = FxHashMap::default();
    let mut out = Vec::new();
    for i in 0..s.len() {
        if s.kind[i] != SliceKind::CpuOp || ag.anchor.get(i) != NONE {
            continue;
        }
        let mut p = s.parent[i];
        let mut top = true;
        while p != NONE {
            if s.kind[p as usize] == SliceKind::CpuOp {
                top = false;
                break;
            }
            p = s.parent[p as usize];
        }
        if !top {
            continue;
        }
        let f = innermost_open_frame(t, i);
        let hit = *memo
            .entry(f)
            .or_insert_with(|| source_line(t, ag, i).as_ref() == Some(line));
        if hit {
            out.push(i as u32);
        }
    }
    out
}

/// Whether slice `i` is a module's call frame (`nn.Module: Linear_0`).
pub fn is_module_frame(t: &Trace, i: usize) -> bool {
    t.slices.kind[i] == SliceKind::PythonFunction
        && t.str(t.slices.name[i]).starts_with(MODULE_PREFIX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::analysis::autograd::autograd;
    use crate::view::testutil::trace_json;

    #[test]
    fn frames_parse_and_user_code_is_told_from_torch() {
        assert_eq!(
            parse_frame("model.py(40): forward"),
            Some(("model.py", 40, "forward"))
        );
        assert_eq!(
            parse_frame("a/b (x).py(7): <lambda>"),
            Some(("a/b (x).py", 7, "<lambda>"))
        );
        assert_eq!(parse_frame("nn.Module: Linear_0"), None);
        assert_eq!(parse_frame("<built-in function linear>"), None);
        assert!(is_user_frame("model.py(40): forward"));
        assert!(!is_user_frame("torch/nn/modules/linear.py(130): forward"));
        assert!(!is_user_frame("nn.Module: Linear_0"));
        assert!(!torch_keeps("torch/autograd/__init__.py(255): backward"));
        assert!(torch_keeps("torch/_tensor.py(566): backward"));
    }

    #[test]
    fn a_kernel_gets_the_call_line_of_the_user_frame_and_backward_the_forward_line() {
        let t = trace_json(concat!(
            r#"{"ph":"X","cat":"python_function","name":"train.py(10): step","pid":1,"tid":1,"ts":0,"dur":1000},"#,
            r#"{"ph":"X","cat":"python_function","name":"model.py(40): forward","pid":1,"tid":1,"ts":1,"dur":400,"args":{"CallFrom":"train.py:12"}},"#,
            r#"{"ph":"X","cat":"python_function","name":"nn.Module: Linear_0","pid":1,"tid":1,"ts":2,"dur":100,"args":{"CallFrom":"model.py:42"}},"#,
            r#"{"ph":"X","cat":"python_function","name":"torch/nn/modules/linear.py(130): forward","pid":1,"tid":1,"ts":3,"dur":90,"args":{"CallFrom":"torch/nn/modules/module.py:1787"}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":10,"dur":50,"args":{"Sequence number":5,"Fwd thread id":0}},"#,
            r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":5,"args":{"correlation":1}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":200,"dur":20},"#,
            r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":205,"dur":5,"args":{"correlation":2}},"#,
            r#"{"ph":"X","cat":"python_function","name":"torch/_tensor.py(566): backward","pid":1,"tid":1,"ts":500,"dur":400,"args":{"CallFrom":"train.py:14"}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: AddmmBackward0","pid":1,"tid":1,"ts":510,"dur":100,"args":{"Sequence number":5,"Fwd thread id":1}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"AddmmBackward0","pid":1,"tid":1,"ts":511,"dur":90,"args":{"Sequence number":5,"Fwd thread id":1}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":512,"dur":80},"#,
            r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":513,"dur":5,"args":{"correlation":3}},"#,
            r#"{"ph":"X","cat":"kernel","name":"gemm_fwd","pid":0,"tid":7,"ts":30,"dur":100,"args":{"device":0,"stream":7,"correlation":1}},"#,
            r#"{"ph":"X","cat":"kernel","name":"mul_k","pid":0,"tid":7,"ts":230,"dur":10,"args":{"device":0,"stream":7,"correlation":2}},"#,
            r#"{"ph":"X","cat":"kernel","name":"gemm_bwd","pid":0,"tid":7,"ts":600,"dur":200,"args":{"device":0,"stream":7,"correlation":3}},"#,
            r#"{"ph":"X","cat":"kernel","name":"orphan","pid":0,"tid":7,"ts":900,"dur":7,"args":{"device":0,"stream":7}}"#
        ));
        let ag = autograd(&t);
        let find = |n: &str| {
            (0..t.slices.len())
                .find(|&i| t.str(t.slices.name[i]) == n)
                .unwrap()
        };
        let fwd = source_line(&t, &ag, find("gemm_fwd")).unwrap();
        assert_eq!(fwd.label(), "model.py:42 forward");
        let bwd = source_line(&t, &ag, find("gemm_bwd")).unwrap();
        assert_eq!(bwd, fwd, "a backward kernel points at its forward line");
        // aten::mul runs in forward itself: only the function is known.
        let mul = source_line(&t, &ag, find("mul_k")).unwrap();
        assert_eq!(mul.label(), "model.py(40): forward");
        assert_eq!(
            torch_stack(&t, &ag, find("aten::mm")),
            [
                "torch/nn/modules/linear.py(130): forward",
                "nn.Module: Linear_0",
                "model.py(40): forward",
                "train.py(10): step"
            ]
        );
        // The wrapper keeps its own stack.
        assert_eq!(
            torch_stack(
                &t,
                &ag,
                find("autograd::engine::evaluate_function: AddmmBackward0")
            ),
            ["torch/_tensor.py(566): backward", "train.py(10): step"]
        );
        let tab = source_table(&t, &ag);
        let row = |l: &str| tab.rows.iter().find(|r| r.source.label() == l).unwrap();
        let r = row("model.py:42 forward");
        assert_eq!((r.ops, r.host_ns, r.backward_host_ns), (1, 50_000, 100_000));
        assert_eq!(
            (r.kernels, r.gpu_ns, r.backward_gpu_ns),
            (2, 100_000, 200_000)
        );
        let m = row("model.py(40): forward");
        assert_eq!((m.ops, m.gpu_ns), (1, 10_000));
        assert_eq!(tab.rows[0].source.label(), "model.py:42 forward");
        assert_eq!(tab.unlaunched_gpu_ns, 7_000);
        assert_eq!(source_slices(&t, &ag, &fwd), [find("aten::addmm") as u32]);
        assert_eq!(source_slices(&t, &ag, &mul), [find("aten::mul") as u32]);
        assert_eq!(tab.unattributed_gpu_ns, 0);
    }
}
