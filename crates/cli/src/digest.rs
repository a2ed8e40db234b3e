//! `tracelight digest TRACE... -o DIR`: one digest per trace ([`tracelight_core::digest`]),
//! written by [`tracelight_digest`]; and reading a folder of digests as a run for `summary DIR` /
//! `analyze DIR --json`, with the same functions the traces go through.

use crate::input::CliError;
use std::path::{Path, PathBuf};
use tracelight_core::digest::{stem, Digest, HEADER_SUFFIX};
use tracelight_core::ingest::ranks::assign_ranks;
use tracelight_core::model::Trace;
use tracelight_core::report::json::{analyze_json_with, rank_inputs, Analysis};
use tracelight_core::report::run::run_figures;
use tracelight_core::report::run_json::run_markdown;
use tracelight_core::{Error, ErrorKind};

fn io_err(path: &Path, e: std::io::Error) -> CliError {
    CliError::Input(
        Error::new(ErrorKind::Io(e.to_string()), 0).in_file(&path.display().to_string()),
    )
}

/// `digest TRACE... -o DIR`: prints a line per trace (sizes and ratio) and a total.
pub fn digest(rest: &[String]) -> Result<String, CliError> {
    let mut out_dir = None;
    let mut traces = Vec::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" | "--out" => out_dir = it.next().map(PathBuf::from),
            _ if a.starts_with("--out=") => out_dir = Some(PathBuf::from(&a[6..])),
            _ if a.starts_with('-') => return Err(CliError::Usage(format!("unknown flag {a}"))),
            _ => traces.push(PathBuf::from(a)),
        }
    }
    let Some(dir) = out_dir else {
        return Err(CliError::Usage("digest needs -o DIR".into()));
    };
    if traces.is_empty() {
        return Err(CliError::Usage("no input trace".into()));
    }
    let mut s = String::new();
    let (mut src, mut dst) = (0u64, 0u64);
    let mut stems: Vec<String> = Vec::new();
    for t in &traces {
        let name = t
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let mut st = stem(&name).to_owned();
        // Two traces of one run may share a name (two folders' rank-0.json).
        let mut k = 1;
        while stems.contains(&st) {
            st = format!("{}-{k}", stem(&name));
            k += 1;
        }
        stems.push(st.clone());
        let w = tracelight_digest::digest_file_as(t, &dir, &st).map_err(CliError::Input)?;
        src += w.source_bytes;
        dst += w.bytes;
        s += &format!(
            "{} -> {}: {} B of {} B ({:.2} %), rank {}\n",
            t.display(),
            w.header.display(),
            w.bytes,
            w.source_bytes,
            100.0 * w.bytes as f64 / w.source_bytes.max(1) as f64,
            w.rank.map_or("?".into(), |r| r.to_string()),
        );
    }
    s += &format!(
        "{} digest(s) in {}: {dst} B for {src} B of traces ({:.2} %)\n",
        traces.len(),
        dir.display(),
        100.0 * dst as f64 / src.max(1) as f64
    );
    Ok(s)
}

/// Digest headers under `dir` (any depth), sorted.
pub fn headers(files: &[PathBuf]) -> Vec<&PathBuf> {
    files
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(HEADER_SUFFIX))
        .collect()
}

/// One digest back as an analysis (`path` = its header).
fn read_one(h: &Path) -> Result<Analysis, Error> {
    let name = h.display().to_string();
    let bytes =
        std::fs::read(h).map_err(|e| Error::new(ErrorKind::Io(e.to_string()), 0).in_file(&name))?;
    let folder = h.parent().unwrap_or(Path::new("."));
    let d = Digest::read(&name, &bytes, |f| std::fs::read(folder.join(f)).ok())?;
    Ok(d.rebuild(&name)?.analysis)
}

/// One digest back as its skeleton trace and its analysis (`diff` and `trend` read a digest as
/// one rank of a side).
pub fn read_rebuilt(h: &Path) -> Result<(Box<Trace>, Analysis), Error> {
    let name = h.display().to_string();
    let bytes =
        std::fs::read(h).map_err(|e| Error::new(ErrorKind::Io(e.to_string()), 0).in_file(&name))?;
    let folder = h.parent().unwrap_or(Path::new("."));
    let d = Digest::read(&name, &bytes, |f| std::fs::read(folder.join(f)).ok())?;
    let r = d.rebuild(&name)?;
    Ok((Box::new(r.trace), r.analysis))
}

/// `summary DIR` / `analyze DIR --json` on a folder of digests: the ranks in rank order, the
/// run's figures from [`run_figures`] as for traces. A digest that fails to read is listed with
/// its error and the rest go on.
pub fn run_digests(dir: &Path, heads: &[&PathBuf], json: bool) -> Result<String, CliError> {
    let mut all = Vec::new();
    let mut errors = Vec::new();
    for h in heads {
        match read_one(h) {
            Ok(a) => all.push(a),
            Err(e) => errors.push((h.display().to_string(), e.to_string())),
        }
    }
    if all.is_empty() {
        if let Some((_, e)) = errors.first() {
            return Err(CliError::Input(
                Error::new(ErrorKind::Syntax(e.clone()), 0).in_file(&dir.display().to_string()),
            ));
        }
    }
    all.sort_by(|a, b| (a.rank, &a.path).cmp(&(b.rank, &b.path)));
    // Ranks stay unique as when traces are opened together (two digests of `rank 0` traces).
    let keys: Vec<(Option<i64>, String)> = all.iter().map(|a| (a.rank, a.path.clone())).collect();
    let refs: Vec<(Option<i64>, &str)> = keys.iter().map(|(r, p)| (*r, p.as_str())).collect();
    for (a, r) in all.iter_mut().zip(assign_ranks(&refs)) {
        a.rank = Some(r);
    }
    if json {
        let mut v = analyze_json_with(&all, &[]);
        if let serde_json::Value::Object(o) = &mut v {
            let files: Vec<_> = all
                .iter()
                .map(
                    |a| serde_json::json!({"path": a.path, "format": "digest", "events": a.events}),
                )
                .collect();
            o.insert("files".into(), serde_json::Value::Array(files));
            o.insert(
                "digest_errors".into(),
                serde_json::json!(errors
                    .iter()
                    .map(|(p, e)| serde_json::json!({"path": p, "error": e}))
                    .collect::<Vec<_>>()),
            );
        }
        let mut out = serde_json::to_string_pretty(&v).unwrap_or_default();
        out.push('\n');
        return Ok(out);
    }
    let mut s = format!("# Run: {} ({} digests)\n\n", dir.display(), all.len());
    for (p, e) in &errors {
        s += &format!("- `{p}` could not be read: {e}\n");
    }
    if all.len() > 1 {
        s += &run_markdown(&run_figures(&rank_inputs(&all, &[])));
    }
    Ok(s)
}

/// Walks `dir` for `run_dir`'s digest check.
pub fn walk(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    crate::input::walk(dir, &mut out).map_err(|e| io_err(dir, e))?;
    Ok(out)
}
