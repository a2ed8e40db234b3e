//! The `tracelight analyze --json` object (DESIGN §5): one [`Analysis`] per trace holds every
//! analysis once; [`analyze_json`] lays several out as the contract says (times in µs as floats,
//! sizes in bytes as integers), adding `ranks` and `straggler` when there is more than one trace.

use crate::analysis::{
    flops::{summarize, FlopsSummary},
    gpu::{gpu_summary, GpuSummary},
    kernels::{categories, kernel_table, Categories, KernelTable},
    launch::{launch_stats, sync_groups, sync_points, LaunchStats, SyncGroup},
    memory::{headline_peak, memory_summary, DeviceMemory},
    ops::{op_table, OpOptions, OpTable},
    recommend::{recommend, Recommendation},
    steps::{steps, Step, CATEGORIES},
};
use crate::model::Trace;
use serde_json::{json, Value};

/// Everything the summary and the JSON show for one trace.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub path: String,
    pub events: u64,
    pub ops: OpTable,
    pub kernels: KernelTable,
    pub categories: Categories,
    pub gpu: GpuSummary,
    pub steps: Vec<Step>,
    pub memory: Vec<DeviceMemory>,
    pub launch: LaunchStats,
    pub sync: Vec<SyncGroup>,
    pub flops: FlopsSummary,
    pub recommendations: Vec<Recommendation>,
    pub rank: Option<i64>,
    pub warnings: Vec<String>,
}

impl Analysis {
    pub fn of(path: &str, t: &Trace) -> Analysis {
        let ops = op_table(t, OpOptions::default());
        let kernels = kernel_table(t);
        let cats = categories(&kernels);
        let gpu = gpu_summary(t);
        let steps = steps(t);
        let memory = memory_summary(t);
        let launch = launch_stats(t);
        let sync = sync_groups(&sync_points(t));
        let flops = summarize(t, gpu.window_ns);
        let recommendations = recommend(t, &gpu, &steps, &memory, &launch, &sync, &kernels);
        Analysis {
            path: path.to_owned(),
            events: t.event_count,
            ops,
            kernels,
            categories: cats,
            gpu,
            steps,
            memory,
            launch,
            sync,
            flops,
            recommendations,
            rank: t
                .meta
                .distributed
                .as_ref()
                .and_then(|d| d.rank)
                .or_else(|| crate::ingest::ranks::rank_from_name(path)),
            warnings: t.warnings.lines(),
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

fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

fn ops_json(a: &Analysis) -> Vec<Value> {
    a.ops
        .rows
        .iter()
        .map(|r| {
            json!({
                "name": r.name,
                "calls": r.calls,
                "self_cpu_us": us(r.self_cpu_ns),
                "cpu_total_us": us(r.cpu_total_ns),
                "self_device_us": us(r.self_device_ns),
                "device_total_us": us(r.device_total_ns),
                "self_cpu_mem_bytes": r.self_cpu_mem_bytes,
                "cpu_mem_bytes": r.cpu_mem_bytes,
                "self_device_mem_bytes": r.self_device_mem_bytes,
                "device_mem_bytes": r.device_mem_bytes,
                "flops": r.flops,
                "flops_source": r.flops_source,
                "on_device": r.on_device,
            })
        })
        .collect()
}

fn kernels_json(a: &Analysis) -> Vec<Value> {
    a.kernels
        .rows
        .iter()
        .map(|k| {
            json!({
                "name": k.name,
                "calls": k.calls,
                "total_us": us(k.total_ns),
                "avg_us": k.avg_ns / 1e3,
                "min_us": us(k.min_ns),
                "max_us": us(k.max_ns),
                "category": k.category,
                "fine_category": k.fine_category,
                "launching_op": k.launching_op,
            })
        })
        .collect()
}

/// One trace's part of the object (everything but `files`, `ranks`, `straggler`).
pub fn trace_json(a: &Analysis) -> Value {
    let mut cats = serde_json::Map::new();
    for (k, v) in &a.categories.seed {
        cats.insert((*k).to_owned(), json!(us(*v)));
    }
    let t = &a.gpu.temporal;
    let (peak_alloc, peak_res) = headline_peak(&a.memory);
    let steps: Vec<Value> = a
        .steps
        .iter()
        .map(|s| {
            let mut o = serde_json::Map::new();
            o.insert("name".into(), json!(s.name));
            o.insert("dur_us".into(), json!(us(s.dur_ns)));
            for (k, c) in CATEGORIES.iter().enumerate() {
                o.insert(format!("{c}_us"), json!(us(s.parts_ns[k])));
            }
            Value::Object(o)
        })
        .collect();
    json!({
        "ops": ops_json(a),
        "kernels": kernels_json(a),
        "categories": cats,
        "fine_categories": a.categories.fine.iter().map(|(k, v)| json!({"name": k, "us": us(*v)})).collect::<Vec<_>>(),
        "gpu": {
            "utilization": a.gpu.utilization,
            "busy_us": us(a.gpu.busy_ns),
            "idle_us": us(a.gpu.idle_ns),
            "window_us": us(a.gpu.window_ns),
            "temporal": {
                "kernel_span_us": us(t.kernel_span_ns),
                "busy_us": us(t.busy_ns),
                "compute_us": us(t.compute_ns),
                "non_compute_us": us(t.non_compute_ns),
                "idle_us": us(t.idle_ns),
            },
            "comm_us": us(a.gpu.overlap.comm_ns),
            "exposed_comm_us": us(a.gpu.overlap.exposed_comm_ns),
            "overlap_pct": a.gpu.overlap.overlap_pct,
        },
        "steps": steps,
        "memory": {
            "peak_allocated_bytes": peak_alloc,
            "peak_reserved_bytes": peak_res,
        },
        "flops": a.flops,
        "recommendations": a.recommendations,
    })
}

/// The whole `analyze --json` object for one or more traces.
pub fn analyze_json(all: &[Analysis]) -> Value {
    let files: Vec<Value> = all
        .iter()
        .map(|a| json!({"path": a.path, "format": "kineto", "events": a.events}))
        .collect();
    let warnings: Vec<String> = all
        .iter()
        .flat_map(|a| a.warnings.iter().map(move |w| format!("{}: {w}", a.path)))
        .collect();
    let mut obj = match all.first() {
        Some(a) if all.len() == 1 => trace_json(a),
        _ => {
            // Several traces: the per-trace objects are under `traces`, the first one's tables on
            // top so single-trace scripts keep working.
            let mut first = all.first().map(trace_json).unwrap_or_else(|| json!({}));
            if let Value::Object(o) = &mut first {
                o.insert(
                    "traces".into(),
                    Value::Array(all.iter().map(trace_json).collect()),
                );
            }
            first
        }
    };
    if let Value::Object(o) = &mut obj {
        o.insert("files".into(), Value::Array(files));
        o.insert("warnings".into(), json!(warnings));
        if all.len() > 1 {
            let (ranks, straggler) = ranks_json(all);
            o.insert("ranks".into(), ranks);
            o.insert("straggler".into(), straggler);
        }
    }
    obj
}

/// Per-rank step time / compute / comm / idle and the straggler (see [`super::ranks`]).
fn ranks_json(all: &[Analysis]) -> (Value, Value) {
    let refs: Vec<&Analysis> = all.iter().collect();
    let (rows, straggler) = super::ranks::ranks(&refs);
    let ranks: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "rank": r.rank,
                "file": r.file,
                "step_time_us": us(r.step_time_ns),
                "compute_us": us(r.compute_ns),
                "comm_us": us(r.comm_ns),
                "idle_us": us(r.idle_ns),
                "exposed_comm_us": us(r.exposed_comm_ns),
            })
        })
        .collect();
    let straggler = match straggler {
        Some(s) => json!({"rank": s.rank, "vs_median": s.vs_median}),
        None => Value::Null,
    };
    (Value::Array(ranks), straggler)
}
