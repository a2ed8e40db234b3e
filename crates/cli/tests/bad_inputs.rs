//! The CLI on every file of the bad-input corpus (`scripts/gen_bad_inputs.py`): exit 0 with the
//! warnings in the JSON, or exit 2 with one line on stderr naming the file; never a panic (exit 101)
//! or an abort (134).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::PathBuf;
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tracelight"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_bad_input_gets_exit_2_with_one_line_naming_it_or_loads_with_warnings() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../core/tests/fixtures/bad");
    // `*.expected` beside each input are the snapshot tests' dumps (core's tests/expected.rs).
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|x| x != "expected"))
        .collect();
    files.sort();
    assert!(files.len() >= 28, "{}", files.len());
    let (mut refused, mut loaded) = (0, 0);
    for f in &files {
        let path = f.to_str().unwrap();
        let (code, out, err) = run(&["analyze", path, "--json"]);
        match code {
            2 => {
                refused += 1;
                assert_eq!(err.lines().count(), 1, "{path}: {err}");
                assert!(err.starts_with(&format!("tracelight: {path}: ")), "{err}");
            }
            0 => {
                loaded += 1;
                let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                assert_eq!(v["files"][0]["path"], path);
            }
            _ => panic!("{path}: exit {code}: {err}"),
        }
    }
    // Loaded (with warnings where something was repaired): invalid UTF-8, bad times, overflowing
    // durations, duplicate keys, flow cycles, deep args (twice), a long name.
    assert_eq!(loaded, 8, "{loaded} loaded, {refused} refused");
}

#[test]
fn repaired_inputs_list_their_warnings_in_the_json() {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures/bad/bad_ts_dur.json");
    let (code, out, _) = run(&["analyze", f.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let w = v["warnings"].to_string();
    assert!(w.contains("ts or dur not a usable time"), "{w}");
    assert!(w.contains("bad_ts_dur.json"), "warnings name the file: {w}");
}
