//! The report halves of `summary DIR` / `analyze DIR --json`: the layout, cycle and ET parts of
//! the JSON object and of the Markdown, from a [`crate::run::RunData`] already read.

use tracelight_core::analysis::et_link::LinkReport;
use tracelight_core::report::json::{rank_inputs, Analysis, RankMemory};
use tracelight_core::report::run::run_figures;
use tracelight_core::report::run_json::run_json;
use tracelight_core::run::layout::{Artifact, RunLayout};

/// One cycle (or nanochat stage) of the run: its files, step times and memory peaks, and the
/// multi-rank fields when it has several ranks.
/// One loaded trace of a run folder: its cycle, its analysis and its memory files' peaks.
pub(crate) struct Loaded1 {
    pub(crate) cycle: u32,
    pub(crate) analysis: Analysis,
    pub(crate) memory: RankMemory,
}

/// A unit's execution trace: its summary, and its link figures against the same unit's Kineto
/// trace (same rank and cycle) when that loaded.
pub(crate) struct EtEntry {
    pub(crate) rank: i64,
    pub(crate) cycle: u32,
    pub(crate) path: String,
    pub(crate) summary: serde_json::Value,
    pub(crate) nodes: u64,
    pub(crate) link: Option<LinkReport>,
}

pub(crate) fn cycle_json(
    c: u32,
    lay: &RunLayout,
    all: &[Analysis],
    mem: &[RankMemory],
) -> serde_json::Value {
    let stage = lay
        .units
        .iter()
        .find(|u| u.cycle == c)
        .and_then(|u| u.stage.clone());
    let mut o = serde_json::Map::new();
    o.insert("cycle".into(), serde_json::json!(c));
    o.insert("stage".into(), serde_json::json!(stage));
    let col = |f: &dyn Fn(usize) -> serde_json::Value| -> serde_json::Value {
        serde_json::Value::Array((0..all.len()).map(f).collect())
    };
    o.insert("files".into(), col(&|k| serde_json::json!(all[k].path)));
    o.insert(
        "step_time_us".into(),
        col(&|k| serde_json::json!(all[k].step_time_ns() as f64 / 1e3)),
    );
    o.insert(
        "snapshot_peak_active_bytes".into(),
        col(&|k| serde_json::json!(mem.get(k).and_then(|m| m.snapshot_peak).map(|p| p.0))),
    );
    o.insert(
        "memory_timeline_peak_bytes".into(),
        col(&|k| serde_json::json!(mem.get(k).and_then(|m| m.timeline_peak))),
    );
    if all.len() > 1 {
        run_json(&run_figures(&rank_inputs(all, mem))).insert_into(&mut o);
    }
    serde_json::Value::Object(o)
}

/// One rank, several cycles or stages (nanochat): a row each, in order.
pub(crate) fn cycles_markdown(lay: &RunLayout, traces: &[Loaded1]) -> String {
    let mut s = String::from(
        "\n## Cycles\n\n| cycle | stage | steps | step ms (mean) | GPU util | peak alloc MB | snapshot peak MB |\n|---:|---|---:|---:|---:|---:|---:|\n",
    );
    for l in traces {
        let a = &l.analysis;
        let stage = lay
            .units
            .iter()
            .find(|u| u.cycle == l.cycle)
            .and_then(|u| u.stage.clone())
            .unwrap_or_default();
        let (pa, _) = tracelight_core::analysis::memory::headline_peak(&a.memory);
        s += &format!(
            "| {} | {} | {} | {:.3} | {} | {:.1} | {} |\n",
            l.cycle,
            stage,
            a.steps.len(),
            a.step_time_ns() as f64 / 1e6,
            a.gpu
                .utilization
                .map_or("—".into(), |u| format!("{:.1}%", u * 100.0)),
            pa as f64 / 1e6,
            l.memory
                .snapshot_peak
                .map_or("—".into(), |p| format!("{:.1}", p.0 as f64 / 1e6)),
        );
    }
    s
}

pub(crate) fn layout_json(lay: &RunLayout, errors: &[(String, String)]) -> serde_json::Value {
    let units: Vec<serde_json::Value> = lay
        .units
        .iter()
        .map(|u| {
            let mut files = serde_json::Map::new();
            for a in Artifact::ALL {
                files.insert(
                    serde_json::to_value(a)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    serde_json::json!(u.file(a)),
                );
            }
            serde_json::json!({
                "rank": u.rank,
                "cycle": u.cycle,
                "stage": u.stage,
                "files": files,
                "missing": lay.missing(u),
            })
        })
        .collect();
    serde_json::json!({
        "layout": lay.kind,
        "ranks": lay.ranks(),
        "cycles": lay.cycles(),
        "expected": lay.expected,
        "units": units,
        "skipped": lay.skipped,
        "errors": errors.iter().map(|(p, e)| serde_json::json!({"path": p, "error": e})).collect::<Vec<_>>(),
    })
}

/// `"et"`: per execution trace of the run, its summary (as `analyze ET --json` gives it), its
/// rank and cycle, and `link` (the figures against that rank's trace; null when it has none).
pub(crate) fn et_json(ets: &[EtEntry]) -> serde_json::Value {
    let v: Vec<serde_json::Value> = ets
        .iter()
        .map(|e| {
            let mut f = e.summary.clone();
            f["rank"] = serde_json::json!(e.rank);
            f["cycle"] = serde_json::json!(e.cycle);
            f["path"] = serde_json::json!(e.path);
            f["link"] = serde_json::json!(e.link);
            f
        })
        .collect();
    serde_json::Value::Array(v)
}

/// The ET cell of the layout table: nodes, and how many ops linked to the rank's trace and why
/// the rest did not.
fn et_cell(p: &str, e: Option<&EtEntry>) -> String {
    match e {
        None => format!("`{p}` (not loaded)"),
        Some(e) => match &e.link {
            None => format!("`{p}` ({} nodes, no trace to link)", e.nodes),
            Some(l) if l.kineto_rf_missing == l.kineto_ops && l.kineto_ops > 0 => format!(
                "`{p}` ({} nodes; 0 linked: the trace has no `Record function id`, PyTorch < 2.4)",
                e.nodes
            ),
            Some(l) => format!(
                "`{p}` ({} nodes; {} of {} trace ops linked)",
                e.nodes, l.linked, l.kineto_ops
            ),
        },
    }
}

pub(crate) fn layout_markdown(
    lay: &RunLayout,
    errors: &[(String, String)],
    ets: &[EtEntry],
) -> String {
    let kind = serde_json::to_value(lay.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut s = format!(
        "Layout: **{kind}**, {} rank(s), {} cycle(s).\n\n| rank | cycle | stage | trace | ET | snapshot | memory timeline | missing |\n|---:|---:|---|---|---|---|---|---|\n",
        lay.ranks().len(),
        lay.cycles()
    );
    for u in &lay.units {
        let cell = |a: Artifact| match u.file(a) {
            Some(p) if a == Artifact::ExecutionTrace => et_cell(
                p,
                ets.iter().find(|e| e.rank == u.rank && e.cycle == u.cycle),
            ),
            Some(p) => format!("`{p}`"),
            None => "—".into(),
        };
        let missing: Vec<&str> = lay.missing(u).iter().map(|a| a.label()).collect();
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            u.rank,
            u.cycle,
            u.stage.as_deref().unwrap_or(""),
            cell(Artifact::Trace),
            cell(Artifact::ExecutionTrace),
            cell(Artifact::Snapshot),
            cell(Artifact::MemoryTimeline),
            missing.join(", ")
        );
    }
    if !lay.skipped.is_empty() {
        s += "\nSkipped:\n\n";
        for k in &lay.skipped {
            s += &format!("- `{}`: {}\n", k.path, k.reason);
        }
    }
    for (p, e) in errors {
        s += &format!("- `{p}` could not be read: {e}\n");
    }
    s
}
