//! One trace's analyses, computed once ([`Analysis::of`]) and shared by every report (the JSON,
//! the Markdown, the run and diff reports) and by the page. Its own module so the reports that
//! read it (`json`, `run`) depend on it, not on each other.

use crate::analysis::{
    autograd::{autograd, backward_table, Autograd, BackwardRow},
    collectives::{calls, Call},
    gpu::{gpu_summary, temporal_hta_compat, GpuSummary, Temporal},
    graphs::{gpu_health, graphs, GpuHealth, Graphs},
    idle::{idle_causes, IdleCauses},
    kernels::{categories, fine_category_with, kernel_table, Categories, FineRule, KernelTable},
    launch::{launch_stats, sync_groups, sync_points, LaunchStats, SyncGroup},
    memory::{memory_summary, DeviceMemory},
    memory_ops::{op_memory_table, OpMemoryRow},
    mfu::{summarize_calls, FlopsSummary},
    modules::{module_table, ModuleTable},
    ops::{op_table_indexed, LaunchTree, OpOptions, OpTable},
    per_step::{per_step, PerStep},
    recommend::{recommend, Inputs, Recommendation},
    roofline::{call_costs, roofline, CallCost, Roofline},
    source::{source_table, SourceTable},
    steps::{steps, Step},
};
use crate::model::Trace;
use crate::warnings::Severity;
use serde::{Deserialize, Serialize};

/// Everything the summary and the JSON show for one trace. Serde both ways so a reader worker
/// that computed it can hand it to the page ([`crate::report::analysis_wire`]); the per-slice
/// vectors (`autograd`, the modules' frames) go as columns beside it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Analysis {
    pub path: String,
    pub events: u64,
    pub ops: OpTable,
    pub kernels: KernelTable,
    pub categories: Categories,
    pub gpu: GpuSummary,
    /// The temporal breakdown over the events HTA keeps ([`temporal_hta_compat`]).
    pub temporal_hta: Temporal,
    pub steps: Vec<Step>,
    pub memory: Vec<DeviceMemory>,
    /// Per-operator allocations from `[memory]` events ([`op_memory_table`]).
    pub memory_ops: Vec<OpMemoryRow>,
    pub launch: LaunchStats,
    pub sync: Vec<SyncGroup>,
    pub flops: FlopsSummary,
    /// Why the GPU is idle: each idle interval's cause, per device, stream, step and trace.
    pub idle: IdleCauses,
    /// Per op (name and shapes) and kernel: FLOPs, bytes, intensity, bound, % of roof.
    pub roofline: Roofline,
    pub recommendations: Vec<Recommendation>,
    pub rank: Option<i64>,
    /// This rank's collectives, for matching across ranks ([`crate::analysis::collectives`]).
    pub collectives: Vec<Call>,
    /// Forward ↔ backward pairs ([`crate::analysis::autograd`]), kept for the details panel.
    #[serde(skip)]
    pub autograd: Autograd,
    /// The nn.Module tree ([`crate::analysis::modules`]).
    pub modules: ModuleTable,
    /// GPU and host time by line of user code ([`crate::analysis::source`]).
    pub sources: SourceTable,
    /// Forward op ↔ backward node, merged by names.
    pub backward: Vec<BackwardRow>,
    /// CUDA graph replays ([`crate::analysis::graphs`]).
    pub graphs: Graphs,
    /// How much GPU time the op tables attribute, and why not the rest.
    pub health: GpuHealth,
    /// Per op and kernel, the time in each step ([`crate::analysis::per_step`]).
    pub per_step: PerStep,
    /// What the user must know (truncation, dropped or repaired data).
    pub warnings: Vec<String>,
    /// Expected of the producer (flows without a partner …): no figure changes.
    pub info: Vec<String>,
}

/// The analyses of [`Analysis::of`]'s last group, computed together on one thread.
struct Rest {
    gpu: GpuSummary,
    memory: Vec<DeviceMemory>,
    launch: LaunchStats,
    sync: Vec<SyncGroup>,
    modules: ModuleTable,
    sources: SourceTable,
    backward: Vec<BackwardRow>,
    memory_ops: Vec<OpMemoryRow>,
    collectives: Vec<Call>,
    kernels: KernelTable,
    cats: Categories,
    ag: Autograd,
}

/// The half of [`Analysis::of`] that follows the steps and time (steps, idle causes, the per-step
/// and temporal tables, the GPU's health, CUDA graphs): computed on its own, it can travel from
/// another reader worker as JSON ([`Paced::to_json`]) and join the other half
/// ([`Analysis::from_parts`]).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Paced {
    steps: Vec<Step>,
    idle: IdleCauses,
    per_step: PerStep,
    temporal_hta: Temporal,
    health: GpuHealth,
    graphs: Graphs,
}

impl Paced {
    pub fn of(t: &Trace) -> Paced {
        let ((steps, idle), (per_step, temporal_hta, health, graphs)) = crate::par::join(
            || {
                let steps = steps(t);
                let idle = idle_causes(t, &steps);
                (steps, idle)
            },
            || {
                (
                    per_step(t),
                    temporal_hta_compat(t),
                    gpu_health(t),
                    graphs(t),
                )
            },
        );
        Paced {
            steps,
            idle,
            per_step,
            temporal_hta,
            health,
            graphs,
        }
    }

    /// JSON, floats read back exactly (`float_roundtrip`). A non-finite figure is written as
    /// `null` and does not read back: the receiver then computes this half itself.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// What [`Paced::to_json`] wrote; an error for any other bytes.
    pub fn from_json(bytes: &[u8]) -> crate::error::Result<Paced> {
        serde_json::from_slice(bytes)
            .map_err(|e| crate::model::wire::bad(&format!("the analyses of steps and time: {e}")))
    }
}

/// The other half of [`Analysis::of`]: the op, kernel, module and source tables, and what the
/// roofline needs (the op tree and call costs). It stays in the instance that made it.
pub struct Tables {
    rest: Rest,
    op_part: (OpTable, LaunchTree, Vec<CallCost>),
}

impl Tables {
    pub fn of(t: &Trace) -> Tables {
        let (rest, op_part) = crate::par::join(
            || {
                let kernels = kernel_table(t);
                let cats = categories(&kernels);
                let ag = autograd(t);
                Rest {
                    gpu: gpu_summary(t),
                    memory: memory_summary(t),
                    launch: launch_stats(t),
                    sync: sync_groups(&sync_points(t)),
                    modules: module_table(t, &ag),
                    sources: source_table(t, &ag),
                    backward: backward_table(t, &ag),
                    memory_ops: op_memory_table(t),
                    collectives: calls(t),
                    kernels,
                    cats,
                    ag,
                }
            },
            || {
                let (ops, tree, _) = op_table_indexed(t, OpOptions::default());
                let tree = LaunchTree::from(tree);
                let costs = call_costs(t, &tree);
                (ops, tree, costs)
            },
        );
        Tables { rest, op_part }
    }
}

impl Analysis {
    /// This analysis with the kernels' finer categories (rows and totals) under `rules`: a
    /// user's edited rules, applied the same way wherever the categories are shown or exported.
    pub fn with_fine_rules(&self, rules: &[FineRule]) -> Analysis {
        let mut a = self.clone();
        for r in &mut a.kernels.rows {
            r.fine_category = fine_category_with(rules, &r.name, r.kind);
        }
        a.categories = categories(&a.kernels);
        a
    }

    pub fn of(path: &str, t: &Trace) -> Analysis {
        // Independent passes in four groups, on threads where the machine has cores (`par`): on
        // 1 GB the op table and its call costs took 0.9 s, steps and idle causes 0.65 s, the
        // per-step table 0.3 s, the rest 0.4 s, one after the other. Where they run one after the
        // other (wasm) the order sets the peak memory: the idle causes' working sets and the
        // per-step table's run first, while nothing else is kept, and the op tree and call costs
        // (kept until the roofline below) last (a reader worker held 0.71x its file's bytes at the
        // peak in the old order, 0.59x in this one; `examples/worker_peak.rs`).
        let (paced, tables) = crate::par::join(|| Paced::of(t), || Tables::of(t));
        Analysis::from_parts(path, t, paced, tables)
    }

    /// The analysis of `t` from its two halves, each computed from the same model, wherever
    /// (the page's reader workers compute them in two instances at once).
    pub fn from_parts(path: &str, t: &Trace, paced: Paced, tables: Tables) -> Analysis {
        let Paced {
            steps,
            idle,
            per_step,
            temporal_hta,
            health,
            graphs,
        } = paced;
        let Tables { rest, op_part } = tables;
        let (mut ops, tree, costs) = op_part;
        let Rest {
            gpu,
            memory,
            launch,
            sync,
            modules,
            sources,
            backward,
            memory_ops,
            collectives,
            mut kernels,
            cats,
            ag,
        } = rest;
        let flops = summarize_calls(t, &costs, gpu.window_ns);
        let roofline = roofline(t, &tree, &costs);
        for r in &mut ops.rows {
            r.pct_of_roof = roofline.op(&r.name).and_then(|x| x.rating.pct_of_roof);
        }
        for k in &mut kernels.rows {
            k.pct_of_roof = roofline.kernel(&k.name).and_then(|x| x.rating.pct_of_roof);
        }
        let recommendations = recommend(&Inputs {
            t,
            gpu: &gpu,
            steps: &steps,
            memory: &memory,
            launch: &launch,
            sync: &sync,
            kernels: &kernels,
            idle: &idle,
        });
        Analysis {
            modules,
            sources,
            backward,
            graphs,
            health,
            per_step,
            autograd: ag,
            path: path.to_owned(),
            events: t.event_count,
            ops,
            kernels,
            categories: cats,
            gpu,
            temporal_hta,
            steps,
            memory,
            memory_ops,
            launch,
            sync,
            flops,
            idle,
            roofline,
            recommendations,
            rank: t
                .meta
                .distributed
                .as_ref()
                .and_then(|d| d.rank)
                .or_else(|| crate::ingest::ranks::rank_from_name(path)),
            collectives,
            warnings: t.warnings.lines_of(Severity::Warning),
            info: t.warnings.lines_of(Severity::Info),
        }
    }

    /// Mean step time, else the window.
    pub fn step_time_ns(&self) -> i64 {
        if self.steps.is_empty() {
            self.gpu.window_ns
        } else {
            self.steps.iter().map(|s| s.dur_ns).sum::<i64>() / self.steps.len() as i64
        }
    }
}
