//! One side of an A/B comparison: a trace, or the ranks of a run, reduced to per-step figures
//! (docs/compare.md). Every time figure is divided by the number of steps the side recorded
//! (summed over its ranks: a rank-step is the unit), so a run of 5 steps compares fairly with one
//! of 6 and a run of 8 ranks with one of 2. Totals over the whole trace are divided, not the time
//! inside the step windows: GPU work launched in the last step often runs after its end and still
//! belongs to it. A trace without `ProfilerStep#N` counts as one step as long as its window.

use crate::analysis::ops::{op_table_indexed, OpOptions};
use crate::analysis::steps::CATEGORIES;
use crate::model::{Ns, SliceKind, Trace, NONE};
use crate::report::json::Analysis;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// Mean, extremes and standard deviation of a set of durations, so step-to-step noise is visible.
#[derive(Debug, Clone, Copy, Serialize, Default, PartialEq)]
pub struct Spread {
    pub n: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// The middle value (the mean of the two middle ones for an even count): unlike the mean,
    /// not pulled by one slow warm-up step.
    pub median: f64,
    /// Sample standard deviation (n − 1); 0 for a single value.
    pub stdev: f64,
}

impl Spread {
    pub fn of(v: &[f64]) -> Spread {
        if v.is_empty() {
            return Spread::default();
        }
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        let mut sorted = v.to_vec();
        crate::sort::by(&mut sorted, |a, b| a.total_cmp(b));
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Spread {
            n,
            mean,
            median,
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            stdev: var.sqrt(),
        }
    }
}

/// One op (by name, or name + input shapes) or one kernel (by name) on one side.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Stat {
    pub name: String,
    pub shapes: Option<String>,
    pub calls: u64,
    /// CPU total for ops, GPU total for kernels, summed over ranks.
    pub total_ns: Ns,
    /// Device total (the op's kernels and its children's) for ops; the GPU total for kernels.
    pub device_ns: Ns,
    /// First start, relative to its rank's first event: the order the program reached it.
    pub first_ns: Ns,
    /// The enclosing op that holds most of its time (for kernels: the op around the launch).
    pub parent: Option<String>,
    /// What a rename of it may pair with ([`super::family`]); `None`: never renamed.
    pub family: Option<String>,
}

/// What a side's FLOP rates rest on (docs/compare.md): the FLOPs the op table counted and
/// how much of the GPU's work those ops are. Rates of two sides whose coverage differs measure
/// different work ([`super::RateCheck`]).
#[derive(Debug, Clone, Copy, Serialize, Default, PartialEq)]
pub struct Coverage {
    /// FLOPs counted per rank-step.
    pub flops_per_step: f64,
    /// Op calls whose FLOPs were counted, per rank-step.
    pub ops_per_step: f64,
    /// Device time of those op calls ÷ the side's GPU time (kernels, copies, memsets), 0..1;
    /// `None` without GPU work.
    pub device_share: Option<f64>,
}

/// How a side was run, where it changes what its figures mean: the accelerator, the world
/// size, torch.compile and CUDA graphs. Differences are said above a comparison
/// ([`super::Diff::setup_notes`]).
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Setup {
    /// The accelerator named by the first rank's `deviceProperties`.
    pub device: Option<String>,
    /// `distributedInfo.world_size` (the largest over the side's ranks).
    pub world_size: Option<i64>,
    /// The name of a compiled region when ops ran under one (`CompiledFunction`, …).
    pub compiled: Option<String>,
    /// Whether kernels were replayed from CUDA graphs (`cudaGraphLaunch` calls).
    pub cuda_graphs: bool,
}

/// One side's per-step figures. Times in ns per step (floats: means).
#[derive(Debug, Clone, Serialize, Default)]
pub struct Side {
    pub label: String,
    pub files: Vec<String>,
    /// (rank, its step times) in rank order; one entry for a single trace.
    pub ranks: Vec<(i64, Spread)>,
    /// Whether the figures are per `ProfilerStep#N` (else per trace window).
    pub has_steps: bool,
    /// Rank-steps the per-step figures divide by.
    pub rank_steps: f64,
    pub step_ns: Spread,
    /// Every rank-step's duration (ns), rank by rank: what [`super::stats`] compares.
    #[serde(skip)]
    pub step_samples: Vec<f64>,
    /// Every rank-step's breakdown (ns, [`CATEGORIES`] order), in the same order; empty without
    /// `ProfilerStep#N`.
    #[serde(skip)]
    pub part_samples: Vec<[f64; 8]>,
    /// Step breakdown (TensorBoard priorities), mean per step, in [`CATEGORIES`] order.
    pub breakdown_ns: [f64; 8],
    pub seed_ns: Vec<(String, f64)>,
    pub fine_ns: Vec<(String, f64)>,
    pub utilization: Option<f64>,
    pub comm_ns: f64,
    pub exposed_comm_ns: f64,
    pub peak_allocated_bytes: Option<i64>,
    pub peak_reserved_bytes: Option<i64>,
    /// Achieved TFLOPS over the step window (mean over ranks).
    pub tflops: Option<f64>,
    /// Achieved TFLOPS while the counted ops' kernels ran (mean over ranks).
    pub tflops_busy: Option<f64>,
    pub mfu: Option<f64>,
    /// The peak MFU is measured against (TFLOPS), mean over ranks.
    pub peak_tflops: Option<f64>,
    pub coverage: Coverage,
    pub setup: Setup,
    pub device: Option<String>,
    pub has_gpu: bool,
    pub ops: Vec<Stat>,
    pub kernels: Vec<Stat>,
    /// Op name → the op name that encloses most of its time (the tree, at name level).
    pub op_parent: BTreeMap<String, String>,
}

impl Side {
    /// A side from one trace or several ranks (each with its analysis), ops keyed by name or by
    /// name + input shapes.
    pub fn of(label: &str, ranks: &[(&Trace, &Analysis)], by_shapes: bool) -> Side {
        let mut side = Side {
            label: label.to_owned(),
            ..Default::default()
        };
        let mut steps_all = Vec::new();
        let mut util = Vec::new();
        let (mut tflops, mut mfu) = (Vec::new(), Vec::new());
        let (mut busy, mut peaks) = (Vec::new(), Vec::new());
        let (mut flops, mut flop_ops, mut flop_dev_ns, mut gpu_ns) = (0.0, 0u64, 0i64, 0i64);
        let mut seed: BTreeMap<String, f64> = BTreeMap::new();
        let mut fine: BTreeMap<String, f64> = BTreeMap::new();
        let mut ops: BTreeMap<(String, Option<String>), Stat> = BTreeMap::new();
        let mut kernels: BTreeMap<(String, Option<String>), Stat> = BTreeMap::new();
        let mut parents: BTreeMap<String, BTreeMap<String, Ns>> = BTreeMap::new();
        for (k, (t, a)) in ranks.iter().enumerate() {
            side.files.push(a.path.clone());
            let durs: Vec<f64> = if a.steps.is_empty() {
                vec![a.gpu.window_ns as f64]
            } else {
                side.has_steps = true;
                a.steps.iter().map(|s| s.dur_ns as f64).collect()
            };
            side.rank_steps += durs.len() as f64;
            side.ranks
                .push((a.rank.unwrap_or(k as i64), Spread::of(&durs)));
            steps_all.extend_from_slice(&durs);
            for s in &a.steps {
                for (c, p) in s.parts_ns.iter().enumerate() {
                    side.breakdown_ns[c] += *p as f64;
                }
                side.part_samples.push(s.parts_ns.map(|p| p as f64));
            }
            for (c, v) in &a.categories.seed {
                *seed.entry((*c).to_owned()).or_default() += *v as f64;
            }
            for (c, v) in &a.categories.fine {
                *fine.entry(c.clone()).or_default() += *v as f64;
            }
            util.extend(a.gpu.utilization);
            side.comm_ns += a.gpu.overlap.comm_ns as f64;
            side.exposed_comm_ns += a.gpu.overlap.exposed_comm_ns as f64;
            if !a.memory.is_empty() {
                let (al, re) = crate::analysis::memory::headline_peak(&a.memory);
                side.peak_allocated_bytes = Some(side.peak_allocated_bytes.unwrap_or(0).max(al));
                side.peak_reserved_bytes = Some(side.peak_reserved_bytes.unwrap_or(0).max(re));
            }
            tflops.extend(a.flops.achieved_tflops_window);
            busy.extend(a.flops.achieved_tflops_device);
            peaks.extend(a.flops.peak_tflops);
            mfu.extend(a.flops.mfu);
            flops += a.flops.total_flops;
            for o in &a.flops.per_op {
                flop_ops += o.calls;
                flop_dev_ns += o.device_ns;
            }
            gpu_ns += a.kernels.total_ns;
            if let Some(w) = t.meta.distributed.as_ref().and_then(|d| d.world_size) {
                side.setup.world_size = Some(side.setup.world_size.unwrap_or(0).max(w));
            }
            if side.device.is_none() {
                side.device.clone_from(&a.flops.device);
            }
            side.has_gpu |= !a.kernels.rows.is_empty();
            let origin = t.time_bounds().map_or(0, |b| b.0);
            op_stats(t, origin, by_shapes, &mut ops, &mut parents);
            kernel_stats(t, a, origin, &mut kernels);
        }
        crate::sort::by_key(&mut side.ranks, |r| r.0);
        side.step_ns = Spread::of(&steps_all);
        let n = side.rank_steps.max(1.0);
        let steps_n = steps_all.len().max(1) as f64;
        side.step_samples = steps_all;
        for p in side.breakdown_ns.iter_mut() {
            *p /= steps_n;
        }
        side.seed_ns = seed.into_iter().map(|(c, v)| (c, v / n)).collect();
        side.fine_ns = fine.into_iter().map(|(c, v)| (c, v / n)).collect();
        side.comm_ns /= n;
        side.exposed_comm_ns /= n;
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        side.utilization = mean(&util);
        side.tflops = mean(&tflops);
        side.tflops_busy = mean(&busy);
        side.peak_tflops = mean(&peaks);
        side.mfu = mean(&mfu);
        side.coverage = Coverage {
            flops_per_step: flops / n,
            ops_per_step: flop_ops as f64 / n,
            device_share: (gpu_ns > 0).then(|| flop_dev_ns as f64 / gpu_ns as f64),
        };
        side.ops = ops.into_values().collect();
        side.kernels = kernels.into_values().collect();
        side.op_parent = parents
            .into_iter()
            .filter_map(|(op, ps)| {
                let best = ps
                    .into_iter()
                    .max_by(|x, y| x.1.cmp(&y.1).then_with(|| y.0.cmp(&x.0)))?;
                Some((op, best.0))
            })
            .collect();
        for o in side.ops.iter_mut() {
            o.parent = side.op_parent.get(&o.name).cloned();
        }
        side.setup.device.clone_from(&side.device);
        side.setup.compiled = side
            .ops
            .iter()
            .filter(|o| o.family.as_deref() == Some(super::family::COMPILED))
            .min_by(|x, y| {
                x.first_ns
                    .cmp(&y.first_ns)
                    .then_with(|| x.name.cmp(&y.name))
            })
            .map(|o| o.name.clone());
        side.setup.cuda_graphs = side.ops.iter().any(|o| {
            matches!(
                o.name.as_str(),
                "cudaGraphLaunch" | "cuGraphLaunch" | "hipGraphLaunch"
            )
        });
        side
    }

    /// A total (summed over ranks) per rank-step.
    pub fn per_step(&self, total_ns: Ns) -> f64 {
        total_ns as f64 / self.rank_steps.max(1.0)
    }

    /// The breakdown's labels, in order.
    pub fn breakdown_labels() -> &'static [&'static str; 8] {
        &CATEGORIES
    }
}

fn merge(into: &mut BTreeMap<(String, Option<String>), Stat>, s: Stat) {
    match into.get_mut(&(s.name.clone(), s.shapes.clone())) {
        Some(e) => {
            e.calls += s.calls;
            e.total_ns += s.total_ns;
            e.device_ns += s.device_ns;
            e.first_ns = e.first_ns.min(s.first_ns);
            if e.parent.is_none() {
                e.parent = s.parent;
            }
        }
        None => {
            into.insert((s.name.clone(), s.shapes.clone()), s);
        }
    }
}

/// CPU-side rows of the operator table (torch `key_averages` semantics), with each row's first
/// start and, per op name, the names of the ops that enclose it, weighted by time.
fn op_stats(
    t: &Trace,
    origin: Ns,
    by_shapes: bool,
    into: &mut BTreeMap<(String, Option<String>), Stat>,
    parents: &mut BTreeMap<String, BTreeMap<String, Ns>>,
) {
    let opts = OpOptions {
        group_by_input_shape: by_shapes,
    };
    let (table, tree, row_of) = op_table_indexed(t, opts);
    let s = &t.slices;
    let mut first = vec![Ns::MAX; table.rows.len()];
    let mut local: FxHashMap<(u32, u32), Ns> = FxHashMap::default();
    for (e, &r) in row_of.iter().enumerate() {
        if r == NONE {
            continue;
        }
        let i = tree.slice[e] as usize;
        first[r as usize] = first[r as usize].min(s.start[i] - origin);
        // The nearest ancestor that is a row and an op (python frames and runtime calls skipped).
        let mut p = tree.parent[e];
        while p != NONE {
            let pk = s.kind[tree.slice[p as usize] as usize];
            if row_of[p as usize] != NONE
                && matches!(pk, SliceKind::CpuOp | SliceKind::UserAnnotation)
            {
                *local.entry((r, row_of[p as usize])).or_default() += s.dur[i];
                break;
            }
            p = tree.parent[p as usize];
        }
    }
    for ((r, p), ns) in local {
        let (name, pname) = (&table.rows[r as usize].name, &table.rows[p as usize].name);
        if name != pname {
            *parents
                .entry(name.clone())
                .or_default()
                .entry(pname.clone())
                .or_default() += ns;
        }
    }
    for (r, row) in table.rows.iter().enumerate() {
        if row.on_device {
            continue;
        }
        merge(
            into,
            Stat {
                name: row.name.clone(),
                shapes: row.input_shapes.clone(),
                calls: row.calls,
                total_ns: row.cpu_total_ns,
                device_ns: row.device_total_ns,
                first_ns: if first[r] == Ns::MAX { 0 } else { first[r] },
                parent: None,
                family: super::family::op_family(&row.name).map(str::to_owned),
            },
        );
    }
}

/// Kernel-table rows (kernels, memcpy, memset), each with its first start and launching op.
fn kernel_stats(
    t: &Trace,
    a: &Analysis,
    origin: Ns,
    into: &mut BTreeMap<(String, Option<String>), Stat>,
) {
    let s = &t.slices;
    let mut first: FxHashMap<&str, Ns> = FxHashMap::default();
    for &i in &t.gpu.slice {
        let i = i as usize;
        if s.kind[i].is_gpu_work() {
            let e = first.entry(t.str(s.name[i])).or_insert(Ns::MAX);
            *e = (*e).min(s.start[i] - origin);
        }
    }
    for k in &a.kernels.rows {
        merge(
            into,
            Stat {
                name: k.name.clone(),
                shapes: None,
                calls: k.calls,
                total_ns: k.total_ns,
                device_ns: k.total_ns,
                first_ns: first.get(k.name.as_str()).copied().unwrap_or(0),
                parent: k.launching_op.clone(),
                family: super::family::kernel_family(&k.name, &k.fine_category),
            },
        );
    }
}
