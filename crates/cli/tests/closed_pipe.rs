//! Regression (issue 18): `tracelight analyze FILE --json | head -1` ended in
//! `panicked at … failed printing to stdout: Broken pipe` with a backtrace. A reader that closes
//! early must end the run quietly with exit code 0, as ripgrep does.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn closed_pipe_exits_quietly_without_panic() {
    // 178 kB of JSON: far more than a pipe holds (64 KiB on Linux), so the writer is still writing
    // when the reader goes away and must see EPIPE.
    let Some(file) = tracelight_testkit::path(
        "real/param/dlrm_8rank/kineto/worker0_step_12.1694128201545.pt.trace.json",
    ) else {
        return;
    };
    let file = file.to_string_lossy().into_owned();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tracelight"))
        .args(["analyze", &file, "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    {
        let mut out = BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut line).unwrap();
    } // The reader closes here, like `head -1`.
    let done = child.wait_with_output().unwrap();
    assert_eq!(line.trim(), "{");
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(!err.contains("panicked"), "stderr: {err}");
    assert!(err.is_empty(), "stderr: {err}");
    assert_eq!(done.status.code(), Some(0));
}
