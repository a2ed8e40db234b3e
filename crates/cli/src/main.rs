//! `tracelight`: the web app's analytics for CI pipelines, as Markdown or JSON.
//!
//! Exit codes: 0 on success, 1 when `diff --fail-if` found a bound crossed (the verdict printed
//! as usual), 2 on unreadable input (one line on stderr naming the file), 64 on a
//! usage error. A reader that closes the pipe early (`| head -1`) ends the run quietly with 0,
//! as ripgrep does: the output it wanted was delivered, the rest was not asked for.

use std::io::{ErrorKind, Write};
use std::process::ExitCode;
use tracelight_cli::commands;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match commands::run_code(&args) {
        Ok((out, code)) => {
            // Not `print!`: it panics when the reader has gone away (EPIPE; Rust ignores SIGPIPE).
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(out.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => ExitCode::from(code),
                Err(e) if e.kind() == ErrorKind::BrokenPipe => ExitCode::from(code),
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "tracelight: writing the output: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Err(commands::CliError::Input(e)) => {
            let _ = writeln!(std::io::stderr(), "tracelight: {e}");
            ExitCode::from(2)
        }
        Err(commands::CliError::Usage(m)) => {
            let _ = writeln!(std::io::stderr(), "tracelight: {m}\n\n{}", commands::USAGE);
            ExitCode::from(64)
        }
    }
}
