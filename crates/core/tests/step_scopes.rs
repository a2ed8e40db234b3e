//! Every step's window taken in one pass (`analysis::scope::step_scopes`, the scope picker's list)
//! is what `ScopeSpec::Step(n).resolve` gives for that step alone — the window `--scope step:N`
//! uses — on the GPU fixtures, the HTA corpus traces and a hand-built `train_step_N` loop.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use tracelight_core::analysis::scope::{step_scopes, ScopeSpec};
use tracelight_core::ingest::kineto::read_kineto;
use tracelight_core::model::Trace;

fn each_step_resolves_alone(t: &Trace, what: &str) -> usize {
    let all = step_scopes(t);
    for w in all.windows(2) {
        assert!(w[0].0 < w[1].0, "{what}: step numbers ascending, once each");
    }
    for (n, w) in &all {
        let one = ScopeSpec::Step(*n).resolve(t).unwrap().unwrap();
        assert_eq!(one.windows, vec![w.clone()], "{what}: step {n}");
    }
    all.len()
}

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
        with_steps += usize::from(each_step_resolves_alone(&t, &p.display().to_string()) > 1);
    }
    assert!(with_steps >= 5, "{with_steps} traces with steps");
}

#[test]
fn a_loops_own_numbered_annotation_and_a_repeated_step() {
    // train_step_N (no ProfilerStep): step 2 occurs twice, the earlier one is its window; a
    // kernel copy of the annotation on the GPU is not a step.
    let x = |name: &str, cat: &str, tid: u32, ts: f64, dur: f64| {
        format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":1,"tid":{tid},"ts":{ts},"dur":{dur},"args":{{}}}}"#
        )
    };
    let ev = [
        x("train_step_1", "user_annotation", 1, 0.0, 100.0),
        x("train_step_2", "user_annotation", 1, 300.0, 40.0),
        x("train_step_2", "user_annotation", 1, 100.0, 150.0),
        x("train_step_2", "gpu_user_annotation", 7, 90.0, 500.0),
        x("aten::mm", "cpu_op", 1, 110.0, 20.0),
    ];
    let text = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
    let t = read_kineto(text.as_bytes()).unwrap();
    assert_eq!(each_step_resolves_alone(&t, "train_step loop"), 2);
    let all = step_scopes(&t);
    assert_eq!(all[1].0, 2);
    assert_eq!((all[1].1.start_ns, all[1].1.end_ns), (100_000, 250_000));
    assert_eq!(all[1].1.label, "train_step_2");
}
