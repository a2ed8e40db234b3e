//! `summary DIR` / `analyze DIR --json` on a run folder: the folder is walked, every file sniffed
//! from its first bytes and placed by [`tracelight_core::run::layout`]; the traces of each cycle
//! are analysed as the ranks of one run. Files that are none of ours are listed as skipped, and a
//! file that fails to load is listed with its error: neither stops the run.

use crate::commands::{load, CliError};
use std::io::Read;
use std::path::{Path, PathBuf};
use tracelight_core::analysis::et::summary as et_summary;
use tracelight_core::analysis::et_link::{link, LinkReport};
use tracelight_core::analysis::snapshot::summarize;
use tracelight_core::ingest::memory_timeline::peak as timeline_peak;
use tracelight_core::ingest::Loaded;
use tracelight_core::report::json::{analyze_json_with, rank_inputs, Analysis, RankMemory};
use tracelight_core::report::run::run_figures;
use tracelight_core::report::run_json::{run_json, run_markdown};
use tracelight_core::run::layout::{recognise, Artifact, RunLayout};
use tracelight_core::run::{entry_from_head, HEAD_BYTES};

/// Every regular file under `dir`, sorted, hidden ones (`.git`, `.ipynb_checkpoints`) left out.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut items: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    items.sort_by_key(|e| e.file_name());
    for e in items {
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let p = e.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.is_file() {
            out.push(p);
        }
    }
    Ok(())
}

fn io_err(path: &Path, e: std::io::Error) -> CliError {
    CliError::Input(
        tracelight_core::Error::new(tracelight_core::ErrorKind::Io(e.to_string()), 0)
            .in_file(&path.display().to_string()),
    )
}

/// Lays out a run folder from names and the first bytes of each file.
pub fn layout(dir: &Path) -> Result<RunLayout, CliError> {
    let mut files = Vec::new();
    walk(dir, &mut files).map_err(|e| io_err(dir, e))?;
    let mut entries = Vec::new();
    for p in &files {
        let mut head = Vec::new();
        std::fs::File::open(p)
            .and_then(|f| f.take(HEAD_BYTES as u64).read_to_end(&mut head))
            .map_err(|e| io_err(p, e))?;
        let rel = p
            .strip_prefix(dir)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/");
        entries.push(entry_from_head(&rel, &head));
    }
    Ok(recognise(&entries))
}

struct Loaded1 {
    cycle: u32,
    analysis: Analysis,
    memory: RankMemory,
}

/// A unit's execution trace: its summary, and its link figures against the same unit's Kineto
/// trace (same rank and cycle) when that loaded.
struct EtEntry {
    rank: i64,
    cycle: u32,
    path: String,
    summary: serde_json::Value,
    nodes: u64,
    link: Option<LinkReport>,
}

/// `summary DIR` (Markdown) or `analyze DIR --json`.
pub fn run_dir(dir: &Path, json: bool) -> Result<String, CliError> {
    let lay = layout(dir)?;
    let full = |rel: &str| dir.join(rel).display().to_string();
    let mut traces: Vec<Loaded1> = Vec::new();
    let mut errors: Vec<(String, String)> = Vec::new();
    let mut memory_files = Vec::new();
    let mut ets: Vec<EtEntry> = Vec::new();
    for u in &lay.units {
        let et = match u.file(Artifact::ExecutionTrace) {
            Some(rel) => match load(&full(rel)) {
                Ok(Loaded::ExecTrace(et)) => Some((rel, et)),
                Ok(_) => None,
                Err(e) => {
                    errors.push((rel.to_owned(), e.to_string()));
                    None
                }
            },
            None => None,
        };
        let peak = match u.file(Artifact::Snapshot) {
            Some(rel) => match load(&full(rel)) {
                Ok(Loaded::Snapshot(s)) => {
                    let sum = summarize(&s);
                    let m = crate::commands::MemoryFile::of(&full(rel), &Loaded::Snapshot(s));
                    memory_files.push(m);
                    let a = sum.devices.iter().map(|d| d.peak_active_bytes).max();
                    let r = sum.devices.iter().map(|d| d.peak_reserved_bytes).max();
                    a.zip(r)
                }
                Ok(_) => None,
                Err(e) => {
                    errors.push((rel.to_owned(), e.to_string()));
                    None
                }
            },
            None => None,
        };
        let timeline = match u.file(Artifact::MemoryTimeline) {
            Some(rel) => match load(&full(rel)) {
                Ok(Loaded::MemoryTimeline(t)) => {
                    let p = timeline_peak(&t).peak_total_bytes;
                    memory_files.push(crate::commands::MemoryFile::of(
                        &full(rel),
                        &Loaded::MemoryTimeline(t),
                    ));
                    Some(p)
                }
                Ok(_) => None,
                Err(e) => {
                    errors.push((rel.to_owned(), e.to_string()));
                    None
                }
            },
            None => None,
        };
        let memory = RankMemory {
            snapshot_peak: peak,
            timeline_peak: timeline,
        };
        if let Some(rel) = u.file(Artifact::Trace) {
            match load(&full(rel)) {
                Ok(Loaded::Trace(t)) => {
                    let mut a = Analysis::of(&full(rel), &t);
                    a.rank = Some(u.rank);
                    if let Some((p, et)) = &et {
                        ets.push(et_entry(
                            u.rank,
                            u.cycle,
                            &full(p),
                            et,
                            Some(link(&t, et).report),
                        ));
                    }
                    traces.push(Loaded1 {
                        cycle: u.cycle,
                        analysis: a,
                        memory,
                    });
                }
                Ok(_) => {}
                Err(e) => errors.push((rel.to_owned(), e.to_string())),
            }
        }
        if let Some((p, et)) = &et {
            if !ets.iter().any(|e| e.path == full(p)) {
                ets.push(et_entry(u.rank, u.cycle, &full(p), et, None));
            }
        }
    }
    let cycles = lay.cycles();
    let cycle_of = |c: u32| -> (Vec<Analysis>, Vec<RankMemory>) {
        traces
            .iter()
            .filter(|l| l.cycle == c)
            .map(|l| (l.analysis.clone(), l.memory))
            .unzip()
    };
    if json {
        let (first, peaks) = cycle_of(0);
        let mut v = analyze_json_with(&first, &peaks);
        if let serde_json::Value::Object(o) = &mut v {
            let files: Vec<serde_json::Value> = traces
                .iter()
                .map(|l| serde_json::json!({"path": l.analysis.path, "format": "kineto", "events": l.analysis.events}))
                .chain(memory_files.iter().map(crate::commands::MemoryFile::file_json))
                .collect();
            o.insert("files".into(), serde_json::Value::Array(files));
            o.insert("run".into(), layout_json(&lay, &errors));
            o.insert("et".into(), et_json(&ets));
            if cycles > 1 {
                let per: Vec<serde_json::Value> = (0..cycles)
                    .map(|c| {
                        let (all, mem) = cycle_of(c);
                        cycle_json(c, &lay, &all, &mem)
                    })
                    .collect();
                o.insert("cycles".into(), serde_json::Value::Array(per));
            }
        }
        let mut out = serde_json::to_string_pretty(&v).unwrap_or_default();
        out.push('\n');
        return Ok(out);
    }
    let mut s = format!("# Run: {}\n\n", dir.display());
    s += &layout_markdown(&lay, &errors, &ets);
    for c in 0..cycles {
        let (all, peaks) = cycle_of(c);
        if all.len() < 2 {
            continue;
        }
        if cycles > 1 {
            s += &format!("\n# Cycle {c}\n\n");
        }
        s += &run_markdown(&run_figures(&rank_inputs(&all, &peaks)));
    }
    if traces.len() == 1 {
        if let Some(l) = traces.first() {
            s += &format!(
                "\nOne trace: see `tracelight summary {}`.\n",
                l.analysis.path
            );
        }
    }
    if cycles > 1 && lay.ranks().len() == 1 {
        s += &cycles_markdown(&lay, &traces);
    }
    Ok(s)
}

/// One cycle (or nanochat stage) of the run: its files, step times and memory peaks, and the
/// multi-rank fields when it has several ranks.
fn cycle_json(c: u32, lay: &RunLayout, all: &[Analysis], mem: &[RankMemory]) -> serde_json::Value {
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
fn cycles_markdown(lay: &RunLayout, traces: &[Loaded1]) -> String {
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

fn layout_json(lay: &RunLayout, errors: &[(String, String)]) -> serde_json::Value {
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

/// Execution traces of the run, per rank. Their reader is a separate piece of work: until it
/// lands they are recognised (by content) and listed, not read.
fn et_entry(
    rank: i64,
    cycle: u32,
    path: &str,
    et: &tracelight_core::model::exec_trace::ExecTrace,
    link: Option<LinkReport>,
) -> EtEntry {
    let sum = et_summary(et);
    EtEntry {
        rank,
        cycle,
        path: path.to_owned(),
        nodes: sum.nodes,
        summary: serde_json::json!(sum),
        link,
    }
}

/// `"et"`: per execution trace of the run, its summary (as `analyze ET --json` gives it), its
/// rank and cycle, and `link` (the figures against that rank's trace; null when it has none).
fn et_json(ets: &[EtEntry]) -> serde_json::Value {
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

fn layout_markdown(lay: &RunLayout, errors: &[(String, String)], ets: &[EtEntry]) -> String {
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
