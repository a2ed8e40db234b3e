//! Op and kernel rows of an A/B diff, matched across the two sides (DESIGN §4 "Compare"):
//!
//! 1. by key: the same name (and the same input shapes when grouping by shapes);
//! 2. by name, when grouping by shapes: the same op with other shapes, paired in the order the
//!    program first reached them;
//! 3. through their lowest common matched parent, TraceLens's tree-diff idea: each unmatched op or
//!    kernel climbs the op tree (kernels start at the op around their launch) to the nearest op
//!    that both sides have. Under one such parent, when each side has as many unmatched items as
//!    the other they pair in first-reached order (`aten::cudnn_convolution` ↔
//!    `aten::miopen_convolution` under `aten::_convolution`); otherwise the items merge into one
//!    row per side (eager `aten::gelu` + `aten::mul` ↔ one compiled kernel), so a backend change
//!    reads as a change of that parent's work, never as removals plus additions.
//!
//! Whatever is left is added or removed. Rows are sorted by impact: |Δ per step|.

use super::side::{Side, Stat};
use crate::model::Ns;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// On both sides with the same per-step time (to the ns).
    Same,
    Changed,
    Added,
    Removed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    Name,
    Shapes,
    Parent,
}

/// One matched (or one-sided) op or kernel.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DiffRow {
    /// A's name (B's when added); for a merged group, its first member's.
    pub name: String,
    /// B's name when it differs from A's.
    pub b_name: Option<String>,
    pub shapes: Option<String>,
    pub b_shapes: Option<String>,
    pub status: Status,
    pub matched_by: Option<MatchedBy>,
    /// The common parent a rename was matched through (or, for added/removed items, the nearest
    /// op both sides have above them).
    pub via: Option<String>,
    /// Every name on each side when several merged into this row.
    pub a_members: Vec<String>,
    pub b_members: Vec<String>,
    pub a_calls: u64,
    pub b_calls: u64,
    /// CPU total (ops) or GPU total (kernels), summed over the whole trace and its ranks.
    pub a_ns: Ns,
    pub b_ns: Ns,
    pub a_device_ns: Ns,
    pub b_device_ns: Ns,
    /// The diff's measure (device time or CPU time, see [`super::Diff::measure`]) per step.
    pub a_step_ns: f64,
    pub b_step_ns: f64,
    pub delta_step_ns: f64,
    /// Δ per step ÷ the step-time Δ (signed); `None` when the step time did not change.
    pub share: Option<f64>,
}

/// Sums of the stats on one side of a row.
#[derive(Default)]
struct Acc {
    names: Vec<String>,
    shapes: Option<String>,
    calls: u64,
    total: Ns,
    device: Ns,
}

impl Acc {
    fn of(stats: &[&Stat]) -> Acc {
        let mut a = Acc::default();
        for s in stats {
            a.names.push(s.name.clone());
            if a.shapes.is_none() {
                a.shapes.clone_from(&s.shapes);
            }
            a.calls += s.calls;
            a.total += s.total_ns;
            a.device += s.device_ns;
        }
        a
    }
}

/// What a row is made of before its figures: A's stats, B's stats, how, through which parent.
type Pairing<'a> = (
    Vec<&'a Stat>,
    Vec<&'a Stat>,
    Option<MatchedBy>,
    Option<String>,
);

/// The nearest op above `start` (itself included) that both sides have.
fn common_parent(
    start: Option<&str>,
    parents: &BTreeMap<String, String>,
    common: &BTreeSet<&str>,
) -> Option<String> {
    let mut cur = start?;
    for _ in 0..256 {
        if common.contains(cur) {
            return Some(cur.to_owned());
        }
        cur = parents.get(cur)?.as_str();
    }
    None
}

/// Pairs `a` with `b` (see the module doc). `kernels` says the stats' `parent` is the launching op
/// (itself a candidate), not a parent already resolved from the op tree.
pub fn match_rows<'a>(
    sa: &'a [Stat],
    sb: &'a [Stat],
    side_a: &Side,
    side_b: &Side,
    kernels: bool,
) -> Vec<Pairing<'a>> {
    let mut out: Vec<Pairing<'a>> = Vec::new();
    let key = |s: &Stat| (s.name.clone(), s.shapes.clone());
    let b_index: BTreeMap<(String, Option<String>), usize> =
        sb.iter().enumerate().map(|(k, s)| (key(s), k)).collect();
    let mut b_used = vec![false; sb.len()];
    let mut a_left: Vec<&Stat> = Vec::new();
    for s in sa {
        match b_index.get(&key(s)) {
            Some(&k) => {
                b_used[k] = true;
                out.push((vec![s], vec![&sb[k]], Some(MatchedBy::Name), None));
            }
            None => a_left.push(s),
        }
    }
    let mut b_left: Vec<&Stat> = sb
        .iter()
        .zip(&b_used)
        .filter(|(_, u)| !**u)
        .map(|(s, _)| s)
        .collect();
    // Same name, other shapes.
    if sa.iter().chain(sb).any(|s| s.shapes.is_some()) {
        let mut by_name: BTreeMap<&str, (Vec<&Stat>, Vec<&Stat>)> = BTreeMap::new();
        for s in &a_left {
            by_name.entry(s.name.as_str()).or_default().0.push(s);
        }
        for s in &b_left {
            by_name.entry(s.name.as_str()).or_default().1.push(s);
        }
        let (mut na, mut nb) = (Vec::new(), Vec::new());
        for (_, (mut xa, mut xb)) in by_name {
            crate::sort::by_key(&mut xa, |s| (s.first_ns, s.shapes.clone()));
            crate::sort::by_key(&mut xb, |s| (s.first_ns, s.shapes.clone()));
            let n = xa.len().min(xb.len());
            for k in 0..n {
                out.push((vec![xa[k]], vec![xb[k]], Some(MatchedBy::Shapes), None));
            }
            na.extend_from_slice(&xa[n..]);
            nb.extend_from_slice(&xb[n..]);
        }
        a_left = na;
        b_left = nb;
    }
    // Through the lowest common parent.
    let names_a: BTreeSet<&str> = side_a.ops.iter().map(|s| s.name.as_str()).collect();
    let names_b: BTreeSet<&str> = side_b.ops.iter().map(|s| s.name.as_str()).collect();
    let common: BTreeSet<&str> = names_a.intersection(&names_b).copied().collect();
    let lca = |s: &Stat, side: &Side| {
        let start = if kernels {
            s.parent.as_deref()
        } else {
            side.op_parent.get(&s.name).map(String::as_str)
        };
        common_parent(start, &side.op_parent, &common)
    };
    let mut groups: BTreeMap<Option<String>, (Vec<&Stat>, Vec<&Stat>)> = BTreeMap::new();
    for s in a_left {
        groups.entry(lca(s, side_a)).or_default().0.push(s);
    }
    for s in b_left {
        groups.entry(lca(s, side_b)).or_default().1.push(s);
    }
    for (via, (mut xa, mut xb)) in groups {
        crate::sort::by(&mut xa, |x, y| {
            x.first_ns
                .cmp(&y.first_ns)
                .then_with(|| x.name.cmp(&y.name))
        });
        crate::sort::by(&mut xb, |x, y| {
            x.first_ns
                .cmp(&y.first_ns)
                .then_with(|| x.name.cmp(&y.name))
        });
        if via.is_some() && !xa.is_empty() && !xb.is_empty() {
            if xa.len() == xb.len() {
                for (x, y) in xa.into_iter().zip(xb) {
                    out.push((vec![x], vec![y], Some(MatchedBy::Parent), via.clone()));
                }
            } else {
                out.push((xa, xb, Some(MatchedBy::Parent), via));
            }
            continue;
        }
        for x in xa {
            out.push((vec![x], Vec::new(), None, via.clone()));
        }
        for y in xb {
            out.push((Vec::new(), vec![y], None, via.clone()));
        }
    }
    out
}

/// Rows with their figures, sorted by |Δ per step| (then name). `device` picks the measure:
/// device time when true, else the stats' totals (CPU total for ops).
pub fn diff_rows(
    sa: &[Stat],
    sb: &[Stat],
    side_a: &Side,
    side_b: &Side,
    kernels: bool,
    device: bool,
    step_delta_ns: f64,
) -> Vec<DiffRow> {
    let mut rows: Vec<DiffRow> = match_rows(sa, sb, side_a, side_b, kernels)
        .into_iter()
        .map(|(xa, xb, by, via)| {
            let (a, b) = (Acc::of(&xa), Acc::of(&xb));
            let measure = |x: &Acc| if device { x.device } else { x.total };
            let a_step = side_a.per_step(measure(&a));
            let b_step = side_b.per_step(measure(&b));
            let d = b_step - a_step;
            let status = match (xa.is_empty(), xb.is_empty()) {
                (false, true) => Status::Removed,
                (true, false) => Status::Added,
                _ if d == 0.0 => Status::Same,
                _ => Status::Changed,
            };
            let name = a
                .names
                .first()
                .or(b.names.first())
                .cloned()
                .unwrap_or_default();
            let b_first = b.names.first().cloned();
            DiffRow {
                b_name: b_first.filter(|n| *n != name && !xa.is_empty()),
                name,
                shapes: if xa.is_empty() {
                    b.shapes.clone()
                } else {
                    a.shapes.clone()
                },
                b_shapes: b
                    .shapes
                    .clone()
                    .filter(|s| Some(s) != a.shapes.as_ref() && !xa.is_empty()),
                status,
                matched_by: by,
                via,
                a_members: if a.names.len() > 1 {
                    a.names.clone()
                } else {
                    Vec::new()
                },
                b_members: if b.names.len() > 1 {
                    b.names.clone()
                } else {
                    Vec::new()
                },
                a_calls: a.calls,
                b_calls: b.calls,
                a_ns: a.total,
                b_ns: b.total,
                a_device_ns: a.device,
                b_device_ns: b.device,
                a_step_ns: a_step,
                b_step_ns: b_step,
                delta_step_ns: d,
                share: (step_delta_ns != 0.0).then(|| d / step_delta_ns),
            }
        })
        .collect();
    crate::sort::by(&mut rows, |x, y| {
        y.delta_step_ns
            .abs()
            .total_cmp(&x.delta_step_ns.abs())
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.shapes.cmp(&y.shapes))
    });
    rows
}
