//! Linking a Chakra execution trace to the Kineto trace of the same run.
//!
//! Definition (docs/definitions.md, `.et[].link`; PyTorch #122833 / #122948, which added the key
//! for exactly this): an ET node and a Kineto op (`cpu_op` or `user_annotation`) are the same op
//! when the node's `rf_id` equals the op's `Record function id` arg, the names agree, and the time
//! ranges are consistent — ET nodes carry no times of their own, so "overlapping" is checked
//! through the tree: when the node's nearest ET ancestor is linked to a Kineto op on the same
//! thread, the two Kineto ops must overlap in time. HTA matches on `External id`, which is a
//! different counter and links the wrong ops; it is never used here.
//!
//! `Record function id` is absent from traces written before PyTorch 2.4 and 0 in some: such ops are
//! counted and reported, never guessed at (docs/definitions.md).

use crate::model::exec_trace::ExecTrace;
use crate::model::{SliceKind, Trace, NONE, NO_ID};
use serde::Serialize;

/// Per-pair link figures: how many ops linked and why the rest did not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LinkReport {
    /// Kineto `cpu_op` + `user_annotation` slices: the ops an ET can hold.
    pub kineto_ops: u64,
    /// ET nodes, without the observer's own process/thread roots.
    pub et_ops: u64,
    /// Pairs linked.
    pub linked: u64,
    /// Kineto ops without a `Record function id` arg (traces before PyTorch 2.4).
    pub kineto_rf_missing: u64,
    /// Kineto ops whose `Record function id` is 0.
    pub kineto_rf_zero: u64,
    /// Kineto ops with an id the ET does not hold (op absent from the ET).
    pub kineto_not_in_et: u64,
    /// Kineto ops whose id is also another op's (the second and later are not linked).
    pub kineto_rf_duplicate: u64,
    /// Same id, different names.
    pub name_mismatch: u64,
    /// Same id and name, but outside the Kineto op its ET parent links to.
    pub time_mismatch: u64,
    /// ET ops no Kineto op links to (op absent from the Kineto trace, or its id missing there).
    pub et_not_in_kineto: u64,
}

/// The pairs and the report. Slice → node lookups are a binary search.
#[derive(Debug, Clone, Default)]
pub struct EtLink {
    /// (slice, node), sorted by slice.
    pairs: Vec<(u32, u32)>,
    /// Linked slice per node, or [`NONE`].
    slice_of: Vec<u32>,
    pub report: LinkReport,
}

impl EtLink {
    /// The ET node linked to Kineto slice `slice`.
    pub fn node_of(&self, slice: u32) -> Option<u32> {
        let k = self.pairs.partition_point(|&(s, _)| s < slice);
        self.pairs
            .get(k)
            .filter(|&&(s, _)| s == slice)
            .map(|&(_, n)| n)
    }

    /// The Kineto slice linked to ET node `node`.
    pub fn slice_of(&self, node: u32) -> Option<u32> {
        self.slice_of
            .get(node as usize)
            .copied()
            .filter(|&s| s != NONE)
    }

    pub fn pairs(&self) -> &[(u32, u32)] {
        &self.pairs
    }
}

/// Links `et` to `trace`; see the module docs for the definition.
pub fn link(trace: &Trace, et: &ExecTrace) -> EtLink {
    let s = &trace.slices;
    let n = &et.nodes;
    let mut r = LinkReport::default();
    let root: Vec<bool> = (0..n.len()).map(|i| et.is_root(i)).collect();
    r.et_ops = root.iter().filter(|&&x| !x).count() as u64;
    let mut by_rf: Vec<(i64, u32)> = (0..n.len())
        .filter(|&i| !root[i] && n.rf_id[i] != NO_ID)
        .map(|i| (n.rf_id[i], i as u32))
        .collect();
    by_rf.sort_unstable();
    // Candidates: same id, same name; one slice per node.
    let mut cand = vec![NONE; n.len()];
    for i in 0..s.len() {
        if !matches!(s.kind[i], SliceKind::CpuOp | SliceKind::UserAnnotation) {
            continue;
        }
        r.kineto_ops += 1;
        let rf = s.rf_id.get(i);
        if rf == NO_ID {
            r.kineto_rf_missing += 1;
            continue;
        }
        if rf == 0 {
            r.kineto_rf_zero += 1;
            continue;
        }
        let k = by_rf.partition_point(|&(x, _)| x < rf);
        let Some(&(_, node)) = by_rf.get(k).filter(|&&(x, _)| x == rf) else {
            r.kineto_not_in_et += 1;
            continue;
        };
        if trace.str(s.name[i]) != et.str(n.name[node as usize]) {
            r.name_mismatch += 1;
            continue;
        }
        if cand[node as usize] != NONE {
            r.kineto_rf_duplicate += 1;
            continue;
        }
        cand[node as usize] = i as u32;
    }
    // Time consistency through the ET tree.
    let ids = et.id_index();
    let mut pairs = Vec::new();
    for node in 0..n.len() {
        let sl = cand[node];
        if sl == NONE {
            continue;
        }
        if let Some(p) = linked_ancestor(et, &ids, &cand, node) {
            let ps = cand[p] as usize;
            let (a, b) = (sl as usize, ps);
            let same_track = s.track[a] == s.track[b];
            let overlap = s.start[a] <= s.end(b) && s.start[b] <= s.end(a);
            if same_track && !overlap {
                r.time_mismatch += 1;
                continue;
            }
        }
        pairs.push((sl, node as u32));
    }
    pairs.sort_unstable();
    let mut slice_of = vec![NONE; n.len()];
    for &(sl, node) in &pairs {
        slice_of[node as usize] = sl;
    }
    r.linked = pairs.len() as u64;
    r.et_not_in_kineto = r.et_ops - r.linked;
    EtLink {
        pairs,
        slice_of,
        report: r,
    }
}

/// The nearest ancestor (by `ctrl_deps`/`parent`) with a candidate slice; bounded against cycles.
fn linked_ancestor(et: &ExecTrace, ids: &[(i64, u32)], cand: &[u32], node: usize) -> Option<usize> {
    let mut cur = node;
    for _ in 0..4096 {
        let p = ExecTrace::node_by_id(ids, et.nodes.parent[cur])?;
        if p == node {
            return None;
        }
        if cand[p] != NONE {
            return Some(p);
        }
        cur = p;
    }
    None
}

/// Whether `et` was recorded by a process of `trace` (the ET's `pid` is one of the trace's pids):
/// how a run's ET files find their Kineto trace.
pub fn same_process(trace: &Trace, et: &ExecTrace) -> bool {
    et.pid != NO_ID
        && trace
            .processes
            .iter()
            .any(|p| p.pid == crate::model::IdVal::Int(et.pid))
}
