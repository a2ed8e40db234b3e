//! Launch delays against HTA's `get_cuda_kernel_launch_stats` on every real GPU trace, and what a
//! long delay means (issue 18: "launch delays of 121–162 ms on a 215 ms step are not believable").
//!
//! HTA's answers are `tests/scripts/hta_launch_reference.json`, written by
//! `tests/scripts/hta_launch_reference.py` (HTA 0.5.0). HTA rounds timestamps to whole µs, so
//! medians may differ by a µs or two and a pair count by the events HTA's parser drops:
//! - HTA keeps GPU work only where its `stream` is set, and (with two or more ProfilerSteps)
//!   drops events whose launching call lies outside the steps it keeps (see `hta_reference.rs`);
//! - we pair by `correlation` where HTA does too, so every pair HTA has, we have.
//!
//! Where the pairing is sound the figures are HTA's; the 162 ms median of the A100 rank-0-of-16
//! trace is real and is queueing: its compute stream runs behind 190 ms of NCCL SendRecv
//! kernels, so each launch waits for the stream, not for the driver (`median_ready` 4 µs).

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use tracelight_core::analysis::launch::{hta_launch_delays, launch_stats};
use tracelight_core::ingest::{load_bytes, Loaded};

/// The corpus folder (`tracelight_testkit::root()`, overridable by `TRACELIGHT_CORPUS`).
fn real() -> String {
    tracelight_testkit::root()
        .join("real")
        .to_string_lossy()
        .into_owned()
}
const REF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/scripts/hta_launch_reference.json"
);

#[test]
fn launch_delays_match_hta_on_every_real_gpu_trace() {
    if tracelight_testkit::path("real").is_none() {
        return;
    }
    let r: Value = serde_json::from_slice(&std::fs::read(REF).unwrap()).unwrap();
    let mut errors = Vec::new();
    let mut checked = 0;
    for (file, want) in r["files"].as_object().unwrap() {
        let bytes = std::fs::read(format!("{}/{file}", real())).unwrap();
        let Ok(Loaded::Trace(t)) = load_bytes(file, &bytes) else {
            panic!("{file} must load as a trace")
        };
        let d = hta_launch_delays(&t);
        let pairs = want["pairs"].as_u64().unwrap() as usize;
        // HTA's parser drops some events (above); never more than 6 % of pairs on this corpus.
        if d.len() < pairs || d.len() > pairs + pairs * 6 / 100 + 2 {
            errors.push(format!("{file}: {} pairs vs HTA {pairs}", d.len()));
        }
        if pairs == 0 {
            continue;
        }
        checked += 1;
        let median = d[d.len() / 2] as f64 / 1e3;
        let hta = want["median_us"].as_f64().unwrap();
        if (median - hta).abs() > 2.0 + 0.01 * hta {
            errors.push(format!("{file}: median {median} µs vs HTA {hta}"));
        }
        let max = d[d.len() - 1] as f64 / 1e3;
        let hta_max = want["max_us"].as_f64().unwrap();
        if max + 2.0 < hta_max {
            errors.push(format!("{file}: max {max} µs below HTA's {hta_max}"));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(checked >= 20, "{checked}");
}

/// Launch delay = queued behind earlier work on the stream + waited with the stream idle. A
/// hand-built stream: kernel A (launched at 0–5 µs) runs 10–110; kernel B is launched at 20–25
/// and starts at 112, 2 µs after A ends: 87 µs delay, of which 85 queued behind A and 2 ready.
/// Kernel C's launch (200–205) finds the device idle since 112+8=120: a late launch, the GPU
/// waited 85 µs for the CPU. Kernel D's call blocks until its copy ends: a blocking pair.
#[test]
fn delay_splits_into_queued_and_ready_and_finds_late_launches() {
    let text = r#"{"traceEvents":[
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":5,"args":{"correlation":1}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":5,"args":{"correlation":2}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":200,"dur":5,"args":{"correlation":3}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":300,"dur":50,"args":{"correlation":4}},
 {"ph":"X","cat":"kernel","name":"A","pid":0,"tid":7,"ts":10,"dur":100,"args":{"correlation":1,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"B","pid":0,"tid":7,"ts":112,"dur":8,"args":{"correlation":2,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"C","pid":0,"tid":7,"ts":206,"dur":4,"args":{"correlation":3,"stream":7,"device":0}},
 {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":310,"dur":20,"args":{"correlation":4,"stream":7,"device":0}}
]}"#;
    let Ok(Loaded::Trace(t)) = load_bytes("hand.json", text.as_bytes()) else {
        panic!("hand-built trace must load")
    };
    let l = launch_stats(&t);
    assert_eq!(l.launched, 3);
    assert_eq!(l.blocking_pairs, 1);
    // Delays: A 5, B 87, C 1.
    assert_eq!(l.max_delay_ns, 87_000);
    assert_eq!(l.median_delay_ns, 5_000);
    // Queued: A 0, B 85, C 0. Ready: A 5, B 2, C 1.
    assert_eq!(l.queued_total_ns, 85_000);
    assert_eq!(l.ready_total_ns, 8_000);
    assert_eq!(l.max_ready_ns, 5_000);
    assert_eq!(l.mostly_queued, 1);
    // C: device idle from 120 to its call's end at 205; the copy: idle from 210 to its start 310.
    assert_eq!(l.late_launches, 2);
    assert_eq!(l.late_launch_idle_ns, 85_000 + 100_000);
    // HTA keeps the blocking pair, clipped to 0.
    assert_eq!(hta_launch_delays(&t), vec![0, 1_000, 5_000, 87_000]);
}
