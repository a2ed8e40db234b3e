//! One trace's tables restricted to a scope (a step, an annotation region, a time window; see
//! [`crate::analysis::scope`] for how events at a window's edge count): what the page's scope
//! picker shows on the Overview, Operators, Kernels and Modules tabs and what
//! `tracelight analyze --json --scope` / `table --scope` print. The same builders as the whole
//! trace's ([`Analysis::of`]), over the scope's events.

use super::analysis::Analysis;
use crate::analysis::{
    autograd::backward_table_masked,
    graphs::{gpu_health_masked, graphs_masked},
    kernels::{categories, kernel_table_masked},
    memory::memory_summary_in,
    mfu::summarize_calls,
    modules::module_table_masked,
    ops::{op_table_masked, LaunchTree, OpOptions},
    roofline::{call_costs, roofline},
    scope::{Mask, ScopeSpec, TimeScope},
    source::source_table_masked,
    steps::{breakdown_without, Step},
};
use crate::model::{Trace, NONE};
use serde_json::{json, Value};

/// The parts of [`Analysis`] a scope does not restrict: the per-step distribution (it is the
/// trace's steps by definition), and the analyses whose windows are their own (idle causes and
/// launch delays over the step window, HTA's temporal breakdown, the per-op memory table, the
/// recommendations built from them, the collectives matched across ranks). Named in the JSON's
/// `scope.whole_trace`.
pub const WHOLE_TRACE: &[&str] = &[
    "per_step",
    "idle_causes",
    "launch",
    "gpu.temporal_hta",
    "gpu.idle_gaps",
    "memory.ops",
    "recommendations",
    "categories_kempnerforge_literal_order",
];

impl Analysis {
    /// This trace's tables over `scope`: ops, kernels and their categories, GPU utilization,
    /// busy time, temporal breakdown and overlap over the windows, one step-breakdown row per
    /// window (its own annotation left out, as the step annotations are), peak memory in the
    /// windows, FLOPs and MFU of the calls in the scope over the windows' length, the roofline,
    /// modules, source lines, forward ↔ backward, graph replays and the GPU health line. The
    /// rest ([`WHOLE_TRACE`]) is the whole trace's, as in `self`.
    pub fn scoped(&self, t: &Trace, scope: &TimeScope) -> Analysis {
        let keep_v = scope.slice_mask(t);
        let keep = Mask(Some(&keep_v));
        let (mut ops, tree, _) =
            op_table_masked(t, OpOptions::default(), keep, &|ts| scope.contains(ts));
        let tree = LaunchTree::from(tree);
        let costs: Vec<_> = call_costs(t, &tree)
            .into_iter()
            .filter(|c| keep.has(c.slice as usize))
            .collect();
        let mut kernels = kernel_table_masked(t, keep);
        let gpu = crate::analysis::gpu::gpu_summary_in(t, &scope.merged);
        let mut own: Vec<u32> = scope
            .windows
            .iter()
            .map(|w| w.slice)
            .filter(|&s| s != NONE)
            .collect();
        own.sort_unstable();
        let spans: Vec<_> = scope
            .windows
            .iter()
            .map(|w| (w.start_ns, w.end_ns))
            .collect();
        let steps = breakdown_without(t, &spans, &own)
            .into_iter()
            .zip(&scope.windows)
            .map(|(parts, w)| Step {
                name: w.label.clone(),
                slice: w.slice,
                start_ns: w.start_ns,
                dur_ns: w.end_ns - w.start_ns,
                parts_ns: parts,
            })
            .collect();
        let flops = summarize_calls(t, &costs, gpu.window_ns);
        let mut roof = roofline(t, &tree, &costs);
        roof.launched_ns = (0..tree.slice.len())
            .filter(|&e| tree.parent[e] == NONE && keep.has(tree.slice[e] as usize))
            .map(|e| tree.device_net[e])
            .sum();
        for r in &mut ops.rows {
            r.pct_of_roof = roof.op(&r.name).and_then(|x| x.rating.pct_of_roof);
        }
        for k in &mut kernels.rows {
            k.pct_of_roof = roof.kernel(&k.name).and_then(|x| x.rating.pct_of_roof);
        }
        let ag = &self.autograd;
        Analysis {
            categories: categories(&kernels),
            ops,
            kernels,
            gpu,
            steps,
            memory: memory_summary_in(t, &scope.merged),
            flops,
            roofline: roof,
            modules: module_table_masked(t, ag, keep),
            sources: source_table_masked(t, ag, keep),
            backward: backward_table_masked(t, ag, keep),
            graphs: graphs_masked(t, keep),
            health: gpu_health_masked(t, keep),
            ..self.clone()
        }
    }
}

/// The JSON's `scope` object: what was asked, the windows it named, what is not restricted.
pub fn scope_json(spec: &ScopeSpec, scope: &TimeScope) -> Value {
    json!({
        "spec": spec.text(),
        "label": spec.label(),
        "total_us": scope.total_ns() as f64 / 1e3,
        "windows": scope.windows.iter().map(|w| json!({
            "label": w.label,
            "start_ns": w.start_ns,
            "end_ns": w.end_ns,
        })).collect::<Vec<_>>(),
        "counting": "host events by their start, whole; GPU work by its launching call's start; \
                     utilization and the step breakdown over the windows, clipped",
        "whole_trace": WHOLE_TRACE,
    })
}
