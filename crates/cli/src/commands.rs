//! Argument handling and the subcommands of the CLI contract (DESIGN §5).

use std::fs::File;
use std::io::Read;
use tracelight_core::ingest::{Loaded, Loader};

pub const USAGE: &str = "usage:
  tracelight summary FILE...           Markdown summary
  tracelight analyze FILE... --json    one JSON object with the analytics
  tracelight table FILE [--sort-by KEY] [--row-limit N] [--group-by-input-shape] [--with-flops]
                                       key_averages()-style operator table
  tracelight diff A B [--json]         per-op and per-kernel time deltas";

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
    let mut loader = Loader::new(path);
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

pub fn run(args: &[String]) -> Result<String, CliError> {
    let Some((cmd, rest)) = args.split_first() else {
        return Err(CliError::Usage("no command".into()));
    };
    match cmd.as_str() {
        "summary" | "analyze" => crate::analyze::summary_or_analyze(cmd, rest),
        "table" => crate::analyze::table(rest),
        "diff" => crate::analyze::diff(rest),
        "--help" | "-h" | "help" => Ok(format!("{USAGE}\n")),
        other => Err(CliError::Usage(format!("unknown command {other:?}"))),
    }
}
