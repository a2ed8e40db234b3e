//! Op and kernel rows of an A/B diff, matched across the two sides (docs/compare.md):
//!
//! 1. by key: the same name (and the same input shapes when grouping by shapes) — confidence
//!    [`Confidence::Exact`];
//! 2. by name, when grouping by shapes: the same op with other shapes, paired in the order the
//!    program first reached them — [`Confidence::High`];
//! 3. renames, through their lowest common matched parent (TraceLens's tree-diff idea): each
//!    unmatched op or kernel climbs the op tree (kernels start at the op around their launch) to
//!    the nearest op that both sides have. Under one such parent, a kernel first pairs with the
//!    one kernel whose name differs only in its numbers (`ampere_sgemm_32x128_tn` ↔
//!    `ampere_sgemm_64x64_tn`: other tile sizes) — [`MatchedBy::Sizes`], [`Confidence::High`];
//!    then only items of one *family*
//!    pair ([`super::family`]: a gemm kernel with a gemm kernel, an elementwise op with an
//!    elementwise op, and, grouped by shapes, only inputs of the same ranks). When each side has
//!    as many of a family as the other they pair in first-reached order (`aten::cudnn_convolution`
//!    ↔ `aten::miopen_convolution` under `aten::_convolution`): [`Confidence::Medium`] when it is
//!    the only one of its family on each side under a parent below the step, else
//!    [`Confidence::Low`]; otherwise the family's items merge into one row per side (eager
//!    `gelu` + `mul` kernels ↔ one `triton_poi_fused_gelu_mul` kernel), [`Confidence::Low`].
//!    A compiled region (`CompiledFunction`) present on one side only stands for every eager op
//!    left under its parent on the other side: one merged row, [`Confidence::Low`], so a backend
//!    change reads as a change of that parent's work, never as `aten::permute` "→
//!    CompiledFunction".
//!
//! Whatever is left is added or removed. [`MatchOptions::renames`] off skips step 3 (every
//! renamed item is then one removal plus one addition). Rows are sorted by impact: |Δ per step|.

use super::family::COMPILED;
pub use super::matching::{match_rows, Confidence, MatchOptions, MatchedBy, Pairing};
use super::side::{Side, Stat};
use crate::model::Ns;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// On both sides with the same per-step time (to the ns).
    Same,
    Changed,
    Added,
    Removed,
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
    /// How sure the match is; `None` for added and removed rows.
    pub confidence: Option<Confidence>,
    /// The family a rename was matched within ([`super::family`]), for renamed rows.
    pub family: Option<String>,
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

impl DiffRow {
    /// How the row was matched, in words, how sure first (the page's "How matched" column and
    /// the CLI's text say the same): `same name`, `medium: renamed within gemm under aten::mm`.
    pub fn how(&self) -> String {
        let fam = self.family.as_deref().unwrap_or("");
        let via = self.via.as_deref().unwrap_or("");
        let text = match (self.status, self.matched_by) {
            (Status::Added, _) => return "added (no match in A)".into(),
            (Status::Removed, _) => return "removed (no match in B)".into(),
            (_, Some(MatchedBy::Name)) => return "same name".into(),
            (_, Some(MatchedBy::Shapes)) => "same name, other shapes".to_owned(),
            (_, Some(MatchedBy::Sizes)) => format!("same kernel, other sizes, under {via}"),
            (_, Some(MatchedBy::Parent)) if fam == COMPILED => {
                let (na, nb) = (self.a_members.len().max(1), self.b_members.len().max(1));
                let (eager, side) = if self
                    .b_name
                    .as_deref()
                    .is_some_and(|n| super::family::op_family(n) == Some(COMPILED))
                {
                    (na, "B")
                } else {
                    (nb, "A")
                };
                format!(
                    "{side}'s compiled region stands for {eager} eager item{} under {via}",
                    if eager == 1 { "" } else { "s" }
                )
            }
            (_, Some(MatchedBy::Parent))
                if !self.a_members.is_empty() || !self.b_members.is_empty() =>
            {
                format!(
                    "merged {} ↔ {} {fam} under {via}",
                    self.a_members.len().max(1),
                    self.b_members.len().max(1)
                )
            }
            (_, Some(MatchedBy::Parent)) => format!("renamed within {fam} under {via}"),
            (_, None) => return String::new(),
        };
        match self.confidence {
            Some(c) => format!("{}: {text}", c.label()),
            None => text,
        }
    }
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

/// Rows with their figures, sorted by |Δ per step| (then name). `device` picks the measure:
/// device time when true, else the stats' totals (CPU total for ops).
#[allow(clippy::too_many_arguments)]
pub fn diff_rows(
    sa: &[Stat],
    sb: &[Stat],
    side_a: &Side,
    side_b: &Side,
    kernels: bool,
    device: bool,
    step_delta_ns: f64,
    opts: MatchOptions,
) -> Vec<DiffRow> {
    let mut rows: Vec<DiffRow> = match_rows(sa, sb, side_a, side_b, kernels, opts)
        .into_iter()
        .map(|p| {
            let (xa, xb, by, via) = (p.a, p.b, p.by, p.via);
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
                confidence: p.confidence,
                family: p.family,
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
