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
    let mut all = Vec::new();
    let mut out = String::new();
    let mut memory = Vec::new();
    for path in &files {
        // Snapshots and memory timelines have their own report; traces go through the analyses.
        let t = match load(path).map_err(CliError::Input)? {
            Loaded::Trace(t) => t,
            other => {
                memory.push(crate::commands::MemoryFile::of(path, &other));
                continue;
            }
        };
        let a = Analysis::of(path, &t);
        if !json {
            out += &markdown(&Facts::of(path, &t), &a);
            out.push('\n');
        }
        all.push(a);
    }
    if all.is_empty() {
        return Ok(crate::commands::memory_output(&memory, json));
    }
    if json {
        out += &serde_json::to_string_pretty(&analyze_json(&all)).unwrap_or_default();
        out.push('\n');
    }
    Ok(out)
}

/// `table FILE [--sort-by KEY] [--row-limit N] [--group-by-input-shape] [--with-flops]`.
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

/// `diff A B [--json]`: per-op (CPU total) and per-kernel (GPU total) deltas, by |delta|.
pub fn diff(rest: &[String]) -> Result<String, CliError> {
    let files = positional(rest);
    let [a, b] = files.as_slice() else {
        return Err(CliError::Usage("diff takes two files".into()));
    };
    let (ta, tb) = (trace(a)?, trace(b)?);
    let (aa, ab) = (Analysis::of(a, &ta), Analysis::of(b, &tb));
    let ops = diff_rows(
        aa.ops
            .rows
            .iter()
            .filter(|r| !r.on_device)
            .map(|r| (r.name.as_str(), r.cpu_total_ns, r.calls)),
        ab.ops
            .rows
            .iter()
            .filter(|r| !r.on_device)
            .map(|r| (r.name.as_str(), r.cpu_total_ns, r.calls)),
    );
    let kernels = diff_rows(
        aa.kernels
            .rows
            .iter()
            .map(|r| (r.name.as_str(), r.total_ns, r.calls)),
        ab.kernels
            .rows
            .iter()
            .map(|r| (r.name.as_str(), r.total_ns, r.calls)),
    );
    if rest.iter().any(|f| f == "--json") {
        let v = serde_json::json!({"a": a, "b": b, "ops": ops, "kernels": kernels});
        return Ok(serde_json::to_string_pretty(&v).unwrap_or_default() + "\n");
    }
    let mut s = format!("# diff\n\n- A: {a}\n- B: {b}\n");
    for (title, rows) in [
        ("Operators (CPU total)", &ops),
        ("Kernels (GPU total)", &kernels),
    ] {
        s += &format!("\n## {title}\n\n| name | A µs | B µs | Δ µs | A calls | B calls |\n|---|---:|---:|---:|---:|---:|\n");
        for r in rows.iter().take(30) {
            s += &format!(
                "| {} | {:.3} | {:.3} | {:+.3} | {} | {} |\n",
                r["name"].as_str().unwrap_or(""),
                r["a_us"].as_f64().unwrap_or(0.0),
                r["b_us"].as_f64().unwrap_or(0.0),
                r["delta_us"].as_f64().unwrap_or(0.0),
                r["a_calls"],
                r["b_calls"]
            );
        }
    }
    Ok(s)
}

/// (A time, B time, A calls, B calls).
type Pair = (i64, i64, u64, u64);

fn diff_rows<'a>(
    a: impl Iterator<Item = (&'a str, i64, u64)>,
    b: impl Iterator<Item = (&'a str, i64, u64)>,
) -> Vec<serde_json::Value> {
    use std::collections::BTreeMap;
    let mut m: BTreeMap<&str, Pair> = BTreeMap::new();
    for (n, t, c) in a {
        let e = m.entry(n).or_default();
        e.0 += t;
        e.2 += c;
    }
    for (n, t, c) in b {
        let e = m.entry(n).or_default();
        e.1 += t;
        e.3 += c;
    }
    let mut rows: Vec<(&str, Pair)> = m.into_iter().collect();
    rows.sort_by(|x, y| {
        let dx = (x.1 .1 - x.1 .0).abs();
        let dy = (y.1 .1 - y.1 .0).abs();
        dy.cmp(&dx).then_with(|| x.0.cmp(y.0))
    });
    rows.into_iter()
        .map(|(n, (ta, tb, ca, cb))| {
            serde_json::json!({
                "name": n,
                "a_us": ta as f64 / 1e3,
                "b_us": tb as f64 / 1e3,
                "delta_us": (tb - ta) as f64 / 1e3,
                "a_calls": ca,
                "b_calls": cb,
            })
        })
        .collect()
}
