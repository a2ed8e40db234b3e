//! The `tracelight analyze --json` object (docs/definitions.md): one [`Analysis`] per trace holds
//! every analysis once; [`analyze_json`] lays several out as the contract says (times in µs as
//! floats, sizes in bytes as integers), adding `ranks` and `straggler` when there is more than one
//! trace.

pub use super::analysis::Analysis;
use crate::analysis::{gpu::Temporal, memory::headline_peak, steps::CATEGORIES};

use serde_json::{json, Value};

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
                "pct_of_roof": r.pct_of_roof,
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
                "tensor_cores": k.tensor_cores.map(|t| t.slug()),
                "launching_op": k.launching_op,
                "pct_of_roof": k.pct_of_roof,
            })
        })
        .collect()
}

/// One roofline group (an op with its shapes, or a kernel) as the JSON writes it.
fn roof_json(
    name: &str,
    shapes: Option<&str>,
    family: Option<&str>,
    x: &crate::analysis::roofline::RoofOp,
) -> Value {
    let mut o = json!({
        "name": name,
        "calls": x.calls,
        "flops": x.flops,
        "bytes": x.bytes,
        "device_us": us(x.device_ns),
        "dtype": x.dtype,
        "unit": x.unit,
        "ran_on": x.ran_on,
        "intensity": x.intensity,
        "achieved_tflops": x.achieved_tflops,
        "achieved_gbs": x.achieved_gbs,
        "peak_tflops": x.rating.peak_tflops,
        "roof_tflops": x.rating.roof_tflops,
        "bound": x.rating.bound,
        "pct_of_roof": x.rating.pct_of_roof,
    });
    if let Value::Object(m) = &mut o {
        if let Some(s) = shapes {
            m.insert("shapes".into(), json!(s));
        }
        if let Some(f) = family {
            m.insert("family".into(), json!(f));
        }
    }
    o
}

/// The roofline (see [`crate::analysis::roofline`]): the device row, per op and shapes, per
/// kernel.
fn roofline_json(a: &Analysis) -> Value {
    let r = &a.roofline;
    let kernels: Vec<Value> = r
        .kernels
        .iter()
        .map(|k| {
            let as_op = crate::analysis::roofline::RoofOp {
                name: k.name.clone(),
                shapes: String::new(),
                family: String::new(),
                calls: k.calls,
                flops: k.flops,
                bytes: k.bytes,
                device_ns: k.device_ns,
                dtype: k.dtype.clone(),
                unit: k.unit.clone(),
                ran_on: k.ran_on.clone(),
                intensity: k.intensity,
                achieved_tflops: k.achieved_tflops,
                achieved_gbs: k.achieved_gbs,
                rating: k.rating,
            };
            roof_json(&k.name, None, None, &as_op)
        })
        .collect();
    json!({
        "device": r.device,
        "covered_us": us(r.covered_ns),
        "launched_us": us(r.launched_ns),
        "transfer_calls": r.transfer_calls,
        "transfer_us": us(r.transfer_ns),
        "ops": r.ops.iter().map(|x| roof_json(&x.name, Some(&x.shapes), Some(&x.family), x)).collect::<Vec<_>>(),
        "kernels": kernels,
    })
}

/// `{cause: µs}` of a [`crate::analysis::idle::ByCause`].
fn by_cause_json(v: &crate::analysis::idle::ByCause) -> Value {
    let mut m = serde_json::Map::new();
    for (c, ns) in v {
        m.insert(c.slug().to_owned(), json!(us(*ns)));
    }
    Value::Object(m)
}

/// Why the GPU is idle (see [`crate::analysis::idle`]): per cause for the trace, per device,
/// stream and step, and the kept intervals.
fn idle_json(a: &Analysis) -> Value {
    let i = &a.idle;
    let causes: Vec<Value> = i
        .causes
        .iter()
        .map(|c| {
            json!({
                "cause": c.cause.slug(),
                "us": us(c.ns),
                "share_of_window": c.share,
                "intervals": c.intervals,
                "top": c.top.iter().map(|(n, ns)| json!({"name": n, "us": us(*ns)})).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "window_us": us(i.window_ns()),
        "window_from_steps": i.window_from_steps,
        "idle_us": us(i.idle_ns),
        "causes": causes,
        "devices": i.devices.iter().map(|d| json!({
            "device": d.device, "busy_us": us(d.busy_ns), "idle_us": us(d.idle_ns),
            "causes": by_cause_json(&d.by_cause),
        })).collect::<Vec<_>>(),
        "streams": i.streams.iter().map(|d| json!({
            "device": d.device, "stream": d.stream, "idle_us": us(d.idle_ns),
            "causes": by_cause_json(&d.by_cause),
        })).collect::<Vec<_>>(),
        "steps": i.steps.iter().map(|d| json!({
            "name": d.name, "dur_us": us(d.dur_ns), "idle_us": us(d.idle_ns),
            "causes": by_cause_json(&d.by_cause),
        })).collect::<Vec<_>>(),
        "intervals": i.intervals.iter().map(|x| json!({
            "device": x.device, "start_us": us(x.start_ns), "dur_us": us(x.end_ns - x.start_ns),
            "cause": x.cause.slug(), "evidence": x.evidence,
        })).collect::<Vec<_>>(),
    })
}

fn temporal_json(t: &Temporal) -> Value {
    json!({
        "kernel_span_us": us(t.kernel_span_ns),
        "busy_us": us(t.busy_ns),
        "compute_us": us(t.compute_ns),
        "non_compute_us": us(t.non_compute_ns),
        "idle_us": us(t.idle_ns),
    })
}

/// Launch delays (HTA's definition over the sound pairs) split into queued behind earlier work
/// on the stream and waited with the stream idle; see [`crate::analysis::launch`].
fn launch_json(a: &Analysis) -> Value {
    let l = &a.launch;
    json!({
        "launched": l.launched,
        "median_delay_us": us(l.median_delay_ns),
        "p95_delay_us": us(l.p95_delay_ns),
        "max_delay_us": us(l.max_delay_ns),
        "median_queued_us": us(l.median_queued_ns),
        "queued_total_us": us(l.queued_total_ns),
        "median_ready_us": us(l.median_ready_ns),
        "p95_ready_us": us(l.p95_ready_ns),
        "max_ready_us": us(l.max_ready_ns),
        "ready_total_us": us(l.ready_total_ns),
        "mostly_queued": l.mostly_queued,
        "late_launches": l.late_launches,
        "late_launch_idle_us": us(l.late_launch_idle_ns),
        "blocking_pairs": l.blocking_pairs,
        "short_kernels": l.short_kernels,
    })
}

/// One trace's part of the object (everything but `files`, `ranks`, `straggler`).
pub fn trace_json(a: &Analysis) -> Value {
    let mut cats = serde_json::Map::new();
    for (k, v) in &a.categories.seed {
        cats.insert((*k).to_owned(), json!(us(*v)));
    }
    let mut cats_literal = serde_json::Map::new();
    for (k, v) in &a.categories.seed_literal {
        cats_literal.insert((*k).to_owned(), json!(us(*v)));
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
        // KempnerForge's literal rule order (matmul before comm), only for scripts that compare
        // with that project's summary.md; `categories` is the headline (comm tested first).
        "categories_kempnerforge_literal_order": cats_literal,
        "fine_categories": a.categories.fine.iter().map(|(k, v)| json!({"name": k, "us": us(*v)})).collect::<Vec<_>>(),
        "gpu": {
            "utilization": a.gpu.utilization,
            "busy_us": us(a.gpu.busy_ns),
            "idle_us": us(a.gpu.idle_ns),
            "window_us": us(a.gpu.window_ns),
            "temporal": temporal_json(t),
            // What HTA 0.5.0's get_temporal_breakdown computes (its event selection; see
            // analysis::gpu::temporal_hta_compat), beside the definition above.
            "temporal_hta": temporal_json(&a.temporal_hta),
            "comm_us": us(a.gpu.overlap.comm_ns),
            "exposed_comm_us": us(a.gpu.overlap.exposed_comm_ns),
            "overlap_pct": a.gpu.overlap.overlap_pct,
        },
        "steps": steps,
        "memory": {
            "peak_allocated_bytes": peak_alloc,
            "peak_reserved_bytes": peak_res,
            "reserved_recorded": a.memory.iter().any(|m| m.reserved_recorded),
            "ops": a.memory_ops,
        },
        "flops": a.flops,
        "roofline": roofline_json(a),
        "idle_causes": idle_json(a),
        "launch": launch_json(a),
        "recommendations": a.recommendations,
        "modules": super::modules::modules_json(&a.modules),
        "modules_outside_gpu_us": us(a.modules.outside_gpu_ns),
        "source_lines": super::modules::source_json(&a.sources),
        "backward": super::modules::backward_json(&a.backward),
        "backward_unmatched": a.autograd.unmatched,
        "cuda_graphs": super::modules::graphs_json(&a.graphs),
        "gpu_health": super::modules::health_json(&a.health),
        "per_step": super::modules::per_step_json(&a.per_step),
    })
}

/// The whole `analyze --json` object for one or more traces.
pub fn analyze_json(all: &[Analysis]) -> Value {
    analyze_json_with(all, &[])
}

/// Memory files a run folder pairs with a trace: the allocator snapshot's (peak active, peak
/// reserved) bytes and the memory timeline's peak total.
#[derive(Debug, Clone, Copy, Default)]
pub struct RankMemory {
    pub snapshot_peak: Option<(u64, u64)>,
    pub timeline_peak: Option<i64>,
}

/// [`analyze_json`] with each trace's paired memory files (index = trace index; missing entries
/// = none).
pub fn analyze_json_with(all: &[Analysis], memory: &[RankMemory]) -> Value {
    let files: Vec<Value> = all
        .iter()
        .map(|a| json!({"path": a.path, "format": "kineto", "events": a.events}))
        .collect();
    let warnings: Vec<String> = all
        .iter()
        .flat_map(|a| a.warnings.iter().map(move |w| format!("{}: {w}", a.path)))
        .collect();
    let info: Vec<String> = all
        .iter()
        .flat_map(|a| a.info.iter().map(move |w| format!("{}: {w}", a.path)))
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
        o.insert("info".into(), json!(info));
        if all.len() > 1 {
            ranks_json(all, memory).insert_into(o);
        }
    }
    obj
}

/// Per-rank step time / compute / comm / idle and the straggler (see [`super::ranks`]), plus the
/// run's collectives and alignment (see [`super::run`]).
fn ranks_json(all: &[Analysis], peaks: &[RankMemory]) -> super::run_json::RunJson {
    super::run_json::run_json(&super::run::run_figures(&rank_inputs(all, peaks)))
}

/// The traces as ranks of one run: rank = the trace's own (`distributedInfo`, else its name),
/// else its position.
pub fn rank_inputs<'a>(
    all: &'a [Analysis],
    memory: &[RankMemory],
) -> Vec<super::run::RankInput<'a>> {
    all.iter()
        .enumerate()
        .map(|(k, a)| super::run::RankInput {
            rank: a.rank.unwrap_or(k as i64),
            analysis: a,
            snapshot_peak: memory.get(k).and_then(|m| m.snapshot_peak),
            timeline_peak: memory.get(k).and_then(|m| m.timeline_peak),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::kernels::{default_fine_rules, FineRule};
    use crate::ingest::{load_bytes, Loaded};

    #[test]
    fn edited_fine_rules_reclassify_rows_and_totals() {
        let json = br#"{"traceEvents":[
            {"ph":"X","cat":"kernel","name":"mystery_kernel","pid":0,"tid":7,"ts":0,"dur":100,"args":{"device":0,"stream":7}},
            {"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":200,"dur":50,"args":{"device":0,"stream":7}}
        ]}"#;
        let Ok(Loaded::Trace(t)) = load_bytes("t.json", json) else {
            panic!("the hand-built trace did not load");
        };
        let a = Analysis::of("t.json", &t);
        let fine = |a: &Analysis, c: &str| a.categories.fine.iter().find(|x| x.0 == c).map(|x| x.1);
        assert_eq!(fine(&a, "other"), Some(100_000));
        assert_eq!(fine(&a, "gemm"), Some(50_000));
        // The default rules as an edit change nothing.
        let same = a.with_fine_rules(&default_fine_rules());
        assert_eq!(same.categories.fine, a.categories.fine);
        // A user's rule ahead of the defaults takes the mystery kernel; the seed stays as it was.
        let mut rules = default_fine_rules();
        rules.insert(
            0,
            FineRule {
                category: "mine".into(),
                contains: vec!["myst".into()],
            },
        );
        let b = a.with_fine_rules(&rules);
        assert_eq!(fine(&b, "mine"), Some(100_000));
        assert_eq!(fine(&b, "other"), None);
        assert_eq!(fine(&b, "gemm"), Some(50_000));
        assert_eq!(b.categories.seed, a.categories.seed);
        assert!(b.kernels.rows.iter().any(|r| r.fine_category == "mine"));
    }
}
