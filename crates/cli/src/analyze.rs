//! The analytics subcommands: `summary`, `analyze --json`, `table`, `diff` (DESIGN §5). Kept apart
//! from `commands.rs` so the match arms there stay one line each.

use crate::commands::{load, CliError};
use tracelight_core::analysis::ops::{op_table, sort_rows, OpOptions, SortKey};
use tracelight_core::ingest::Loaded;
use tracelight_core::model::Trace;
use tracelight_core::report::facts::Facts;
use tracelight_core::report::json::{analyze_json, Analysis};
use tracelight_core::report::summary::markdown;
use tracelight_core::report::table::{render, TableOptions};

fn trace(path: &str) -> Result<Box<Trace>, CliError> {
    match load(path).map_err(CliError::Input)? {
        Loaded::Trace(t) => Ok(t),
        other => Err(CliError::Input(
            tracelight_core::Error::new(
                tracelight_core::ErrorKind::Incompatible(format!(
                    "this command needs a Kineto trace, not a {}",
                    other.format().label()
                )),
                0,
            )
            .in_file(path),
        )),
    }
}

fn flag_value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|k| args.get(k + 1))
        .map(String::as_str)
        .or_else(|| {
            args.iter()
                .find_map(|a| a.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
        })
}

/// Positional arguments: not flags and not the value of a flag that takes one.
fn positional(args: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if a == "--sort-by" || a == "--row-limit" {
            skip = true;
            continue;
        }
        if !a.starts_with("--") {
            out.push(a);
        }
    }
    out
}

/// `summary FILE…` (Markdown) and `analyze FILE… --json`.
pub fn summary_or_analyze(cmd: &str, rest: &[String]) -> Result<String, CliError> {
    let files = positional(rest);
    if files.is_empty() {
        return Err(CliError::Usage("no input file".into()));
    }
    let json = cmd == "analyze" || rest.iter().any(|f| f == "--json");
    if let [dir] = files.as_slice() {
        let p = std::path::Path::new(dir.as_str());
        if p.is_dir() {
            return crate::run::run_dir(p, json);
        }
    }
    let mut loaded = Vec::with_capacity(files.len());
    for path in &files {
        loaded.push(((*path).clone(), load(path).map_err(CliError::Input)?));
    }
    Ok(report(&loaded, json))
}

/// `summary` (Markdown) or `analyze --json` of files already loaded, in the order given: what the
/// command prints for them.
pub fn report(files: &[(String, Loaded)], json: bool) -> String {
    if json {
        let mut out = serde_json::to_string_pretty(&report_json(files)).unwrap_or_default();
        out.push('\n');
        out
    } else {
        report_markdown(files)
    }
}

/// The files of one command line sorted by kind, traces analysed.
struct Gathered<'a> {
    traces: Vec<(&'a str, &'a Trace, Analysis)>,
    memory: Vec<crate::commands::MemoryFile>,
    ets: crate::et::EtFiles<'a>,
    fr: Vec<crate::fr::FrFile>,
}

fn gather(files: &[(String, Loaded)]) -> Gathered<'_> {
    let mut g = Gathered {
        traces: Vec::new(),
        memory: Vec::new(),
        ets: crate::et::EtFiles::default(),
        fr: Vec::new(),
    };
    let mut dumps = Vec::new();
    for (path, loaded) in files {
        // Snapshots and memory timelines have their own report; traces go through the analyses.
        match loaded {
            Loaded::Trace(t) => {
                g.traces.push((path, t, Analysis::of(path, t)));
                if files.len() > 1 {
                    g.ets.keep_trace(path, t);
                }
            }
            Loaded::ExecTrace(e) => g.ets.add(path, e),
            Loaded::FlightRecorder(d) => dumps.push((path.clone(), (**d).clone())),
            other => g.memory.push(crate::commands::MemoryFile::of(path, other)),
        }
    }
    g.fr = crate::fr::from_args(dumps);
    g
}

/// `analyze FILE… --json`'s object (the Python bindings' `analyze()`, without a text round trip).
pub fn report_json(files: &[(String, Loaded)]) -> serde_json::Value {
    let g = gather(files);
    let all: Vec<Analysis> = g.traces.into_iter().map(|(_, _, a)| a).collect();
    let mut v = if all.is_empty() {
        crate::commands::memory_json(&g.memory)
    } else {
        analyze_json(&all)
    };
    if !g.ets.is_empty() {
        g.ets.extend_json(&mut v);
    }
    if !g.fr.is_empty() {
        if let serde_json::Value::Object(o) = &mut v {
            if let Some(serde_json::Value::Array(f)) = o.get_mut("files") {
                f.extend(g.fr.iter().map(crate::fr::FrFile::file_json));
            } else {
                o.insert(
                    "files".into(),
                    g.fr.iter().map(crate::fr::FrFile::file_json).collect(),
                );
            }
            o.insert(
                "flight_recorder".into(),
                tracelight_core::report::flight_recorder::json(&crate::fr::report(&g.fr, 0)),
            );
        }
    }
    v
}

/// `summary FILE…`'s Markdown.
pub fn report_markdown(files: &[(String, Loaded)]) -> String {
    let g = gather(files);
    let mut out = String::new();
    if !g.fr.is_empty() {
        out += &tracelight_core::report::flight_recorder::markdown(&crate::fr::report(&g.fr, 0));
        out.push('\n');
    }
    if g.traces.is_empty() && g.ets.is_empty() {
        return out + &crate::commands::memory_markdown(&g.memory);
    }
    for (path, t, a) in &g.traces {
        out += &markdown(&Facts::of(path, t), a);
        out.push('\n');
    }
    if g.traces.is_empty() {
        out += &crate::commands::memory_markdown(&g.memory);
    }
    out += &g.ets.markdown();
    out
}

/// `table FILE [--sort-by KEY] [--row-limit N] [--group-by-input-shape] [--with-flops]`, or
/// `table FILE --modules | --source-lines | --backward` for the module tree, GPU time by line of
/// user code, forward op ↔ backward node.
pub fn table(rest: &[String]) -> Result<String, CliError> {
    let files = positional(rest);
    let [path] = files.as_slice() else {
        return Err(CliError::Usage("table takes one file".into()));
    };
    let key = match flag_value(rest, "--sort-by") {
        Some(k) => {
            SortKey::parse(k).ok_or_else(|| CliError::Usage(format!("unknown sort key {k:?}")))?
        }
        None => SortKey::SelfCpu,
    };
    let row_limit = match flag_value(rest, "--row-limit") {
        Some(n) => {
            let n: i64 = n
                .parse()
                .map_err(|_| CliError::Usage(format!("bad --row-limit {n:?}")))?;
            (n >= 0).then_some(n as usize)
        }
        None => None,
    };
    let t = trace(path)?;
    let views = [
        rest.iter().any(|a| a == "--modules"),
        rest.iter().any(|a| a == "--source-lines"),
        rest.iter().any(|a| a == "--backward"),
    ];
    if views.iter().any(|&v| v) {
        use tracelight_core::analysis::{autograd, modules, source};
        use tracelight_core::report::modules as text;
        let ag = autograd::autograd(&t);
        let mut out = String::new();
        if views[0] {
            out += &text::modules_text(&modules::module_table(&t, &ag));
        }
        if views[1] {
            out += &text::source_text(&source::source_table(&t, &ag));
        }
        if views[2] {
            out += &text::backward_text(&autograd::backward_table(&t, &ag));
        }
        return Ok(out);
    }
    let mut tab = op_table(
        &t,
        OpOptions {
            group_by_input_shape: rest.iter().any(|a| a == "--group-by-input-shape"),
        },
    );
    sort_rows(&mut tab.rows, key);
    let m = &t.memory;
    let opts = TableOptions {
        row_limit,
        cpu_memory: m.device_type.contains(&0),
        device_memory: m.device_type.iter().any(|&d| d != 0),
        flops: rest.iter().any(|a| a == "--with-flops"),
    };
    Ok(render(&tab, opts))
}

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

/// `diff A B [--json] [--group-by-input-shape] [--no-renames]`: the A/B diff of two traces or
/// run folders (`report::diff`): per-step overview, verdict, matched ops and kernels;
/// `--no-renames` turns off matching renamed ops and kernels within their family.
pub fn diff(rest: &[String]) -> Result<String, CliError> {
    use tracelight_core::report::diff::{
        json::diff_json, markdown::diff_markdown, side::Side, Diff,
    };
    let files = positional(rest);
    let [a, b] = files.as_slice() else {
        return Err(CliError::Usage(
            "diff takes two files or run folders".into(),
        ));
    };
    let by_shapes = rest.iter().any(|f| f == "--group-by-input-shape");
    let side = |path: &str| -> Result<Side, CliError> {
        let traces = side_traces(path)?;
        let analyses: Vec<Analysis> = traces.iter().map(|(p, t)| Analysis::of(p, t)).collect();
        let pairs: Vec<(&Trace, &Analysis)> = traces
            .iter()
            .zip(&analyses)
            .map(|((_, t), a)| (&**t, a))
            .collect();
        Ok(Side::of(path, &pairs, by_shapes))
    };
    let opts = tracelight_core::report::diff::rows::MatchOptions {
        renames: !rest.iter().any(|f| f == "--no-renames"),
    };
    let d = Diff::with(side(a)?, side(b)?, opts);
    if rest.iter().any(|f| f == "--json") {
        return Ok(serde_json::to_string_pretty(&diff_json(&d)).unwrap_or_default() + "\n");
    }
    Ok(diff_markdown(&d))
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
