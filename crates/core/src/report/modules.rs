//! Text and JSON of the module view, "group by source line" and forward ↔ backward
//! (`tracelight table FILE --modules | --source-lines | --backward`, `analyze --json`'s `modules`,
//! `source_lines`, `backward`). Times in the JSON are µs as floats, like the rest of the contract.

use super::table::format_time_us;
use crate::analysis::autograd::BackwardRow;
use crate::analysis::graphs::{GpuHealth, Graphs};
use crate::analysis::modules::ModuleTable;
use crate::analysis::per_step::{PerStep, StepDist};
use crate::analysis::source::SourceTable;
use serde_json::{json, Value};

fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

fn t(ns: i64) -> String {
    if ns == 0 {
        "-".into()
    } else {
        format_time_us(us(ns))
    }
}

/// Right-aligned columns after a left-aligned first one, as wide as their widest cell.
fn layout(head: &[&str], rows: &[Vec<String>]) -> String {
    let n = head.len();
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (k, c) in r.iter().enumerate().take(n) {
            w[k] = w[k].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (k, c) in cells.iter().enumerate() {
            let pad = w[k].saturating_sub(c.chars().count());
            if k == 0 {
                s += c;
                s += &" ".repeat(pad);
            } else {
                s += "  ";
                s += &" ".repeat(pad);
                s += c;
            }
        }
        s.trim_end().to_owned() + "\n"
    };
    let total: usize = w.iter().sum::<usize>() + 2 * (n - 1);
    let rule = "-".repeat(total) + "\n";
    let mut out = rule.clone();
    out += &line(&head.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>());
    out += &rule;
    for r in rows {
        out += &line(r);
    }
    out += &rule;
    out
}

/// The module tree as text, indented by depth.
pub fn modules_text(m: &ModuleTable) -> String {
    if m.rows.is_empty() {
        return "No nn.Module frames in this trace: record it with with_stack=True \
                (torch >= 2.0 writes a frame per module call).\n"
            .into();
    }
    let rows: Vec<Vec<String>> = m
        .rows
        .iter()
        .map(|r| {
            vec![
                format!("{}{}", "  ".repeat(r.depth as usize), r.name),
                r.calls.to_string(),
                t(r.host_ns),
                t(r.host_self_ns),
                t(r.gpu_ns),
                t(r.backward_gpu_ns),
                t(r.backward_host_ns),
                r.kernels.to_string(),
                r.occupancy_pct.map_or("-".into(), |o| format!("{o:.1}%")),
            ]
        })
        .collect();
    let mut out = layout(
        &[
            "Module",
            "Calls",
            "Host total",
            "Host self",
            "GPU fwd",
            "GPU bwd",
            "Host bwd",
            "Kernels",
            "Occupancy",
        ],
        &rows,
    );
    out += &format!(
        "GPU time outside any module: {} of {}\n",
        t(m.outside_gpu_ns),
        t(m.total_gpu_ns)
    );
    out
}

pub fn modules_json(m: &ModuleTable) -> Value {
    Value::Array(
        m.rows
            .iter()
            .map(|r| {
                json!({
                    "path": r.path,
                    "name": r.name,
                    "class": r.class,
                    "parent": r.parent,
                    "depth": r.depth,
                    "calls": r.calls,
                    "host_us": us(r.host_ns),
                    "host_self_us": us(r.host_self_ns),
                    "ops": r.ops,
                    "gpu_us": us(r.gpu_ns),
                    "gpu_self_us": us(r.gpu_self_ns),
                    "backward_host_us": us(r.backward_host_ns),
                    "backward_host_self_us": us(r.backward_host_self_ns),
                    "backward_gpu_us": us(r.backward_gpu_ns),
                    "backward_gpu_self_us": us(r.backward_gpu_self_ns),
                    "kernels": r.kernels,
                    "occupancy_pct": r.occupancy_pct,
                })
            })
            .collect(),
    )
}

/// "Group by source line" as text.
pub fn source_text(s: &SourceTable) -> String {
    if s.rows.is_empty() {
        return "No Python frames of user code in this trace: record it with with_stack=True.\n"
            .into();
    }
    let rows: Vec<Vec<String>> = s
        .rows
        .iter()
        .map(|r| {
            vec![
                r.source.label(),
                r.ops.to_string(),
                t(r.host_ns),
                t(r.backward_host_ns),
                r.kernels.to_string(),
                t(r.gpu_ns),
                t(r.backward_gpu_ns),
            ]
        })
        .collect();
    let mut out = layout(
        &[
            "Source line",
            "Ops",
            "Host",
            "Host bwd",
            "Kernels",
            "GPU fwd",
            "GPU bwd",
        ],
        &rows,
    );
    out += &format!(
        "GPU time not reached from user code: {}; without a launching call: {}\n",
        t(s.unattributed_gpu_ns),
        t(s.unlaunched_gpu_ns)
    );
    out
}

pub fn source_json(s: &SourceTable) -> Value {
    json!({
        "rows": s.rows.iter().map(|r| json!({
            "file": r.source.file,
            "line": r.source.line,
            "function": r.source.function,
            "exact_line": r.source.exact,
            "label": r.source.label(),
            "ops": r.ops,
            "host_us": us(r.host_ns),
            "backward_host_us": us(r.backward_host_ns),
            "kernels": r.kernels,
            "gpu_us": us(r.gpu_ns),
            "backward_gpu_us": us(r.backward_gpu_ns),
        })).collect::<Vec<_>>(),
        "unattributed_gpu_us": us(s.unattributed_gpu_ns),
        "unlaunched_gpu_us": us(s.unlaunched_gpu_ns),
    })
}

/// Forward ↔ backward as text.
pub fn backward_text(rows: &[BackwardRow]) -> String {
    if rows.is_empty() {
        return "No backward nodes paired with forward ops (no `Sequence number` args, or no \
                backward in the window).\n"
            .into();
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.forward.clone(),
                r.backward.clone(),
                r.pairs.to_string(),
                t(r.forward_host_ns),
                t(r.forward_gpu_ns),
                t(r.backward_host_ns),
                t(r.backward_gpu_ns),
            ]
        })
        .collect();
    layout(
        &[
            "Forward op",
            "Backward node",
            "Pairs",
            "Host fwd",
            "GPU fwd",
            "Host bwd",
            "GPU bwd",
        ],
        &cells,
    )
}

pub fn backward_json(rows: &[BackwardRow]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                json!({
                    "forward": r.forward,
                    "backward": r.backward,
                    "pairs": r.pairs,
                    "forward_host_us": us(r.forward_host_ns),
                    "forward_gpu_us": us(r.forward_gpu_ns),
                    "backward_host_us": us(r.backward_host_ns),
                    "backward_gpu_us": us(r.backward_gpu_ns),
                })
            })
            .collect(),
    )
}

/// CUDA graph replays: totals and one row per launch.
pub fn graphs_json(g: &Graphs) -> Value {
    json!({
        "launches": g.launches.len(),
        "kernels": g.kernels,
        "gpu_us": us(g.gpu_ns),
        "idle_in_replay_us": us(g.idle_ns),
        "replays": g.launches.iter().map(|l| json!({
            "op": l.op,
            "start_us": us(l.start_ns),
            "kernels": l.kernels,
            "gpu_us": us(l.gpu_ns),
            "span_us": us(l.span_ns),
            "busy_us": us(l.busy_ns),
            "idle_us": us(l.idle_ns),
            "graph_id": l.graph_id,
            "nodes": l.nodes,
            "streams": l.streams,
        })).collect::<Vec<_>>(),
    })
}

/// Where the GPU time is attributed, and the reader's repairs.
pub fn health_json(h: &GpuHealth) -> Value {
    json!({
        "gpu_us": us(h.gpu_ns),
        "in_op_us": us(h.in_op_ns),
        "graph_replay_us": us(h.graph_ns),
        "outside_op_us": us(h.outside_op_ns),
        "no_launch_us": us(h.no_launch_ns),
        "overlapping_on_stream": h.overlapping_on_stream,
        "reader": h.reader,
    })
}

/// Per op and kernel, its time in each step and the min / median / max over steps.
pub fn per_step_json(p: &PerStep) -> Value {
    let rows = |v: &[StepDist]| -> Vec<Value> {
        v.iter()
            .map(|d| {
                json!({
                    "name": d.name,
                    "per_step_us": d.per_step_ns.iter().map(|&x| us(x)).collect::<Vec<_>>(),
                    "min_us": us(d.min_ns),
                    "median_us": us(d.median_ns),
                    "max_us": us(d.max_ns),
                    "max_step": p.steps.get(d.max_step),
                })
            })
            .collect()
    };
    json!({"steps": p.steps, "ops": rows(&p.ops), "kernels": rows(&p.kernels)})
}
