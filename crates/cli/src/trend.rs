//! `tracelight trend DIR [--json]`: a folder of runs as a series (`report::trend`). Each entry of
//! DIR is one run — a trace file, or a run folder (one trace per rank, read as `diff` reads a
//! side) or a digest (`STEM.digest.json` with its tables, or a run folder of digests) — in the
//! order of its name, so runs named by date or zero-padded commit number line up.

use crate::diff::SideFiles;
use crate::input::CliError;
use tracelight_core::report::trend::Trend;
use tracelight_core::report::trend_runs::run_name;

/// The runs under `dir`: its trace files and its folders, by name.
fn entries(dir: &str) -> Result<Vec<(String, String)>, CliError> {
    let io = |e: std::io::Error| {
        CliError::Input(
            tracelight_core::Error::new(tracelight_core::ErrorKind::Io(e.to_string()), 0)
                .in_file(dir),
        )
    };
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io)?.flatten() {
        let p = e.path();
        let Some(name) = p.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        // The same rule as the page's Trend tab (`report::trend_runs`).
        let run = if p.is_dir() {
            Some(name.clone())
        } else {
            run_name(&name)
        };
        if let Some(run) = run {
            v.push((run, p.to_string_lossy().into_owned()));
        }
    }
    v.sort();
    Ok(v)
}

pub fn trend(rest: &[String]) -> Result<String, CliError> {
    let dirs: Vec<&String> = rest.iter().filter(|a| !a.starts_with("--")).collect();
    let [dir] = dirs.as_slice() else {
        return Err(CliError::Usage("trend takes one folder of runs".into()));
    };
    let runs = entries(dir)?;
    if runs.len() < 2 {
        return Err(CliError::Input(
            tracelight_core::Error::new(
                tracelight_core::ErrorKind::Incompatible(format!(
                    "a trend needs at least two runs (trace files or run folders); found {}",
                    runs.len()
                )),
                0,
            )
            .in_file(dir.as_str()),
        ));
    }
    let mut sides = Vec::with_capacity(runs.len());
    for (name, path) in runs {
        let f = SideFiles::read(&path)?;
        sides.push((name, f.side(false)));
    }
    let t = Trend::of(sides);
    if rest.iter().any(|a| a == "--json") {
        return Ok(serde_json::to_string_pretty(&t.json()).unwrap_or_default() + "\n");
    }
    Ok(t.markdown())
}
