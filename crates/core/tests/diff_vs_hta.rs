//! The diff's kernel rows against HTA's own `TraceDiff` on HTA's trace_diff pair
//! (`tests/scripts/hta_trace_diff_reference.py`, HTA 0.5.0, output checked in): HTA counts and
//! sums each kernel, memcpy and memset name over every ProfilerStep iteration of each trace.
//!
//! A (eager, A100) runs all its GPU work inside its six steps: every one of HTA's names has our
//! call count exactly and our total within 1 µs per call (HTA reads µs as floats, we keep ns).
//! B (torch.compile on a V100) also runs work outside its steps, which TraceDiff leaves out and
//! the diff (whole trace) keeps: there, HTA's count is never above ours.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::report::diff::rows::MatchOptions;
use tracelight_core::report::diff::{side::Side, Diff};
use tracelight_core::report::json::Analysis;

const REF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/scripts/hta_trace_diff_reference.out.json"
);

fn side(rel: &str) -> Option<Side> {
    let bytes = tracelight_testkit::bytes(&format!("real/{rel}"))?;
    let Loaded::Trace(t) = load_bytes(rel, &bytes).unwrap() else {
        panic!("{rel} is not a trace")
    };
    let a = Analysis::of(rel, &t);
    Some(Side::of(rel, &[(&t, &a)], false))
}

#[test]
fn kernel_rows_equal_hta_trace_diff_counts_and_durations() {
    let r: Value = serde_json::from_slice(&std::fs::read(REF).unwrap()).unwrap();
    let (Some(a), Some(b)) = (
        side(r["files"]["a"].as_str().unwrap()),
        side(r["files"]["b"].as_str().unwrap()),
    ) else {
        return;
    };
    let d = Diff::with(a, b, MatchOptions { renames: false });
    let row = |name: &str| {
        d.kernels
            .iter()
            .find(|k| k.name == name || k.b_name.as_deref() == Some(name))
    };
    let (mut a_checked, mut b_checked) = (0, 0);
    for h in r["kernels"].as_array().unwrap() {
        let name = h["name"].as_str().unwrap();
        let (ac, bc) = (
            h["a_counts"].as_u64().unwrap(),
            h["b_counts"].as_u64().unwrap(),
        );
        let k = row(name).unwrap_or_else(|| panic!("no kernel row {name}"));
        if ac > 0 {
            assert_eq!(k.a_calls, ac, "{name}: A calls");
            let us = k.a_ns as f64 / 1e3;
            let hta = h["a_us"].as_f64().unwrap();
            assert!(
                (us - hta).abs() <= ac as f64,
                "{name}: A {us} µs vs HTA {hta}"
            );
            a_checked += 1;
        }
        if bc > 0 {
            assert!(k.b_calls >= bc, "{name}: B {} calls, HTA {bc}", k.b_calls);
            b_checked += 1;
        }
    }
    // HTA 0.5.0 lists 174 names for A and 135 for B on this pair.
    assert_eq!((a_checked, b_checked), (174, 135));
}
