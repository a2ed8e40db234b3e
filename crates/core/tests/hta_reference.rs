//! The HTA temporal breakdown against Holistic Trace Analysis itself on every real GPU trace of
//! the corpus (issue 18: not a chosen subset), **exactly** (issue 31: the 1 %-of-span tolerance it
//! had let a doubled compute time pass on a third of the files).
//!
//! HTA's answers are `tests/scripts/hta_reference.out.json`, written by
//! `tests/scripts/hta_reference.py` (HTA 0.5.0, pip `holistictraceanalysis`,
//! `include_last_profiler_step=True`); this test reads them. Every Kineto trace of `real/` is
//! either in that file or in [`NOT_GPU`] with the reason.
//!
//! Exact means: the same events, read with the same times. HTA reads `ts`/`dur` as float64 µs and
//! rounds `ts` up and `ts + dur` down to whole µs when `ts` has decimals; [`hta_times`] applies
//! that to our ns model, and then kernel span, idle, compute and non-compute equal HTA's to the µs
//! on all 29 traces HTA answers for.
//!
//! Two breakdowns are compared:
//! - [`temporal_hta_compat`] (`gpu.temporal_hta` in `analyze --json`), which selects the events HTA
//!   keeps (see its doc: with two or more ProfilerSteps HTA drops GPU work whose launching CPU call
//!   is absent — 872 of 7747 GPU events in `a100_80gb_rank0of16`, 5 % of compute — and it counts
//!   `cuda_sync` events with a stream as non-compute), on every file;
//! - [`temporal`] (`gpu.temporal`: all kernels, memcpy and memset — what the GPU tab and the Ranks
//!   table show), on every file where it selects the same events as HTA (23 of the 29). Where it
//!   does not, it is checked against answers known by construction (`temporal_by_construction`
//!   below), and the GPU tab shows HTA's figures beside it.
//!
//! Files where HTA gives no usable number ([`HTA_WRONG`]) and why:
//! - `hta/cupti_range_profiler_a100_trace.json.gz`: HTA raises IndexError — no event HTA keeps
//!   has a stream, so `merged_kernels.iloc[0]` fails on an empty frame
//!   (hta/analyzers/breakdown_analysis.py, `get_temporal_breakdown`); we report an empty
//!   breakdown.
//! - `edge/large_integer_u64_rank-70.pt.trace.json.gz`: the same IndexError by the same path —
//!   its one kernel has no `args`, so no `stream`, and HTA keeps no GPU event; we count the
//!   kernel (50 µs, non-compute: it is NCCL).
//! - `kineto/resnet50_2021-01_toplevel_array.worker0.pt.trace.json.gz`: HTA's parser assumes a
//!   top-level object (hta/common/trace_parser.py, `meta = {k: v for k, v in
//!   trace_record.items() …}`: AttributeError on the bare JSON array that torch wrote in 2020);
//!   we read the array format.
//! - `kineto/h100_libkineto_before_fix_trace.json`: HTA's `assert idle_time <= kernel_time`
//!   fails. Its only kernel lasts 0.02 µs; HTA's integer-µs parsing (hta/common/trace_parser.py
//!   casts `ts`/`dur` to int64 µs) turns that `dur` into -1, so the span is negative. We keep ns
//!   and report a 20 ns span.
//! - `hta/triton_example_a100.json.gz`: HTA is wrong — a `cpu_op` (the Triton launcher) carries
//!   a `stream` arg, and HTA selects "GPU" events by `stream != -1` (breakdown_analysis.py), so
//!   it counts that 94 µs CPU op as GPU compute; the real kernel runs 1.8 µs, which is what we
//!   report.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use tracelight_core::analysis::gpu::{temporal, temporal_hta_compat};
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
    "/tests/scripts/hta_reference.out.json"
);

/// Kineto traces of `real/` that are not GPU traces.
const NOT_GPU: &[(&str, &str)] = &[
    (
        "edge/cpu_only_no_rank_no_schemaVersion.json.gz",
        "cpu_op only",
    ),
    (
        "hta/cpu_only_gloo_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
        "CPU only (gloo)",
    ),
    (
        "hta/mtia_inference_rank_0.json.gz",
        "MTIA accelerator, not a GPU",
    ),
    ("hta/mtia_rank_0.json.gz", "MTIA accelerator, not a GPU"),
];

/// Files whose HTA answer is unusable (module doc).
const HTA_WRONG: &[&str] = &[
    "hta/cupti_range_profiler_a100_trace.json.gz",
    "edge/large_integer_u64_rank-70.pt.trace.json.gz",
    "kineto/resnet50_2021-01_toplevel_array.worker0.pt.trace.json.gz",
    "kineto/h100_libkineto_before_fix_trace.json",
    "hta/triton_example_a100.json.gz",
];

/// Every `*.json[.gz]` under `real/` that is a Kineto trace (not an ET, not a memory timeline).
fn kineto_files(dir: &std::path::Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            kineto_files(&p, out);
            continue;
        }
        let rel = p
            .strip_prefix(real())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let json = rel.ends_with(".json") || rel.ends_with(".json.gz");
        let other = rel.contains("_et") || rel.contains("/et/") || rel.contains("memory_timeline");
        if json && !other {
            out.push(rel);
        }
    }
}

/// What HTA 0.5.0 reads as times (hta/common/trace_parser.py): pandas parses `ts`/`dur` as
/// float64 µs (a 16-digit µs timestamp keeps ~0.25 µs, not Kineto's 3 decimals), and when `ts`
/// has decimals, `round_down_time_stamps` rounds `ts` up and `ts + dur` down to whole µs.
fn hta_times(t: &mut tracelight_core::model::Trace) {
    let s = &mut t.slices;
    if s.start.iter().all(|&x| x % 1000 == 0) {
        return; // integer `ts`: an int64 column, which HTA does not round
    }
    // The double nearest the file's decimal text, as Python's float() reads it.
    let us = |ns: i64| -> f64 {
        format!("{}.{:03}", ns.div_euclid(1000), ns.rem_euclid(1000))
            .parse()
            .unwrap()
    };
    for i in 0..s.len() {
        let ts = us(s.start[i]);
        let end = ts + us(s.dur[i]);
        let (a, b) = (ts.ceil(), end.floor());
        s.start[i] = a as i64 * 1000;
        s.dur[i] = (b - a) as i64 * 1000;
    }
}

#[test]
fn temporal_breakdown_matches_hta_0_5_0_on_every_real_gpu_trace() {
    if tracelight_testkit::path("real").is_none() {
        return;
    }
    let r: Value = serde_json::from_slice(&std::fs::read(REF).unwrap()).unwrap();
    let files = r["files"].as_object().unwrap();
    let mut all = Vec::new();
    kineto_files(std::path::Path::new(&real()), &mut all);
    for f in &all {
        assert!(
            files.contains_key(f) || NOT_GPU.iter().any(|x| x.0 == f),
            "{f}: a real trace HTA was not run on (add it to hta_reference.py)"
        );
    }
    let mut errors = Vec::new();
    let (mut checked, mut shown_checked) = (0, 0);
    for (file, want) in files {
        let bytes = std::fs::read(format!("{}/{file}", real())).unwrap();
        let Ok(Loaded::Trace(mut t)) = load_bytes(file, &bytes) else {
            panic!("{file} must load as a trace")
        };
        // Both breakdowns hold their identities on every file, in ns.
        let (design, compat) = (temporal(&t), temporal_hta_compat(&t));
        for x in [design, compat] {
            assert_eq!(x.kernel_span_ns, x.busy_ns + x.idle_ns, "{file}");
            assert_eq!(x.busy_ns, x.compute_ns + x.non_compute_ns, "{file}");
        }
        if HTA_WRONG.contains(&file.as_str()) {
            continue;
        }
        let Some(h) = want.get("temporal") else {
            errors.push(format!(
                "{file}: HTA failed ({}) and it is not explained",
                want["error"]
            ));
            continue;
        };
        let want = [
            h["kernel_time(us)"].as_f64().unwrap(),
            h["idle_time(us)"].as_f64().unwrap(),
            h["compute_time(us)"].as_f64().unwrap(),
            h["non_compute_time(us)"].as_f64().unwrap(),
        ];
        // Exact: the same events, read as HTA reads their times.
        let same_events = design == compat;
        hta_times(&mut t);
        let mut candidates = vec![("temporal_hta", temporal_hta_compat(&t))];
        if same_events {
            // Where HTA keeps every GPU event and no sync, the figure the page shows is HTA's.
            candidates.push(("temporal", temporal(&t)));
            shown_checked += 1;
        }
        for (what, got) in candidates {
            let ours = [
                got.kernel_span_ns,
                got.idle_ns,
                got.compute_ns,
                got.non_compute_ns,
            ];
            for (k, label) in ["span", "idle", "compute", "non_compute"]
                .iter()
                .enumerate()
            {
                if ours[k] as f64 != want[k] * 1e3 {
                    errors.push(format!(
                        "{file}: {what} {label} ours {} µs vs HTA {} µs",
                        ours[k] as f64 / 1e3,
                        want[k]
                    ));
                }
            }
        }
        checked += 1;
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // Every file HTA answered for but the unusable ones.
    assert_eq!(checked, files.len() - HTA_WRONG.len());
    println!("{checked} traces equal HTA; on {shown_checked} the shown `temporal` does too");
    assert!(shown_checked >= 20, "{shown_checked}");
}

/// The figure the page shows (`temporal`: every kernel, memcpy and memset) and HTA's selection
/// (`temporal_hta_compat`) on a hand-built two-step trace where they differ, each against the
/// answer worked out by hand from the intervals below (µs):
///
/// ```text
/// stream 7: gemm A [0,100] (launched)        memcpy [300,350]   Event Sync [360,380]   gemm C [400,500] (no launch in the trace)
/// stream 8:        nccl B [50,200]
/// ```
/// `temporal`: span 0→500; busy ∪{[0,200],[300,350],[400,500]} = 350; compute ∪{A, C} = 200;
/// non-compute 150; idle 150. HTA (two ProfilerSteps, so C without its launch is dropped; the
/// Event Sync on a stream counts, as non-compute): span 0→380; busy 200 + 50 + 20 = 270;
/// compute 100; non-compute 170; idle 110.
#[test]
fn temporal_by_construction() {
    let k = |cat: &str, name: &str, stream: i64, ts: f64, dur: f64, corr: i64| {
        format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":0,"tid":{stream},"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":{stream},"correlation":{corr}}}}}"#
        )
    };
    let launch = |ts: f64, corr: i64| {
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{ts},"dur":2,"args":{{"correlation":{corr}}}}}"#
        )
    };
    let step = |n: u32, ts: f64, dur: f64| {
        format!(
            r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{n}","pid":1,"tid":1,"ts":{ts},"dur":{dur}}}"#
        )
    };
    let t0 = 1_000_000.0;
    let ev = [
        step(1, t0 - 50.0, 240.0),
        step(2, t0 + 190.0, 320.0),
        launch(t0 - 40.0, 1),
        k("kernel", "sm80_xmma_gemm_A", 7, t0, 100.0, 1),
        launch(t0 - 30.0, 2),
        k(
            "kernel",
            "ncclDevKernel_AllReduce_Sum_f32",
            8,
            t0 + 50.0,
            150.0,
            2,
        ),
        launch(t0 + 250.0, 3),
        k(
            "gpu_memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            7,
            t0 + 300.0,
            50.0,
            3,
        ),
        launch(t0 + 355.0, 4),
        k("cuda_sync", "Event Sync", 7, t0 + 360.0, 20.0, 4),
        k("kernel", "sm80_xmma_gemm_C", 7, t0 + 400.0, 100.0, 99),
    ];
    let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
    let Ok(Loaded::Trace(t)) = load_bytes("t.json", json.as_bytes()) else {
        panic!("hand-built trace must load")
    };
    let us = |x: i64| x / 1000;
    let d = temporal(&t);
    assert_eq!(
        [
            d.kernel_span_ns,
            d.busy_ns,
            d.compute_ns,
            d.non_compute_ns,
            d.idle_ns
        ]
        .map(us),
        [500, 350, 200, 150, 150]
    );
    let h = temporal_hta_compat(&t);
    assert_eq!(
        [
            h.kernel_span_ns,
            h.busy_ns,
            h.compute_ns,
            h.non_compute_ns,
            h.idle_ns
        ]
        .map(us),
        [380, 270, 100, 170, 110]
    );
}
