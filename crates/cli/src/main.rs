//! `tracelight`: the web app's analytics for CI pipelines, as Markdown or JSON.
//!
//! Exit codes: 0 on success, 2 on unreadable input (one line on stderr naming the file), 64 on a
//! usage error.

mod analyze;
mod commands;
mod run;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match commands::run(&args) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(commands::CliError::Input(e)) => {
            eprintln!("tracelight: {e}");
            ExitCode::from(2)
        }
        Err(commands::CliError::Usage(m)) => {
            eprintln!("tracelight: {m}\n\n{}", commands::USAGE);
            ExitCode::from(64)
        }
    }
}
