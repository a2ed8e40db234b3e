//! Forward ↔ backward: which forward op each autograd node differentiates.
//!
//! Definition (torch's own, `profiler_kineto.cpp` `generateForwardBackwardLink`, which draws the
//! trace's `fwdbwd` flows): autograd stamps every op that records a grad node with the thread's
//! current `Sequence number`; the backward node that node becomes runs as the op
//! `XBackward0` (inside its `autograd::engine::evaluate_function: XBackward0` wrapper), with the
//! same `Sequence number` and a `Fwd thread id` > 0 naming the forward thread. The forward op of
//! sequence number N is the *last* op to start with N on the forward thread (the innermost one:
//! `aten::addmm` inside `aten::linear`, both stamped N), as Kineto's map keeps the last it sees.
//! Checked against the `fwdbwd` flows and against the autograd graph itself (each module's
//! grad_fn nodes, by construction) on `tests/fixtures/torch-2.15-cpu` (`tests/modules.rs`).
//!
//! `Fwd thread id` is the profiler's own small thread number, not a trace `tid`: when forward ops
//! with sequence numbers sit on more than one host thread, each `Fwd thread id` value is mapped to
//! the track on which most of its sequence numbers find a forward op.

use super::scope::Mask;
use crate::model::{Ns, SliceKind, StrId, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

pub const SEQUENCE_NUMBER: &str = "Sequence number";
pub const FWD_THREAD_ID: &str = "Fwd thread id";
/// The autograd engine's wrapper around each backward node.
pub const EVALUATE_PREFIX: &str = "autograd::engine::evaluate_function: ";

/// The pairs, and for every slice the forward op whose backward it runs in.
#[derive(Debug, Clone, Default)]
pub struct Autograd {
    /// Backward nodes (the `XBackward0` op and its `evaluate_function` wrapper), sorted.
    pub bwd: Vec<u32>,
    /// The forward op of each, parallel to `bwd`.
    pub fwd: Vec<u32>,
    /// Per slice: the forward op of the innermost backward node enclosing it (itself included),
    /// [`NONE`] outside backward. Kernels launched in backward are reached through their launch.
    pub anchor: Anchors,
    /// Backward nodes whose sequence number found no forward op (the forward ran before the
    /// profiling window, or on a thread without recorded ops).
    pub unmatched: u64,
}

impl Autograd {
    /// The forward op that backward node `b` differentiates.
    pub fn forward_of(&self, b: u32) -> Option<u32> {
        let k = self.bwd.binary_search(&b).ok()?;
        self.fwd.get(k).copied()
    }

    /// The backward nodes of forward op `f` (wrappers and inner nodes both), in slice order.
    pub fn backward_of(&self, f: u32) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .fwd
            .iter()
            .zip(&self.bwd)
            .filter(|(&x, _)| x == f)
            .map(|(_, &b)| b)
            .collect();
        v.sort_unstable();
        v
    }

    /// The forward op whose backward slice `i` (or the kernel launched by `i`) runs in.
    pub fn anchor_of(&self, t: &Trace, i: usize) -> u32 {
        let host = t.gpu.row(i as u32).map_or(i as u32, |r| t.gpu.launch[r]);
        self.anchor.get(host as usize)
    }
}

/// [`Autograd::anchor`] as runs of equal values over slice indices. A backward node's subtree is
/// one contiguous range of slices (parents precede their children, a track's slices are one
/// range), so there are about two runs per outermost backward node instead of 4 bytes per slice:
/// the page holds this for the whole session, and a dense column was 2.4 MB on a 304 MB trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Anchors {
    /// Run `k` covers slices `at[k] .. at[k + 1]` (the last to `len`); `at[0] == 0`, increasing.
    at: Vec<u32>,
    /// The value of each run; neighbours differ.
    val: Vec<u32>,
    len: u32,
}

impl Anchors {
    /// The runs of `dense` (one value per slice).
    pub fn from_dense(dense: &[u32]) -> Anchors {
        let mut a = Anchors {
            len: dense.len() as u32,
            ..Anchors::default()
        };
        for (i, &v) in dense.iter().enumerate() {
            if a.val.last() != Some(&v) {
                a.at.push(i as u32);
                a.val.push(v);
            }
        }
        a.at.shrink_to_fit();
        a.val.shrink_to_fit();
        a
    }

    /// From [`Anchors::runs`]' parts; `None` when they do not describe runs over `len` slices.
    pub fn from_runs(at: Vec<u32>, val: Vec<u32>, len: u32) -> Option<Anchors> {
        let starts_at_zero = at.first().map_or(len == 0, |&f| f == 0);
        let increasing = at.windows(2).all(|w| w[0] < w[1]);
        let inside = at.last().is_none_or(|&l| l < len);
        (at.len() == val.len() && starts_at_zero && increasing && inside).then_some(Anchors {
            at,
            val,
            len,
        })
    }

    /// The runs' starts, their values and the slice count (for `report::analysis_wire`).
    pub fn runs(&self) -> (&[u32], &[u32], u32) {
        (&self.at, &self.val, self.len)
    }

    /// Slice `i`'s anchor; [`NONE`] past the end.
    pub fn get(&self, i: usize) -> u32 {
        if i >= self.len as usize {
            return NONE;
        }
        let k = self.at.partition_point(|&a| a as usize <= i);
        k.checked_sub(1)
            .and_then(|k| self.val.get(k).copied())
            .unwrap_or(NONE)
    }

    /// Slices covered.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Whether a backward node is the engine's wrapper (its children hold the node itself).
pub fn is_wrapper(name: &str) -> bool {
    name.starts_with(EVALUATE_PREFIX)
}

/// Pairs backward nodes with forward ops by sequence number. O(n) plus a sort of the stamped ops.
pub fn autograd(t: &Trace) -> Autograd {
    let s = &t.slices;
    let n = s.len();
    // (seq, fwd thread id or 0 for forward ops, slice)
    let mut fwd_ops: Vec<(i64, u32, u32)> = Vec::new(); // (seq, track, slice)
    let mut bwd_ops: Vec<(i64, i64, u32)> = Vec::new(); // (fwd tid, seq, slice)
    for i in 0..n {
        if s.kind[i] != SliceKind::CpuOp {
            continue;
        }
        let Some(seq) = t.slice_arg_int(i, SEQUENCE_NUMBER).filter(|&q| q >= 0) else {
            continue;
        };
        match t.slice_arg_int(i, FWD_THREAD_ID).unwrap_or(0) {
            f if f > 0 => bwd_ops.push((f, seq, i as u32)),
            _ => fwd_ops.push((seq, s.track[i], i as u32)),
        }
    }
    // The last forward op to start with each (track, seq): slices are in (track, start) order,
    // so the last one pushed wins.
    let mut last: FxHashMap<(u32, i64), u32> = FxHashMap::default();
    for &(seq, track, i) in &fwd_ops {
        last.insert((track, seq), i);
    }
    let mut tracks: Vec<u32> = fwd_ops.iter().map(|x| x.1).collect();
    tracks.sort_unstable();
    tracks.dedup();
    // Each Fwd thread id value -> the track where most of its sequence numbers find an op.
    let mut thread_track: FxHashMap<i64, u32> = FxHashMap::default();
    if tracks.len() == 1 {
        for &(f, _, _) in &bwd_ops {
            thread_track.insert(f, tracks[0]);
        }
    } else if tracks.len() > 1 {
        let mut hits: FxHashMap<(i64, u32), u64> = FxHashMap::default();
        for &(f, seq, _) in &bwd_ops {
            for &tr in &tracks {
                if last.contains_key(&(tr, seq)) {
                    *hits.entry((f, tr)).or_default() += 1;
                }
            }
        }
        let mut best: Vec<((i64, u32), u64)> = hits.into_iter().collect();
        // Most hits first, then the lowest track, so the choice is deterministic.
        best.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0 .1.cmp(&b.0 .1)));
        for ((f, tr), _) in best {
            thread_track.entry(f).or_insert(tr);
        }
    }
    let mut out = Autograd::default();
    let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(bwd_ops.len());
    for &(f, seq, b) in &bwd_ops {
        match thread_track
            .get(&f)
            .and_then(|tr| last.get(&(*tr, seq)).copied())
        {
            Some(fw) => pairs.push((b, fw)),
            None => out.unmatched += 1,
        }
    }
    pairs.sort_unstable();
    out.bwd = pairs.iter().map(|p| p.0).collect();
    out.fwd = pairs.iter().map(|p| p.1).collect();
    // Anchors top-down: parents precede children in slice order.
    let mut anchor = vec![NONE; n];
    let mut k = 0;
    for i in 0..n {
        while k < out.bwd.len() && (out.bwd[k] as usize) < i {
            k += 1;
        }
        anchor[i] = if out.bwd.get(k) == Some(&(i as u32)) {
            out.fwd[k]
        } else {
            let p = s.parent[i];
            if p == NONE {
                NONE
            } else {
                anchor[p as usize]
            }
        };
    }
    out.anchor = Anchors::from_dense(&anchor);
    out
}

/// One (forward op, backward node) pair of names, merged over all pairs: "group by forward op".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BackwardRow {
    /// The forward op (`aten::addmm`).
    pub forward: String,
    /// The backward node (`AddmmBackward0`, its `evaluate_function` prefix dropped).
    pub backward: String,
    pub pairs: u64,
    /// Host time of the forward ops.
    pub forward_host_ns: Ns,
    /// GPU time of the work launched inside the forward ops.
    pub forward_gpu_ns: Ns,
    /// Host time of the backward nodes (the `evaluate_function` wrapper where there is one).
    pub backward_host_ns: Ns,
    /// GPU time launched inside the backward nodes.
    pub backward_gpu_ns: Ns,
}

/// The forward ops an op-table row is the backward of: for a backward node's row (`AddmmBackward0`
/// or its `autograd::engine::evaluate_function: AddmmBackward0` wrapper) the forward ops its
/// nodes were paired with (by sequence number, [`backward_table`]), most pairs first; empty for
/// any other row. What the Operators tab's "Backward of" column shows.
pub fn backward_of<'a>(rows: &'a [BackwardRow], op_name: &str) -> Vec<&'a str> {
    let node = op_name.strip_prefix(EVALUATE_PREFIX).unwrap_or(op_name);
    let mut v: Vec<(&str, u64)> = Vec::new();
    for r in rows.iter().filter(|r| r.backward == node) {
        match v.iter_mut().find(|(f, _)| *f == r.forward) {
            Some(x) => x.1 += r.pairs,
            None => v.push((&r.forward, r.pairs)),
        }
    }
    crate::sort::by(&mut v, |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    v.into_iter().map(|(f, _)| f).collect()
}

/// Forward ↔ backward as a table, most backward GPU time first (then host, then names).
pub fn backward_table(t: &Trace, ag: &Autograd) -> Vec<BackwardRow> {
    backward_table_masked(t, ag, Mask::ALL)
}

/// [`backward_table`] over the slices `keep` passes (a scope, [`super::scope`]): a pair counts
/// when either side is in the scope, each side's times only when that side is (the forward op by
/// its start, the backward node by its own, GPU work by its launch).
pub fn backward_table_masked(t: &Trace, ag: &Autograd, keep: Mask<'_>) -> Vec<BackwardRow> {
    let s = &t.slices;
    // One node per pair: the wrapper when it encloses the inner node of the same forward op.
    let mut nodes: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for (&b, &f) in ag.bwd.iter().zip(&ag.fwd) {
        let p = s.parent[b as usize];
        let inner_of_wrapper = p != NONE && ag.forward_of(p) == Some(f);
        if !inner_of_wrapper {
            nodes.entry(f).or_default().push(b);
        }
    }
    // GPU time launched inside each forward op (its launches' ancestors) and in each backward.
    let mut fwd_gpu: FxHashMap<u32, Ns> = FxHashMap::default();
    let mut bwd_gpu: FxHashMap<u32, Ns> = FxHashMap::default();
    let g = &t.gpu;
    for r in 0..g.slice.len() {
        let l = g.launch[r];
        if l == NONE || !keep.has(g.slice[r] as usize) {
            continue;
        }
        let d = s.dur[g.slice[r] as usize];
        let a = ag.anchor.get(l as usize);
        if a != NONE {
            *bwd_gpu.entry(a).or_default() += d;
            continue;
        }
        let mut p = s.parent[l as usize];
        while p != NONE {
            if nodes.contains_key(&p) {
                *fwd_gpu.entry(p).or_default() += d;
                break;
            }
            p = s.parent[p as usize];
        }
    }
    let mut rows: FxHashMap<(StrId, String), BackwardRow> = FxHashMap::default();
    let mut fwds: Vec<&u32> = nodes.keys().collect();
    fwds.sort_unstable();
    for &f in fwds {
        let mine: Vec<u32> = nodes[&f]
            .iter()
            .copied()
            .filter(|&b| keep.has(b as usize) || keep.has(f as usize))
            .collect();
        for &b in &mine {
            let bname = t.str(s.name[b as usize]);
            let bname = bname
                .strip_prefix(EVALUATE_PREFIX)
                .unwrap_or(bname)
                .to_owned();
            let r = rows
                .entry((s.name[f as usize], bname.clone()))
                .or_insert_with(|| BackwardRow {
                    forward: t.str(s.name[f as usize]).to_owned(),
                    backward: bname,
                    pairs: 0,
                    forward_host_ns: 0,
                    forward_gpu_ns: 0,
                    backward_host_ns: 0,
                    backward_gpu_ns: 0,
                });
            r.pairs += 1;
            if keep.has(b as usize) {
                r.backward_host_ns += s.dur[b as usize];
            }
        }
        // The forward side once per forward op, on its first node's row.
        if let Some(&b) = mine.first() {
            let bname = t.str(s.name[b as usize]);
            let bname = bname
                .strip_prefix(EVALUATE_PREFIX)
                .unwrap_or(bname)
                .to_owned();
            if let Some(r) = rows.get_mut(&(s.name[f as usize], bname)) {
                if keep.has(f as usize) {
                    r.forward_host_ns += s.dur[f as usize];
                }
                r.forward_gpu_ns += fwd_gpu.get(&f).copied().unwrap_or(0);
                r.backward_gpu_ns += bwd_gpu.get(&f).copied().unwrap_or(0);
            }
        }
    }
    let mut out: Vec<BackwardRow> = rows.into_values().collect();
    crate::sort::by(&mut out, |a, b| {
        b.backward_gpu_ns
            .cmp(&a.backward_gpu_ns)
            .then(b.backward_host_ns.cmp(&a.backward_host_ns))
            .then_with(|| a.forward.cmp(&b.forward))
            .then_with(|| a.backward.cmp(&b.backward))
    });
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::view::testutil::trace_json;

    #[test]
    fn anchor_runs_answer_as_the_dense_column() {
        // Runs of every length, NONE between them, a change at the first and the last slice.
        let mut x: u64 = 0x9E37_79B9;
        let mut dense = Vec::new();
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = if x.is_multiple_of(3) {
                NONE
            } else {
                (x % 5) as u32
            };
            dense.extend(std::iter::repeat_n(v, (x >> 8) as usize % 9 + 1));
        }
        let a = Anchors::from_dense(&dense);
        assert_eq!(a.len(), dense.len());
        for (i, &v) in dense.iter().enumerate() {
            assert_eq!(a.get(i), v, "slice {i}");
        }
        assert_eq!(a.get(dense.len()), NONE);
        let (at, val, len) = a.runs();
        assert!(at.len() < dense.len() / 2, "{} runs", at.len());
        let b = Anchors::from_runs(at.to_vec(), val.to_vec(), len).unwrap();
        assert_eq!(a, b);
        // Parts that are not runs over `len` slices.
        assert!(Anchors::from_runs(vec![1], vec![0], 4).is_none());
        assert!(Anchors::from_runs(vec![0, 0], vec![0, 1], 4).is_none());
        assert!(Anchors::from_runs(vec![0, 4], vec![0, 1], 4).is_none());
        assert!(Anchors::from_runs(vec![0], vec![], 4).is_none());
        assert!(Anchors::from_runs(vec![], vec![], 0).is_some());
        assert_eq!(Anchors::from_dense(&[]).get(0), NONE);
    }

    #[test]
    fn backward_nodes_pair_with_the_last_forward_op_of_their_sequence_number() {
        let t = trace_json(concat!(
            r#"{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":0,"dur":50,"args":{"Sequence number":7,"Fwd thread id":0}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"aten::t","pid":1,"tid":1,"ts":1,"dur":5,"args":{"Sequence number":7,"Fwd thread id":0}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":10,"dur":30,"args":{"Sequence number":8,"Fwd thread id":0}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: AddmmBackward0","pid":1,"tid":1,"ts":100,"dur":40,"args":{"Sequence number":8,"Fwd thread id":1}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"AddmmBackward0","pid":1,"tid":1,"ts":101,"dur":38,"args":{"Sequence number":8,"Fwd thread id":1}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":102,"dur":10},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"TBackward0","pid":1,"tid":1,"ts":150,"dur":5,"args":{"Sequence number":7,"Fwd thread id":1}},"#,
            r#"{"ph":"X","cat":"cpu_op","name":"MulBackward0","pid":1,"tid":1,"ts":160,"dur":5,"args":{"Sequence number":99,"Fwd thread id":1}}"#
        ));
        let find = |n: &str| {
            (0..t.slices.len())
                .find(|&i| t.str(t.slices.name[i]) == n)
                .unwrap() as u32
        };
        let a = autograd(&t);
        assert_eq!(
            a.forward_of(find("AddmmBackward0")),
            Some(find("aten::addmm"))
        );
        assert_eq!(
            a.forward_of(find("autograd::engine::evaluate_function: AddmmBackward0")),
            Some(find("aten::addmm"))
        );
        // aten::t is the last op stamped 7 (aten::linear, which encloses it, is stamped 7 too).
        assert_eq!(a.forward_of(find("TBackward0")), Some(find("aten::t")));
        assert_eq!(a.unmatched, 1, "MulBackward0's forward is not in the trace");
        assert_eq!(a.anchor.get(find("aten::mm") as usize), find("aten::addmm"));
        assert_eq!(a.anchor.get(find("aten::linear") as usize), NONE);
        assert_eq!(a.backward_of(find("aten::addmm")).len(), 2);
        let tab = backward_table(&t, &a);
        let row = |f: &str, b: &str| {
            tab.iter()
                .find(|r| r.forward == f && r.backward == b)
                .unwrap()
        };
        // The wrapper's 40 us, not the inner node's 38 us as well.
        let r = row("aten::addmm", "AddmmBackward0");
        assert_eq!(
            (r.pairs, r.backward_host_ns, r.forward_host_ns),
            (1, 40_000, 30_000)
        );
        assert_eq!(row("aten::t", "TBackward0").pairs, 1);
        assert_eq!(tab.len(), 2);
    }
}
