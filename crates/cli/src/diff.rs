//! `tracelight diff A B`: the A/B diff of two traces or run folders (`report::diff`), or of two
//! allocator snapshots (`snapshot_diff`), as Markdown
//! or `--json`; with `--fail-if BOUND` (several allowed) a CI gate whose exit code is 1 when a
//! bound is crossed (`report::diff::gate`, docs/ci-gate.md); with `--folded` the differential
//! flame graph's stacks, both weights per line (`report::diff::flame`).

use crate::input::{flag_value, load, positional, trace, CliError};
use tracelight_core::ingest::Loaded;
use tracelight_core::model::Trace;
use tracelight_core::report::diff::{
    flame::{renames, DiffFlame, FlameSide},
    gate,
    json::diff_json,
    markdown::diff_markdown,
    rows::MatchOptions,
    side::Side,
    Diff, Measure,
};
use tracelight_core::report::json::Analysis;
use tracelight_core::view::flame::Weight;

/// One side of `diff`: a trace file, or every Kineto trace under a run folder (one per rank;
/// files that are not traces, such as execution traces or snapshots, are left out).
fn side_traces(path: &str) -> Result<Vec<(String, Box<Trace>)>, CliError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        CliError::Input(
            tracelight_core::Error::new(tracelight_core::ErrorKind::Io(e.to_string()), 0)
                .in_file(path),
        )
    })?;
    if !meta.is_dir() {
        return Ok(vec![(path.to_owned(), trace(path)?)]);
    }
    let mut files = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(path)];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".json") || n.ends_with(".json.gz"))
            {
                files.push(p.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        if let Ok(Loaded::Trace(t)) = load(&f) {
            out.push((f, t));
        }
    }
    if out.is_empty() {
        return Err(CliError::Input(
            tracelight_core::Error::new(
                tracelight_core::ErrorKind::Incompatible("no Kineto trace in this folder".into()),
                0,
            )
            .in_file(path),
        ));
    }
    Ok(out)
}

/// Every `--fail-if` bound, in order (`--fail-if B` or `--fail-if=B`).
fn bounds(rest: &[String]) -> Result<Vec<String>, CliError> {
    let mut v = Vec::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        if a == "--fail-if" {
            let Some(b) = it.next() else {
                return Err(CliError::Usage(
                    "--fail-if needs a bound, e.g. --fail-if 'step_time>+5%'".into(),
                ));
            };
            v.push(b.clone());
        } else if let Some(b) = a.strip_prefix("--fail-if=") {
            v.push(b.to_owned());
        }
    }
    Ok(v)
}

/// One side read: its traces and their analyses.
pub struct SideFiles {
    pub path: String,
    pub traces: Vec<(String, Box<Trace>)>,
    pub analyses: Vec<Analysis>,
}

impl SideFiles {
    /// A trace, a run folder of traces, or digests (a `STEM.digest.json`, or a folder holding
    /// digest headers: read as digests, as `summary DIR` reads such a folder).
    pub fn read(path: &str) -> Result<SideFiles, CliError> {
        let p = std::path::Path::new(path);
        let heads: Vec<std::path::PathBuf> = if p.is_dir() {
            let files = crate::digest::walk(p)?;
            crate::digest::headers(&files)
                .into_iter()
                .cloned()
                .collect()
        } else if path.ends_with(tracelight_core::digest::HEADER_SUFFIX) {
            vec![p.to_path_buf()]
        } else {
            Vec::new()
        };
        if !heads.is_empty() {
            let mut traces = Vec::new();
            let mut analyses = Vec::new();
            for h in heads {
                let (t, a) = crate::digest::read_rebuilt(&h).map_err(CliError::Input)?;
                traces.push((h.display().to_string(), t));
                analyses.push(a);
            }
            return Ok(SideFiles {
                path: path.to_owned(),
                traces,
                analyses,
            });
        }
        let traces = side_traces(path)?;
        let analyses = traces.iter().map(|(p, t)| Analysis::of(p, t)).collect();
        Ok(SideFiles {
            path: path.to_owned(),
            traces,
            analyses,
        })
    }

    pub fn pairs(&self) -> Vec<(&Trace, &Analysis)> {
        self.traces
            .iter()
            .zip(&self.analyses)
            .map(|((_, t), a)| (&**t, a))
            .collect()
    }

    pub fn side(&self, by_shapes: bool) -> Side {
        Side::of(&self.path, &self.pairs(), by_shapes)
    }
}

/// `diff A B [--json] [--group-by-input-shape] [--no-renames] [--fail-if BOUND]… [--strict]`:
/// the A/B diff of two traces or run folders (`report::diff`): per-step overview, verdict,
/// matched ops and kernels; `--no-renames` turns off matching renamed ops and kernels within
/// their family. Returns the text and the exit code: 1 when a `--fail-if` bound was crossed
/// (or, with `--strict`, could not be told), else 0.
pub fn diff_code(rest: &[String]) -> Result<(String, u8), CliError> {
    let files = positional(rest);
    let [a, b] = files.as_slice() else {
        return Err(CliError::Usage(
            "diff takes two files or run folders".into(),
        ));
    };
    // Allocator snapshots: the snapshot diff (no steps, so no gate or flame graph); a side that
    // is not one is an error naming that file.
    if crate::snapshot_diff::is_snapshot(a) || crate::snapshot_diff::is_snapshot(b) {
        let json = rest.iter().any(|f| f == "--json");
        return crate::snapshot_diff::snapshot_diff(a, b, json).map(|t| (t, 0));
    }
    let exprs = bounds(rest)?;
    let by_shapes = rest.iter().any(|f| f == "--group-by-input-shape");
    let (la, lb) = (SideFiles::read(a)?, SideFiles::read(b)?);
    let opts = MatchOptions {
        renames: !rest.iter().any(|f| f == "--no-renames"),
    };
    let d = Diff::with(la.side(by_shapes), lb.side(by_shapes), opts);
    let g = if exprs.is_empty() {
        None
    } else {
        Some(gate::gate(&d, &exprs).map_err(CliError::Usage)?)
    };
    let strict = rest.iter().any(|f| f == "--strict");
    let code = match &g {
        Some(g) if g.failed() || (strict && g.unsure()) => 1,
        _ => 0,
    };
    if rest.iter().any(|f| f == "--folded") {
        return Ok((folded(&la, &lb, &d, rest)?, code));
    }
    if rest.iter().any(|f| f == "--json") {
        let mut v = diff_json(&d);
        if let Some(g) = &g {
            v["gate"] = gate::gate_json(g);
        }
        return Ok((
            serde_json::to_string_pretty(&v).unwrap_or_default() + "\n",
            code,
        ));
    }
    let mut out = String::new();
    if let Some(g) = &g {
        out += &gate::gate_markdown(g);
        out.push('\n');
    }
    out += &diff_markdown(&d);
    Ok((out, code))
}

/// `--folded [--weight cpu|device]`: the differential flame graph's stacks, `stack A B` in
/// integer ns per step (`report::diff::flame`); the weight defaults to the diff's own measure
/// (device time when both sides have GPU work).
fn folded(la: &SideFiles, lb: &SideFiles, d: &Diff, rest: &[String]) -> Result<String, CliError> {
    let weight = match flag_value(rest, "--weight") {
        None => match d.measure {
            Measure::Device => Weight::Device,
            Measure::Cpu => Weight::Cpu,
        },
        Some("cpu") => Weight::Cpu,
        Some("device" | "gpu") => Weight::Device,
        Some(other) => {
            return Err(CliError::Usage(format!(
                "--weight takes cpu or device, not {other:?}"
            )))
        }
    };
    // `--step-a I --step-b J`: step I of A against step J of B (0-based, in time order).
    let step = |flag: &str| -> Result<Option<usize>, CliError> {
        flag_value(rest, flag)
            .map(|v| {
                v.parse::<usize>().map_err(|_| {
                    CliError::Usage(format!("{flag} takes a step index (0, 1, …), not {v:?}"))
                })
            })
            .transpose()
    };
    let (step_a, step_b) = (step("--step-a")?, step("--step-b")?);
    for (k, f, which) in [(step_a, la, "A"), (step_b, lb, "B")] {
        if let Some(k) = k {
            let have = f
                .traces
                .iter()
                .map(|(_, t)| tracelight_core::view::steps::step_marks(t).len())
                .max()
                .unwrap_or(0);
            if k >= have {
                return Err(CliError::Usage(format!(
                    "{which} has no step {k}: its steps are 0 to {} (in time order)",
                    have as i64 - 1
                )));
            }
        }
    }
    fn side<'a>(f: &'a SideFiles, s: &Side, step: Option<usize>) -> FlameSide<'a> {
        FlameSide {
            traces: f.traces.iter().map(|(_, t)| &**t).collect(),
            rank_steps: s.rank_steps,
            step,
        }
    }
    let rename = if d.renames {
        renames(d)
    } else {
        Default::default()
    };
    let fl = DiffFlame::build(
        &side(la, &d.a, step_a),
        &side(lb, &d.b, step_b),
        weight,
        &rename,
    );
    Ok(fl.folded())
}

/// [`diff_code`]'s text alone (the Python bindings and tests).
pub fn diff(rest: &[String]) -> Result<String, CliError> {
    diff_code(rest).map(|x| x.0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    /// Two steps of `step_us`, each with one 100 µs gemm kernel.
    fn trace(rank: i64, step_us: f64) -> String {
        let mut v = Vec::new();
        for k in 0..2 {
            let t0 = k as f64 * step_us;
            v.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{k}","pid":1,"tid":1,"ts":{t0},"dur":{step_us}}}"#));
            v.push(format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{},"dur":8}}"#,
                t0 + 1.0
            ));
            v.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{k}}}}}"#, t0 + 2.0));
            v.push(format!(r#"{{"ph":"X","cat":"kernel","name":"sgemm","pid":0,"tid":7,"ts":{},"dur":100,"args":{{"device":0,"stream":7,"correlation":{k}}}}}"#, t0 + 10.0));
        }
        format!(
            r#"{{"distributedInfo":{{"rank":{rank},"world_size":2}},"traceEvents":[{}]}}"#,
            v.join(",")
        )
    }

    fn run_folder(name: &str, steps: [f64; 2]) -> String {
        let dir =
            std::env::temp_dir().join(format!("tracelight-diff-{}-{name}", std::process::id()));
        std::fs::create_dir_all(dir.join("device")).unwrap();
        for (r, s) in steps.iter().enumerate() {
            std::fs::write(
                dir.join(format!("device/rank-{r}.json")),
                trace(r as i64, *s),
            )
            .unwrap();
        }
        std::fs::write(dir.join("notes.txt"), "not a trace").unwrap();
        dir.to_string_lossy().into_owned()
    }

    #[test]
    fn diff_of_two_run_folders_compares_rank_by_rank_and_rank_means() {
        let (a, b) = (
            run_folder("a", [1000.0, 1200.0]),
            run_folder("b", [900.0, 1000.0]),
        );
        let args: Vec<String> = vec![a.clone(), b.clone(), "--json".into()];
        let Ok(out) = diff(&args) else {
            panic!("diff failed")
        };
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["step"]["a"]["mean_us"], 1100.0);
        assert_eq!(v["step"]["b"]["mean_us"], 950.0);
        assert_eq!(v["step"]["delta_us"], -150.0);
        let ranks = v["ranks"].as_array().unwrap();
        assert_eq!(ranks.len(), 2);
        assert_eq!(
            (
                ranks[1]["rank"].as_i64(),
                ranks[1]["a_step_us"].as_f64(),
                ranks[1]["b_step_us"].as_f64()
            ),
            (Some(1), Some(1200.0), Some(1000.0))
        );
        // The contract's row fields: totals over both ranks (2 ranks × 2 steps × 100 µs).
        let k = &v["kernels"][0];
        assert_eq!(
            (k["name"].as_str(), k["a_us"].as_f64(), k["b_us"].as_f64()),
            (Some("sgemm"), Some(400.0), Some(400.0))
        );
        assert_eq!(
            (
                k["delta_us"].as_f64(),
                k["a_calls"].as_u64(),
                k["b_calls"].as_u64()
            ),
            (Some(0.0), Some(4), Some(4))
        );
        assert_eq!(k["delta_step_us"], 0.0);
        let Ok(md) = diff(&[a.clone(), b.clone()]) else {
            panic!("diff failed")
        };
        assert!(md.contains("**B is 13.6% faster per step"), "{md}");
        assert!(md.contains("### Ranks (mean step)"));
        for d in [a, b] {
            std::fs::remove_dir_all(d).unwrap();
        }
    }
}
