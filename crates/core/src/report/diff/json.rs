//! `tracelight diff A B --json` (docs/definitions.md). The contract's fields stay as they were:
//! `ops` and `kernels` rows with `name`, `a_us`, `b_us`, `delta_us`, `a_calls`, `b_calls`, sorted
//! by |`delta_us`| (whole-trace totals: CPU total for ops, GPU total for kernels). Each row adds
//! the per-step figures, its share of the step-time change, its status and how it was matched; the
//! object adds the overview (`step`, `breakdown`, `categories`, `fine_categories`, `gpu`, `memory`,
//! `flops` with the FLOP coverage of each side and whether the rates compare, `setup_notes`,
//! `verdict`), `figures` (every figure a CI gate can bound, by the name `--fail-if` takes:
//! [`super::figures`]) and, for runs, `ranks`. Each row says how it was matched (`how`,
//! `matched_by`, `family`, `confidence`); `renames` says whether renames were matched at all.

use super::rows::DiffRow;
use super::side::Spread;
use super::{Diff, Line};
use serde_json::{json, Value};

fn us(ns: f64) -> f64 {
    ns / 1e3
}

fn spread(s: &Spread) -> Value {
    json!({"n": s.n, "mean_us": us(s.mean), "median_us": us(s.median), "min_us": us(s.min),
           "max_us": us(s.max), "stdev_us": us(s.stdev)})
}

fn time_lines(v: &[Line]) -> Vec<Value> {
    v.iter()
        .map(|l| {
            json!({"name": l.name, "a_us": l.a.map(us), "b_us": l.b.map(us),
                   "delta_us": l.delta().map(us)})
        })
        .collect()
}

fn pair(d: &Diff, name: &str, scale: f64) -> Value {
    match d.figure(name) {
        Some(l) => json!({"a": l.a.map(|x| x * scale), "b": l.b.map(|x| x * scale),
                          "delta": l.delta().map(|x| x * scale)}),
        None => Value::Null,
    }
}

fn bytes(d: &Diff, name: &str) -> Value {
    let Some(l) = d.figure(name) else {
        return Value::Null;
    };
    let i = |x: Option<f64>| x.map(|v| v as i64);
    json!({"a": i(l.a), "b": i(l.b), "delta": l.delta().map(|v| v as i64)})
}

fn rows(v: &[DiffRow]) -> Vec<Value> {
    let mut v: Vec<&DiffRow> = v.iter().collect();
    crate::sort::by(&mut v, |x, y| {
        (y.b_ns - y.a_ns)
            .abs()
            .cmp(&(x.b_ns - x.a_ns).abs())
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.shapes.cmp(&y.shapes))
    });
    v.into_iter()
        .map(|r| {
            json!({
                "name": r.name,
                "a_us": r.a_ns as f64 / 1e3,
                "b_us": r.b_ns as f64 / 1e3,
                "delta_us": (r.b_ns - r.a_ns) as f64 / 1e3,
                "a_calls": r.a_calls,
                "b_calls": r.b_calls,
                "b_name": r.b_name,
                "shapes": r.shapes,
                "b_shapes": r.b_shapes,
                "status": r.status,
                "matched_by": r.matched_by,
                "confidence": r.confidence,
                "family": r.family,
                "how": r.how(),
                "via": r.via,
                "a_members": r.a_members,
                "b_members": r.b_members,
                "a_device_us": r.a_device_ns as f64 / 1e3,
                "b_device_us": r.b_device_ns as f64 / 1e3,
                "a_step_us": us(r.a_step_ns),
                "b_step_us": us(r.b_step_ns),
                "delta_step_us": us(r.delta_step_ns),
                "share": r.share,
            })
        })
        .collect()
}

/// The whole object.
pub fn diff_json(d: &Diff) -> Value {
    let side = |s: &super::side::Side| {
        json!({"label": s.label, "files": s.files, "has_steps": s.has_steps,
               "rank_steps": s.rank_steps, "device": s.device, "setup": s.setup,
               "coverage": s.coverage})
    };
    json!({
        "a": d.a.label,
        "b": d.b.label,
        "sides": {"a": side(&d.a), "b": side(&d.b)},
        "step": {
            "a": spread(&d.a.step_ns),
            "b": spread(&d.b.step_ns),
            "delta_us": us(d.step_delta_ns),
            "delta_pct": d.step_delta_pct,
            "within_noise": d.within_noise,
        },
        "verdict": d.verdict,
        "breakdown": time_lines(&d.breakdown),
        "categories": time_lines(&d.seed_categories),
        "fine_categories": time_lines(&d.fine_categories),
        "gpu": {
            "utilization": pair(d, "gpu_utilization", 1.0),
            "comm_us": pair(d, "comm_ns", 1e-3),
            "exposed_comm_us": pair(d, "exposed_comm_ns", 1e-3),
        },
        "memory": {
            "peak_allocated_bytes": bytes(d, "peak_allocated_bytes"),
            "peak_reserved_bytes": bytes(d, "peak_reserved_bytes"),
        },
        "setup_notes": d.setup_notes,
        "figures": super::figures::figures_json(d),
        "flops": {
            "tflops": pair(d, "tflops", 1.0),
            "tflops_busy": pair(d, "tflops_busy", 1.0),
            "mfu": pair(d, "mfu", 1.0),
            "peak_tflops": pair(d, "peak_tflops", 1.0),
            "flops_per_step": pair(d, "flops_per_step", 1.0),
            "flop_ops_per_step": pair(d, "flop_ops_per_step", 1.0),
            "flop_device_share": pair(d, "flop_device_share", 1.0),
            "rates_comparable": d.rates.comparable,
            "not_comparable_because": d.rates.reasons,
        },
        "renames": d.renames,
        "measure": d.measure,
        "ops": rows(&d.ops),
        "kernels": rows(&d.kernels),
        "ranks": d.ranks.iter().map(|r| json!({
            "rank": r.rank,
            "a_step_us": r.a_step_ns.map(us),
            "b_step_us": r.b_step_ns.map(us),
        })).collect::<Vec<_>>(),
    })
}
