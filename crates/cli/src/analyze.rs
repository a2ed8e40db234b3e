//! The analytics subcommands: `summary`, `analyze --json`, `table` (DESIGN §5; `diff` is in
//! [`crate::diff`]). Kept apart
//! from `commands.rs` so the match arms there stay one line each.

use crate::commands::{load, CliError};
use tracelight_core::analysis::ops::{op_table, sort_rows, OpOptions, SortKey};
use tracelight_core::ingest::Loaded;
use tracelight_core::model::Trace;
use tracelight_core::report::facts::Facts;
use tracelight_core::report::json::{analyze_json, Analysis};
use tracelight_core::report::summary::markdown;
use tracelight_core::report::table::{render, TableOptions};

pub(crate) fn trace(path: &str) -> Result<Box<Trace>, CliError> {
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

pub(crate) fn flag_value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
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
pub(crate) fn positional(args: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if matches!(
            a.as_str(),
            "--sort-by" | "--row-limit" | "--fail-if" | "--weight"
        ) {
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
