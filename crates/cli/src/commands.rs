//! Argument handling and the subcommands of the CLI contract (DESIGN §5).

use std::fs::File;
use std::io::Read;
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::report::facts::Facts;

pub const USAGE: &str = "usage:
  tracelight summary FILE...           Markdown summary
  tracelight analyze FILE... --json    one JSON object with the analytics";

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
    let files: Vec<&String> = rest.iter().filter(|a| !a.starts_with("--")).collect();
    let flags: Vec<&String> = rest.iter().filter(|a| a.starts_with("--")).collect();
    match cmd.as_str() {
        "summary" | "analyze" => {
            if files.is_empty() {
                return Err(CliError::Usage("no input file".into()));
            }
            let json = cmd == "analyze" || flags.iter().any(|f| *f == "--json");
            let mut out = String::new();
            let mut facts = Vec::new();
            for path in &files {
                let loaded = load(path).map_err(CliError::Input)?;
                match loaded {
                    Loaded::Trace(t) => facts.push(Facts::of(path, &t)),
                }
            }
            if json {
                let files: Vec<serde_json::Value> = facts
                    .iter()
                    .map(|f| serde_json::json!({"path": f.file, "format": "kineto", "events": f.events}))
                    .collect();
                let warnings: Vec<String> = facts
                    .iter()
                    .flat_map(|f| f.warnings.iter().map(move |w| format!("{}: {w}", f.file)))
                    .collect();
                let v = serde_json::json!({"files": files, "facts": facts, "warnings": warnings});
                out += &serde_json::to_string_pretty(&v).unwrap_or_default();
                out.push('\n');
            } else {
                for f in &facts {
                    out += &f.markdown();
                    out.push('\n');
                }
            }
            Ok(out)
        }
        "--help" | "-h" | "help" => Ok(format!("{USAGE}\n")),
        other => Err(CliError::Usage(format!("unknown command {other:?}"))),
    }
}
