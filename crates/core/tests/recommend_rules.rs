//! Each recommendation rule fired on a small hand-built trace made to trigger it, with its numbers
//! and slice ids, and not fired on a healthy trace.

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::recommend::RuleId;
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::Trace;
use tracelight_core::report::json::Analysis;

fn x(cat: &str, name: &str, tid: &str, ts: f64, dur: f64, args: &str) -> String {
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":1,"tid":{tid},"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
    )
}

fn kernel(name: &str, ts: f64, dur: f64, corr: i64) -> String {
    x(
        "kernel",
        name,
        "7",
        ts,
        dur,
        &format!(r#""device":0,"stream":7,"correlation":{corr}"#),
    )
}

fn launch(ts: f64, dur: f64, corr: i64) -> String {
    x(
        "cuda_runtime",
        "cudaLaunchKernel",
        "1",
        ts,
        dur,
        &format!(r#""correlation":{corr}"#),
    )
}

fn load(events: &[String], top: &str) -> Box<Trace> {
    let json = format!(r#"{{{top}"traceEvents":[{}]}}"#, events.join(","));
    match load_bytes("t.json", json.as_bytes()).unwrap() {
        Loaded::Trace(t) => t,
        other => panic!("expected a trace, got {:?}", other.format()),
    }
}

/// (rule, numbers, slices) of each fired recommendation.
type Fired = (RuleId, Vec<(String, f64)>, Vec<u32>);

fn fired(t: &Trace) -> Vec<Fired> {
    Analysis::of("t.json", t)
        .recommendations
        .into_iter()
        .map(|r| (r.rule, r.numbers, r.slices))
        .collect()
}

fn step() -> String {
    x("user_annotation", "ProfilerStep#1", "1", 0.0, 1000.0, "")
}

/// A busy GPU with overlapped work: nothing should fire.
fn healthy() -> Vec<String> {
    let mut v = vec![step()];
    for k in 0..10 {
        let ts = k as f64 * 100.0;
        v.push(launch(ts, 5.0, k));
        v.push(kernel("ampere_bf16_s16816gemm", ts + 6.0, 95.0, k));
    }
    v
}

#[test]
fn a_healthy_trace_fires_nothing() {
    assert!(fired(&load(&healthy(), "")).is_empty());
}

#[test]
fn dataloader_share_fires_with_its_share_and_slice() {
    // DataLoader ranks below Kernel, so it only claims step time the GPU leaves free.
    let mut v = healthy();
    v.push(x(
        "user_annotation",
        "ProfilerStep#2",
        "1",
        1000.0,
        1000.0,
        "",
    ));
    v.push(x(
        "cpu_op",
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        "2",
        1000.0,
        800.0,
        "",
    ));
    let f = fired(&load(&v, ""));
    let r = f.iter().find(|r| r.0 == RuleId::DataLoader).unwrap();
    // By construction: the loader's [1000, 1800) µs of step 2, less [1000, 1001) where healthy()'s
    // last kernel ([906, 1001)) still runs and outranks it: 799 µs over the steps' 2000 µs.
    let num = |k: &str| r.1.iter().find(|(n, _)| n == k).unwrap().1;
    assert_eq!(num("dataloader_us"), 799.0);
    assert!(
        (num("dataloader_share") - 0.3995).abs() < 1e-12,
        "{}",
        num("dataloader_share")
    );
    assert_eq!(r.2.len(), 1);
}

#[test]
fn gpu_idle_fires_below_half_utilization() {
    let v = vec![
        step(),
        launch(0.0, 5.0, 1),
        kernel("ampere_bf16_s16816gemm", 10.0, 100.0, 1),
    ];
    let f = fired(&load(&v, ""));
    let r = f.iter().find(|r| r.0 == RuleId::GpuIdle).unwrap();
    assert!(r
        .1
        .iter()
        .any(|(k, v)| k == "utilization" && (*v - 0.1).abs() < 1e-9));
}

#[test]
fn sync_points_fire_with_the_causing_op() {
    let mut v = healthy();
    v.push(x("cpu_op", "aten::item", "1", 500.0, 200.0, ""));
    v.push(x(
        "cuda_runtime",
        "cudaStreamSynchronize",
        "1",
        510.0,
        180.0,
        "",
    ));
    let t = load(&v, "");
    let a = Analysis::of("t.json", &t);
    assert_eq!(a.sync[0].op.as_deref(), Some("aten::item"));
    let r = a
        .recommendations
        .iter()
        .find(|r| r.rule == RuleId::SyncPoints)
        .unwrap();
    assert_eq!(r.slices.len(), 1);
    assert_eq!(
        t.str(t.slices.name[r.slices[0] as usize]),
        "cudaStreamSynchronize"
    );
    assert!(
        r.detail
            .contains("the largest is cudaStreamSynchronize from aten::item (1 call)."),
        "{}",
        r.detail
    );
}

#[test]
fn a_sync_no_op_encloses_is_called_outside_any_op() {
    // torch.cuda.synchronize() from Python, no step recorded: nothing encloses the runtime call.
    let mut v: Vec<String> = healthy().into_iter().skip(1).collect();
    v.push(x(
        "cuda_runtime",
        "cudaDeviceSynchronize",
        "1",
        510.0,
        180.0,
        "",
    ));
    let t = load(&v, "");
    let a = Analysis::of("t.json", &t);
    let r = a
        .recommendations
        .iter()
        .find(|r| r.rule == RuleId::SyncPoints)
        .unwrap();
    assert!(
        r.detail
            .contains("the largest is cudaDeviceSynchronize, called outside any op (1 call)."),
        "{}",
        r.detail
    );
    assert!(!r.detail.contains("no op"));
}

#[test]
fn small_kernels_fire_launch_bound() {
    let mut v = vec![step()];
    for k in 0..20 {
        let ts = k as f64 * 50.0;
        v.push(launch(ts, 20.0, k));
        v.push(kernel("ampere_bf16_s16816gemm", ts + 21.0, 18.0, k));
        v.push(kernel("tiny_kernel", ts + 49.0, 1.0, 1000 + k));
        v.push(launch(ts + 20.0, 8.0, 1000 + k));
    }
    let f = fired(&load(&v, ""));
    let r = f.iter().find(|r| r.0 == RuleId::LaunchBound).unwrap();
    assert!(r.1.iter().any(|(k, v)| k == "short_kernels" && *v == 40.0));
    assert!(!r.2.is_empty());
}

#[test]
fn fp32_simt_gemm_fires_no_tensor_cores() {
    let mut v = healthy();
    v.push(kernel("volta_sgemm_128x64_nn", 950.0, 100.0, 99));
    let f = fired(&load(&v, ""));
    let r = f.iter().find(|r| r.0 == RuleId::NoTensorCores).unwrap();
    // By construction: 100 µs of sgemm among 10 × 95 µs of bf16 GEMMs and itself.
    let num = |k: &str| r.1.iter().find(|(n, _)| n == k).unwrap().1;
    assert_eq!(num("fp32_gemm_us"), 100.0);
    assert!((num("fp32_gemm_share") - 100.0 / 1050.0).abs() < 1e-12);
    assert_eq!(r.2.len(), 1);
}

#[test]
fn exposed_communication_fires() {
    let mut v = healthy();
    v.push(x(
        "kernel",
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        "8",
        1100.0,
        300.0,
        r#""device":0,"stream":8"#,
    ));
    let f = fired(&load(&v, ""));
    let r = f.iter().find(|r| r.0 == RuleId::ExposedComm).unwrap();
    assert!(r
        .1
        .iter()
        .any(|(k, v)| k == "exposed_comm_us" && (*v - 300.0).abs() < 1e-6));
    assert_eq!(r.2.len(), 1);
}

#[test]
fn peak_memory_near_capacity_fires_with_the_op_at_peak() {
    let mut v = healthy();
    v.push(x("cpu_op", "aten::empty", "1", 300.0, 10.0, ""));
    v.push(r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":305,"args":{"Device Type":1,"Device Id":0,"Addr":1,"Bytes":900,"Total Allocated":900,"Total Reserved":960}}"#.to_owned());
    let top =
        r#""deviceProperties":[{"id":0,"name":"NVIDIA A100-SXM4-80GB","totalGlobalMem":1000}],"#;
    let t = load(&v, top);
    let a = Analysis::of("t.json", &t);
    assert_eq!(a.memory[0].peak_op.as_deref(), Some("aten::empty"));
    let r = a
        .recommendations
        .iter()
        .find(|r| r.rule == RuleId::MemoryNearCapacity)
        .unwrap();
    assert!(r
        .numbers
        .iter()
        .any(|(k, v)| k == "reserved_share" && (*v - 0.96).abs() < 1e-9));
    assert_eq!(r.slices.len(), 1);
}

/// The GPU waits 795 µs of a 1 ms step for the optimizer on the host and 50 µs for a pageable
/// host-to-device copy: both idle-cause rules fire with their share of the step and the
/// interval to step through.
#[test]
fn idle_causes_fire_their_rules_with_the_intervals() {
    let v = vec![
        step(),
        launch(0.0, 5.0, 1),
        kernel("ampere_bf16_s16816gemm", 0.0, 100.0, 1),
        x(
            "user_annotation",
            "Optimizer.step#AdamW.step",
            "1",
            100.0,
            800.0,
            "",
        ),
        launch(895.0, 5.0, 2),
        kernel("ampere_bf16_s16816gemm", 900.0, 40.0, 2),
        x(
            "cuda_runtime",
            "cudaMemcpy",
            "1",
            940.0,
            50.0,
            r#""correlation":3"#,
        ),
        x(
            "gpu_memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            "7",
            990.0,
            10.0,
            r#""device":0,"stream":7,"correlation":3"#,
        ),
    ];
    let t = load(&v, "");
    let a = Analysis::of("t.json", &t);
    let opt = a
        .recommendations
        .iter()
        .find(|r| r.rule == RuleId::OptimizerHost)
        .unwrap();
    let share = |r: &tracelight_core::analysis::recommend::Recommendation| {
        r.numbers
            .iter()
            .find(|n| n.0 == "gpu_waits_share")
            .unwrap()
            .1
    };
    assert!((share(opt) - 0.795).abs() < 1e-9, "{}", share(opt));
    assert_eq!(opt.ranges, vec![(100_000, 895_000)]);
    assert!(opt.detail.contains("Optimizer.step#AdamW.step"));
    let h2d = a
        .recommendations
        .iter()
        .find(|r| r.rule == RuleId::H2dCopy)
        .unwrap();
    assert!((share(h2d) - 0.05).abs() < 1e-9);
    assert_eq!(h2d.ranges, vec![(940_000, 990_000)]);
}
