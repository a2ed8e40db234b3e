//! `tracelight`: the web app's analytics for CI pipelines, as Markdown or JSON.
//!
//! Exit codes: 0 on success, 1 when `diff --fail-if` found a bound crossed (the verdict printed
//! as usual), 2 on unreadable input (one line on stderr naming the file), 64 on a
//! usage error. A reader that closes the pipe early (`| head -1`) ends the run quietly with 0,
//! as ripgrep does: the output it wanted was delivered, the rest was not asked for. What to print
//! and the code are `commands::outcome`'s, which the Python package's console script prints too.

use std::io::{ErrorKind, Write};
use std::process::ExitCode;
use tracelight_cli::commands;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `view` and `mcp` serve until stopped; Ctrl-C (SIGINT's default action) ends them.
    if let Some(code) = commands::interactive(&args, &|| false) {
        return ExitCode::from(code);
    }
    let o = commands::outcome(&args);
    if !o.stdout.is_empty() {
        // Not `print!`: it panics when the reader has gone away (EPIPE; Rust ignores SIGPIPE).
        let mut stdout = std::io::stdout().lock();
        match stdout
            .write_all(o.stdout.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {}
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "tracelight: writing the output: {e}");
                return ExitCode::from(1);
            }
        }
    }
    if !o.stderr.is_empty() {
        let _ = std::io::stderr().write_all(o.stderr.as_bytes());
    }
    ExitCode::from(o.code)
}
