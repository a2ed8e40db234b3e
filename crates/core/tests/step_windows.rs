//! The scope picker's step windows taken in one pass (`view::link::step_windows`) are each step's
//! `step_window` (its earliest host-side slice), on the GPU fixtures and the HTA corpus traces.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use tracelight_core::analysis::scope::step_numbers;
use tracelight_core::ingest::kineto::read_kineto;
use tracelight_core::view::link::{step_window, step_windows};

#[test]
fn one_pass_windows_equal_each_steps_own() {
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    let fixtures = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/torch-2.11-cuda13-h100"
    );
    files.extend(
        std::fs::read_dir(fixtures)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".pt.trace.json.gz")),
    );
    if let Some(dir) = tracelight_testkit::path("real/hta") {
        files.extend(
            std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().ends_with(".json.gz")),
        );
    }
    files.sort();
    let mut with_steps = 0;
    for p in &files {
        let mut v = Vec::new();
        flate2::read::MultiGzDecoder::new(&std::fs::read(p).unwrap()[..])
            .read_to_end(&mut v)
            .unwrap();
        let Ok(t) = read_kineto(&v) else { continue };
        let names: Vec<String> = step_numbers(&t)
            .iter()
            .map(|n| format!("ProfilerStep#{n}"))
            .collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let each: Vec<_> = refs.iter().map(|n| step_window(&t, n)).collect();
        assert_eq!(step_windows(&t, &refs), each, "{}", p.display());
        with_steps += usize::from(each.iter().filter(|w| w.is_some()).count() > 1);
    }
    assert!(with_steps >= 5, "{with_steps} traces with steps");
}
