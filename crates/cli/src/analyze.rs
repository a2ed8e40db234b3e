//! The analytics subcommands: `summary`, `analyze --json`, `table` (docs/cli.md; `diff` is in
//! [`crate::diff`]). Kept apart
//! from `commands.rs` so the match arms there stay one line each.

use crate::input::{flag_value, load, positional, trace, CliError};
use tracelight_core::analysis::ops::{op_table, op_table_masked, sort_rows, OpOptions, SortKey};
use tracelight_core::analysis::scope::{Mask, ScopeSpec, TimeScope};
use tracelight_core::ingest::Loaded;
use tracelight_core::model::Trace;
use tracelight_core::report::facts::Facts;
use tracelight_core::report::json::{analyze_json, Analysis};
use tracelight_core::report::scoped::scope_json;
use tracelight_core::report::summary::markdown;
use tracelight_core::report::table::{render, TableOptions};

/// `summary FILE…` (Markdown) and `analyze FILE… --json`.
pub fn summary_or_analyze(cmd: &str, rest: &[String]) -> Result<String, CliError> {
    let files = positional(rest);
    if files.is_empty() {
        return Err(CliError::Usage("no input file".into()));
    }
    let json = cmd == "analyze" || rest.iter().any(|f| f == "--json");
    let spec = scope_arg(rest)?;
    if let [dir] = files.as_slice() {
        let p = std::path::Path::new(dir.as_str());
        if p.is_dir() {
            if spec != ScopeSpec::Whole {
                return Err(CliError::Usage(
                    "--scope applies to trace files, not to a run folder".into(),
                ));
            }
            return crate::run::run_dir(p, json);
        }
    }
    let mut loaded = Vec::with_capacity(files.len());
    for path in &files {
        loaded.push(((*path).clone(), load(path).map_err(CliError::Input)?));
    }
    report_scoped(&loaded, json, &spec)
}

/// `--scope step:N | annotation:NAME[:K] | window:START_NS-END_NS` (the whole trace without it).
fn scope_arg(rest: &[String]) -> Result<ScopeSpec, CliError> {
    match flag_value(rest, "--scope") {
        Some(v) => ScopeSpec::parse(v).map_err(CliError::Usage),
        None if rest.iter().any(|a| a == "--scope") => {
            Err(CliError::Usage("--scope needs a value".into()))
        }
        None => Ok(ScopeSpec::Whole),
    }
}

/// The windows `spec` names in `t`; an error names the file and what it has instead.
fn resolve(spec: &ScopeSpec, path: &str, t: &Trace) -> Result<Option<TimeScope>, CliError> {
    spec.resolve(t)
        .map_err(|m| CliError::Usage(format!("{path}: {m}")))
}

/// `summary` (Markdown) or `analyze --json` of files already loaded, in the order given: what the
/// command prints for them.
pub fn report(files: &[(String, Loaded)], json: bool) -> String {
    report_scoped(files, json, &ScopeSpec::Whole).unwrap_or_default()
}

/// [`report`] with every trace's tables restricted to `spec` (`--scope`); fails when a trace
/// does not have what it names.
pub fn report_scoped(
    files: &[(String, Loaded)],
    json: bool,
    spec: &ScopeSpec,
) -> Result<String, CliError> {
    let g = gather(files, spec)?;
    Ok(if json {
        let mut out = serde_json::to_string_pretty(&gathered_json(g)).unwrap_or_default();
        out.push('\n');
        out
    } else {
        gathered_markdown(g)
    })
}

/// The files of one command line sorted by kind, traces analysed.
struct Gathered<'a> {
    traces: Vec<(&'a str, &'a Trace, Analysis)>,
    /// The `scope` object of each trace, under `--scope`.
    scopes: Vec<serde_json::Value>,
    memory: Vec<crate::memory::MemoryFile>,
    ets: crate::et::EtFiles<'a>,
    fr: Vec<crate::fr::FrFile>,
}

fn gather<'a>(files: &'a [(String, Loaded)], spec: &ScopeSpec) -> Result<Gathered<'a>, CliError> {
    let mut g = Gathered {
        traces: Vec::new(),
        scopes: Vec::new(),
        memory: Vec::new(),
        ets: crate::et::EtFiles::default(),
        fr: Vec::new(),
    };
    let mut dumps = Vec::new();
    for (path, loaded) in files {
        // Snapshots and memory timelines have their own report; traces go through the analyses.
        match loaded {
            Loaded::Trace(t) => {
                let whole = Analysis::of(path, t);
                let a = match resolve(spec, path, t)? {
                    Some(scope) => {
                        let a = whole.scoped(t, &scope);
                        g.scopes.push(scope_json(spec, &scope));
                        a
                    }
                    None => whole,
                };
                g.traces.push((path, t, a));
                if files.len() > 1 {
                    g.ets.keep_trace(path, t);
                }
            }
            Loaded::ExecTrace(e) => g.ets.add(path, e),
            Loaded::FlightRecorder(d) => dumps.push((path.clone(), (**d).clone())),
            other => g.memory.push(crate::memory::MemoryFile::of(path, other)),
        }
    }
    g.fr = crate::fr::from_args(dumps);
    Ok(g)
}

/// `analyze FILE… --json`'s object (the Python bindings' `analyze()`, without a text round trip).
pub fn report_json(files: &[(String, Loaded)]) -> serde_json::Value {
    match gather(files, &ScopeSpec::Whole) {
        Ok(g) => gathered_json(g),
        Err(_) => serde_json::Value::Null,
    }
}

fn gathered_json(g: Gathered<'_>) -> serde_json::Value {
    let all: Vec<Analysis> = g.traces.into_iter().map(|(_, _, a)| a).collect();
    let mut v = if all.is_empty() {
        crate::memory::memory_json(&g.memory)
    } else {
        analyze_json(&all)
    };
    // Under --scope: the scope beside the tables it restricted, on top and in each trace's.
    if let (Some(first), serde_json::Value::Object(o)) = (g.scopes.first(), &mut v) {
        o.insert("scope".into(), first.clone());
        if let Some(serde_json::Value::Array(traces)) = o.get_mut("traces") {
            for (tr, sc) in traces.iter_mut().zip(&g.scopes) {
                if let serde_json::Value::Object(x) = tr {
                    x.insert("scope".into(), sc.clone());
                }
            }
        }
    }
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
    match gather(files, &ScopeSpec::Whole) {
        Ok(g) => gathered_markdown(g),
        Err(_) => String::new(),
    }
}

fn gathered_markdown(g: Gathered<'_>) -> String {
    let mut out = String::new();
    if !g.fr.is_empty() {
        out += &tracelight_core::report::flight_recorder::markdown(&crate::fr::report(&g.fr, 0));
        out.push('\n');
    }
    if g.traces.is_empty() && g.ets.is_empty() {
        return out + &crate::memory::memory_markdown(&g.memory);
    }
    for (k, (path, t, a)) in g.traces.iter().enumerate() {
        if let Some(sc) = g.scopes.get(k) {
            out += &format!(
                "> Scope: {} (`--scope {}`), {} window(s) — the tables count what ran in it; \
                 not restricted: {}.\n\n",
                sc["label"].as_str().unwrap_or(""),
                sc["spec"].as_str().unwrap_or(""),
                sc["windows"].as_array().map_or(0, Vec::len),
                tracelight_core::report::scoped::WHOLE_TRACE.join(", ")
            );
        }
        out += &markdown(&Facts::of(path, t), a);
        out.push('\n');
    }
    if g.traces.is_empty() {
        out += &crate::memory::memory_markdown(&g.memory);
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
    let spec = scope_arg(rest)?;
    let scope = resolve(&spec, path, &t)?;
    let views = [
        rest.iter().any(|a| a == "--modules"),
        rest.iter().any(|a| a == "--source-lines"),
        rest.iter().any(|a| a == "--backward"),
    ];
    if views.iter().any(|&v| v) {
        use tracelight_core::analysis::{autograd, modules, source};
        use tracelight_core::report::modules as text;
        let ag = autograd::autograd(&t);
        let mask_v = scope.as_ref().map(|s| s.slice_mask(&t));
        let keep = Mask(mask_v.as_deref());
        let mut out = String::new();
        if views[0] {
            out += &text::modules_text(&modules::module_table_masked(&t, &ag, keep));
        }
        if views[1] {
            out += &text::source_text(&source::source_table_masked(&t, &ag, keep));
        }
        if views[2] {
            out += &text::backward_text(&autograd::backward_table_masked(&t, &ag, keep));
        }
        return Ok(out);
    }
    let opts = OpOptions {
        group_by_input_shape: rest.iter().any(|a| a == "--group-by-input-shape"),
    };
    let mut tab = match &scope {
        Some(sc) => {
            let keep = sc.slice_mask(&t);
            op_table_masked(&t, opts, Mask(Some(&keep)), &|ts| sc.contains(ts)).0
        }
        None => op_table(&t, opts),
    };
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
