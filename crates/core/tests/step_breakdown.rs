//! The step breakdown (Overview, diff): the TensorBoard plugin's priority order (Kernel, Memcpy,
//! Memset, Communication, Runtime, DataLoader, CPU Exec, Other), each category claiming only
//! time no higher one claimed (issue 31: the figure had no check but its own sum).
//!
//! Two independent answers:
//! - a hand-built step where every category overlaps another, worked out by hand below;
//! - the plugin itself (torch-tb-profiler 0.4.3, `tests/scripts/tb_plugin_reference.py`, output
//!   checked in) on the corpus traces of its own era, compared over the plugin's step windows.
//!   The plugin moves a step's end to the end of the GPU work its host step launched (and its
//!   start to no earlier than the previous step's end); Tracelight's steps are the ProfilerStep
//!   annotations as recorded. [`breakdown`] takes any windows, so the classification and the
//!   priority are compared on the plugin's windows, to within 1 µs per part (the plugin keeps µs
//!   as floats). Why newer traces are not compared: the script's doc.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use tracelight_core::analysis::steps::{breakdown, steps, CATEGORIES};
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::Trace;

fn load(name: &str, bytes: &[u8]) -> Box<Trace> {
    match load_bytes(name, bytes) {
        Ok(Loaded::Trace(t)) => t,
        Ok(other) => panic!("{name}: not a trace: {:?}", other.format()),
        Err(e) => panic!("{name}: {e}"),
    }
}

/// One step [0, 100) µs, every category overlapping the next (µs):
///
/// ```text
/// kernel        gemm            [10, 30)     stream 7
/// memcpy        HtoD            [20, 40)     stream 8   → claims [30, 40)
/// memset                        [35, 45)     stream 8   → claims [40, 45)
/// communication ncclDevKernel   [25, 55)     stream 9   → claims [45, 55)
/// runtime       cudaLaunchKernel [5, 12) and [50, 60)   → claims [5, 10) and [55, 60)
/// dataloader    enumerate(DataLoader)#…__next__ [0, 8)  → claims [0, 5)
/// cpu exec      aten::mul [58, 70), aten::add [65, 75)   → claims [60, 75)
/// other         the rest: [75, 100) = 25
/// ```
#[test]
fn every_category_overlapping_the_next_claims_only_what_is_left() {
    let t0 = 1_000_000.0;
    let x = |cat: &str, name: &str, tid: u32, ts: f64, dur: f64, args: &str| {
        format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{},"dur":{dur}{args}}}"#,
            t0 + ts,
            pid = if args.is_empty() { 1 } else { 0 },
        )
    };
    let gpu = |stream: u32, corr: u32| {
        format!(r#","args":{{"device":0,"stream":{stream},"correlation":{corr}}}"#)
    };
    let ev = [
        x("user_annotation", "ProfilerStep#1", 1, 0.0, 100.0, ""),
        x(
            "cpu_op",
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            1,
            0.0,
            8.0,
            "",
        ),
        x("cuda_runtime", "cudaLaunchKernel", 1, 5.0, 7.0, ""),
        x("cuda_runtime", "cudaLaunchKernel", 1, 50.0, 10.0, ""),
        x("cpu_op", "aten::mul", 1, 58.0, 12.0, ""),
        x("cpu_op", "aten::add", 2, 65.0, 10.0, ""),
        x("kernel", "sm80_xmma_gemm", 7, 10.0, 20.0, &gpu(7, 1)),
        x(
            "gpu_memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            8,
            20.0,
            20.0,
            &gpu(8, 2),
        ),
        x("gpu_memset", "Memset (Device)", 8, 35.0, 10.0, &gpu(8, 3)),
        x(
            "kernel",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            9,
            25.0,
            30.0,
            &gpu(9, 4),
        ),
    ];
    let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
    let t = load("t.json", json.as_bytes());
    let st = steps(&t);
    assert_eq!(st.len(), 1);
    let us: Vec<i64> = st[0].parts_ns.iter().map(|&ns| ns / 1000).collect();
    let want = [
        ("kernel", 20),
        ("memcpy", 10),
        ("memset", 5),
        ("communication", 10),
        ("runtime", 10),
        ("dataloader", 5),
        ("cpu_exec", 15),
        ("other", 25),
    ];
    for (k, (name, v)) in want.iter().enumerate() {
        assert_eq!(CATEGORIES[k], *name);
        assert_eq!(us[k], *v, "{name}: {us:?}");
    }
    assert_eq!(st[0].parts_ns.iter().sum::<i64>(), st[0].dur_ns);
}

#[test]
fn equals_the_tensorboard_plugin_over_its_step_windows() {
    let r: Value =
        serde_json::from_str(include_str!("scripts/tb_plugin_reference.out.json")).unwrap();
    let files = r["files"].as_object().unwrap();
    let (mut checked, mut steps_checked) = (0, 0);
    let mut errors = Vec::new();
    for (rel, want) in files {
        let Some(bytes) = tracelight_testkit::bytes(rel) else {
            continue;
        };
        let t = load(rel, &bytes);
        let ws = want["steps"].as_array().unwrap();
        let windows: Vec<(i64, i64)> = ws
            .iter()
            .map(|s| {
                let ns = |k: &str| (s[k].as_f64().unwrap() * 1e3).round() as i64;
                (ns("start_us"), ns("end_us"))
            })
            .collect();
        for (s, parts) in ws.iter().zip(breakdown(&t, &windows)) {
            for (k, name) in CATEGORIES.iter().enumerate() {
                let theirs = s[format!("{name}_us")].as_f64().unwrap();
                let ours = parts[k] as f64 / 1e3;
                if (ours - theirs).abs() > 1.0 {
                    errors.push(format!(
                        "{rel} step {}: {name} ours {ours} µs vs the plugin's {theirs} µs",
                        s["name"]
                    ));
                }
            }
            steps_checked += 1;
        }
        checked += 1;
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    tracelight_testkit::checked("traces with the plugin's breakdown", checked, files.len());
    if checked > 0 {
        assert_eq!(steps_checked, 19);
    }
}
