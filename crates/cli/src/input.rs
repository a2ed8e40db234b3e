//! Reading the command line and the input files: the crate's error type, the push loader over a
//! file, a trace, the flags, a folder's files. The bottom layer of the crate: it imports nothing
//! of it, and every subcommand's module imports it (the dispatcher, `commands`, sits on top).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::model::Trace;

/// The CLI's one error type.
pub enum CliError {
    /// Input that could not be read: exit 2.
    Input(tracelight_core::Error),
    /// Bad arguments: exit 64.
    Usage(String),
}

/// Reads a file in fixed slices through the same push loader the browser uses.
pub fn load(path: &str) -> Result<Loaded, tracelight_core::Error> {
    let io = |e: std::io::Error| {
        tracelight_core::Error::new(tracelight_core::ErrorKind::Io(e.to_string()), 0).in_file(path)
    };
    let mut f = File::open(path).map_err(io)?;
    let mut loader = Loader::new(path).threaded();
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        loader.push(&buf[..n])?;
    }
    loader.finish()
}

pub fn trace(path: &str) -> Result<Box<Trace>, CliError> {
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

pub fn flag_value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
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
pub fn positional(args: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if matches!(
            a.as_str(),
            "--sort-by"
                | "--row-limit"
                | "--fail-if"
                | "--weight"
                | "--scope"
                | "--step-a"
                | "--step-b"
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

/// Every regular file under `dir`, sorted, hidden ones (`.git`, `.ipynb_checkpoints`) left out.
pub fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
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
