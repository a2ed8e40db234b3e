//! Writes Tracelight digests ([`tracelight_core::digest`]): one trace in, `STEM.digest.json` plus
//! one Parquet file per table out. Native only (the `parquet` crate); the page and the CLI read
//! digests with core's own small reader.
//!
//! [`digest_file`] is the one entry point the CLI and the Python package (`tracelight.digest()`,
//! the Ray fan-out) call:
//!
//! ```no_run
//! let out = tracelight_digest::digest_file(
//!     std::path::Path::new("rank0.pt.trace.json.gz"),
//!     std::path::Path::new("digests/"),
//! )?;
//! println!("{} bytes of digest for {} bytes of trace", out.bytes, out.source_bytes);
//! # Ok::<(), tracelight_core::Error>(())
//! ```
//!
//! Parquet settings: PLAIN encoding, no dictionary, GZIP pages, data page v1, no statistics, no
//! page index — the subset [`tracelight_core::parquet`] reads, and what any Parquet reader
//! (DuckDB, Spark, Polars, pyarrow) takes.

mod write;

pub use write::{table_bytes, write_digest};

use std::io::Read;
use std::path::{Path, PathBuf};
use tracelight_core::digest::{stem, Digest, Source};
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::report::analysis::Analysis;
use tracelight_core::{Error, ErrorKind};

/// What [`digest_file`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The header file (`DIR/STEM.digest.json`).
    pub header: PathBuf,
    /// Every file written, header first.
    pub files: Vec<PathBuf>,
    /// Bytes written in all.
    pub bytes: u64,
    /// The trace's size as stored.
    pub source_bytes: u64,
    pub rank: Option<i64>,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::new(ErrorKind::Io(e.to_string()), 0).in_file(&path.display().to_string())
}

/// Reads a trace (gzip or not) through the streaming loader and computes its CRC-32 on the way.
pub fn load_trace(path: &Path) -> Result<(tracelight_core::model::Trace, Source), Error> {
    let name = path.display().to_string();
    let mut f = std::fs::File::open(path).map_err(io(path))?;
    let mut loader = Loader::new(&name).threaded();
    let mut crc = flate2::Crc::new();
    let mut buf = vec![0u8; 4 << 20];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        crc.update(&buf[..n]);
        size += n as u64;
        loader.push(&buf[..n])?;
    }
    let t = match loader.finish()? {
        Loaded::Trace(t) => *t,
        other => {
            return Err(Error::new(
                ErrorKind::Incompatible(format!(
                    "a digest is made from a Kineto trace, this is a {}",
                    other.format().label()
                )),
                0,
            )
            .in_file(&name))
        }
    };
    let file_name = path
        .file_name()
        .map_or_else(|| name.clone(), |n| n.to_string_lossy().into_owned());
    Ok((
        t,
        Source {
            name: file_name,
            size,
            crc32: format!("{:08x}", crc.sum()),
        },
    ))
}

/// Makes the digest of the trace at `trace` and writes it into `out_dir` (created if needed),
/// under the trace's [`stem`] (`worker0.pt.trace.json.gz` → `worker0.pt.trace.digest.json` and
/// `worker0.pt.trace.TABLE.parquet`). Errors name the file.
pub fn digest_file(trace: &Path, out_dir: &Path) -> Result<Written, Error> {
    let name = trace
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    digest_file_as(trace, out_dir, stem(&name))
}

/// [`digest_file`] under a given stem (for traces of one run whose names collide).
pub fn digest_file_as(trace: &Path, out_dir: &Path, stem: &str) -> Result<Written, Error> {
    let (t, source) = load_trace(trace)?;
    let a = Analysis::of(&trace.display().to_string(), &t);
    let d = Digest::of(&t, &a, source, stem);
    write_digest(&d, out_dir, stem)
}
