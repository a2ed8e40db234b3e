//! `summary DIR` / `analyze DIR --json` on a run folder: the folder is walked, every file sniffed
//! from its first bytes and placed by [`tracelight_core::run::layout`]; the traces of each cycle
//! are analysed as the ranks of one run. Files that are none of ours are listed as skipped, and a
//! file that fails to load is listed with its error: neither stops the run.

use crate::input::{load, walk, CliError};
use crate::run_report::{
    cycle_json, cycles_markdown, et_json, layout_json, layout_markdown, EtEntry, Loaded1,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use tracelight_core::analysis::et::summary as et_summary;
use tracelight_core::analysis::et_link::{link, LinkReport};
use tracelight_core::analysis::snapshot::summarize;
use tracelight_core::analysis::snapshot_ranks::{compare, OomRun, RankDump};
use tracelight_core::ingest::memory_timeline::peak as timeline_peak;
use tracelight_core::ingest::Loaded;
use tracelight_core::report::json::{analyze_json_with, rank_inputs, Analysis, RankMemory};
use tracelight_core::report::run::run_figures;
use tracelight_core::report::run_json::run_markdown;
use tracelight_core::run::layout::{recognise, Artifact, RunLayout};
use tracelight_core::run::{entry_from_head, HEAD_BYTES};

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

/// `summary DIR` (Markdown) or `analyze DIR --json`.
pub fn run_dir(dir: &Path, json: bool) -> Result<String, CliError> {
    // A folder of digests (or a run folder holding some) is read as digests.
    let files = crate::digest::walk(dir)?;
    let heads = crate::digest::headers(&files);
    if !heads.is_empty() {
        return crate::digest::run_digests(dir, &heads, json);
    }
    let run = RunData::load(dir)?;
    Ok(if json {
        run.json_text()
    } else {
        run.markdown()
    })
}

/// A run folder read once: its layout, each rank's analysis and memory peaks, the files that
/// failed, its memory files and execution traces. The command prints one report of it; the
/// Python bindings keep it and give both reports (and their tables) without reading it again.
pub struct RunData {
    dir: PathBuf,
    lay: RunLayout,
    traces: Vec<Loaded1>,
    errors: Vec<(String, String)>,
    memory_files: Vec<crate::memory::MemoryFile>,
    ets: Vec<EtEntry>,
    fr: Vec<crate::fr::FrFile>,
    /// The run's allocator snapshots compared (OOM dumps): with two or more, or one that recorded
    /// an OOM.
    oom: Option<Box<OomRun>>,
}

impl RunData {
    /// Lays the folder out and reads every file it placed. A file that fails to load is kept as
    /// an error of the run (reported under `run.errors`), not a failure of the whole run.
    pub fn load(dir: &Path) -> Result<RunData, CliError> {
        let lay = layout(dir)?;
        let full = |rel: &str| dir.join(rel).display().to_string();
        let mut traces: Vec<Loaded1> = Vec::new();
        let mut errors: Vec<(String, String)> = Vec::new();
        let mut memory_files = Vec::new();
        let mut ets: Vec<EtEntry> = Vec::new();
        let mut fr = Vec::new();
        let mut dumps: Vec<RankDump> = Vec::new();
        for u in &lay.units {
            if let Some(rel) = u.file(Artifact::FlightRecorder) {
                match load(&full(rel)) {
                    Ok(Loaded::FlightRecorder(d)) => fr.push(crate::fr::FrFile {
                        rank: u.rank,
                        cycle: u.cycle,
                        path: full(rel),
                        dump: *d,
                    }),
                    Ok(_) => {}
                    Err(e) => errors.push((rel.to_owned(), e.to_string())),
                }
            }
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
                        dumps.push(RankDump::of(u.rank, &full(rel), &s));
                        let sum = summarize(&s);
                        let m = crate::memory::MemoryFile::of(&full(rel), &Loaded::Snapshot(s));
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
                        memory_files.push(crate::memory::MemoryFile::of(
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
        let oom = (dumps.len() >= 2 || dumps.iter().any(|d| !d.ooms.is_empty()))
            .then(|| Box::new(compare(dumps)));
        Ok(RunData {
            oom,
            dir: dir.to_owned(),
            lay,
            traces,
            errors,
            memory_files,
            ets,
            fr,
        })
    }

    /// The analyses of cycle `c`'s ranks, with their memory peaks.
    fn cycle_of(&self, c: u32) -> (Vec<Analysis>, Vec<RankMemory>) {
        self.traces
            .iter()
            .filter(|l| l.cycle == c)
            .map(|l| (l.analysis.clone(), l.memory))
            .unzip()
    }

    /// `analyze DIR --json`'s object.
    pub fn json(&self) -> serde_json::Value {
        let (lay, traces, cycles) = (&self.lay, &self.traces, self.lay.cycles());
        let cycle_of = |c| self.cycle_of(c);
        let (memory_files, errors, ets) = (&self.memory_files, &self.errors, &self.ets);
        let (first, peaks) = cycle_of(0);
        let mut v = analyze_json_with(&first, &peaks);
        if let serde_json::Value::Object(o) = &mut v {
            let files: Vec<serde_json::Value> = traces
                .iter()
                .map(|l| serde_json::json!({"path": l.analysis.path, "format": "kineto", "events": l.analysis.events}))
                .chain(memory_files.iter().map(crate::memory::MemoryFile::file_json))
                .chain(self.fr.iter().map(crate::fr::FrFile::file_json))
                .collect();
            o.insert("files".into(), serde_json::Value::Array(files));
            o.insert("run".into(), layout_json(lay, errors));
            o.insert("et".into(), et_json(ets));
            if !self.fr.is_empty() {
                o.insert(
                    "flight_recorder".into(),
                    tracelight_core::report::flight_recorder::json(&crate::fr::report(&self.fr, 0)),
                );
            }
            if let Some(r) = &self.oom {
                o.insert("oom_dumps".into(), serde_json::json!(r));
            }
            if cycles > 1 {
                let per: Vec<serde_json::Value> = (0..cycles)
                    .map(|c| {
                        let (all, mem) = cycle_of(c);
                        cycle_json(c, lay, &all, &mem)
                    })
                    .collect();
                o.insert("cycles".into(), serde_json::Value::Array(per));
            }
        }
        v
    }

    /// One row per Flight Recorder entry of every rank's dump (cycle 0, as the verdict reads
    /// them), for the Python package's entries table.
    pub fn fr_entry_rows(&self) -> Vec<serde_json::Value> {
        self.fr
            .iter()
            .filter(|f| f.cycle == 0)
            .flat_map(|f| {
                tracelight_core::report::flight_recorder::entry_rows(f.rank, &f.path, &f.dump)
            })
            .collect()
    }

    /// `analyze DIR --json`'s text, as the command prints it.
    pub fn json_text(&self) -> String {
        let mut out = serde_json::to_string_pretty(&self.json()).unwrap_or_default();
        out.push('\n');
        out
    }

    /// `summary DIR`'s Markdown.
    pub fn markdown(&self) -> String {
        let (lay, traces, cycles) = (&self.lay, &self.traces, self.lay.cycles());
        let cycle_of = |c| self.cycle_of(c);
        let mut s = format!("# Run: {}\n\n", self.dir.display());
        if !self.fr.is_empty() {
            // The verdict first: a folder of dumps is opened because a job hung.
            s += &tracelight_core::report::flight_recorder::markdown(&crate::fr::report(
                &self.fr, 0,
            ));
            s.push('\n');
        }
        if let Some(r) = &self.oom {
            // Memory dumps next: a folder of them is opened because a job ran out of memory.
            s += &tracelight_core::report::oom_run::markdown(r);
            s.push('\n');
        }
        s += &layout_markdown(lay, &self.errors, &self.ets);
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
            s += &cycles_markdown(lay, traces);
        }
        s
    }
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
