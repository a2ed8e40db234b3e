//! Idle causes (`analysis::idle`): a hand-built trace with one gap of each cause, whose answer
//! is known by construction, and the real GPU corpus, where the causes of every device and
//! stream must sum to its idle time computed independently here (window − union of its GPU
//! work), per step too, with no kept interval overlapping another.

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::idle::{idle_causes, Cause, IdleCauses};
use tracelight_core::analysis::intervals::{clip, total, union};
use tracelight_core::analysis::steps::steps;
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::Trace;

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus/real");
const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/torch-2.11-cuda13-h100"
);

fn load(bytes: &[u8], name: &str) -> Box<Trace> {
    match load_bytes(name, bytes).unwrap() {
        Loaded::Trace(t) => t,
        other => panic!("expected a trace, got {:?}", other.format()),
    }
}

/// Host events on pid 1 tid 1; kernels on device 0 stream 7, linked by correlation.
fn host(cat: &str, name: &str, ts: f64, dur: f64, corr: Option<i64>) -> String {
    let args = corr.map_or(String::new(), |c| {
        format!(r#","args":{{"correlation":{c}}}"#)
    });
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":1,"tid":1,"ts":{ts},"dur":{dur}{args}}}"#
    )
}

fn gpu(cat: &str, name: &str, ts: f64, dur: f64, corr: i64) -> String {
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#
    )
}

fn launch(ts: f64, dur: f64, corr: i64) -> String {
    host("cuda_runtime", "cudaLaunchKernel", ts, dur, Some(corr))
}

/// One gap per cause (µs), each built so its split is known:
///
/// | gap | host meanwhile | causes |
/// |---|---|---|
/// | 100–200 | DataLoader `__next__` 100–190, launch 190–195 | data 90, launch 5, queued 5 |
/// | 300–400 | `cudaStreamSynchronize` 210–302 (returns as the device drains), `aten::add` 305–390 | sync 90, queued 10 |
/// | 500–590 | a pageable `cudaMemcpy` 500–590 whose HtoD copy runs 590–600 | H2D 90 |
/// | 700–800 | a slow `cudaLaunchKernel` 700–795 | launch 95, queued 5 |
/// | 810–900 | `Optimizer.step#AdamW.step` 810–895, launch 890–895 | optimizer 80, launch 5, queued 5 |
/// | 950–1050 | `aten::copy_` 950–1046, launch 1040–1045 | host ops 90, launch 5, queued 5 |
/// | 1100–1150 | `## forward ##` 1100–1146, launch 1141–1146 | Python 41, launch 5, queued 4 |
/// | 1160–1250 | `gloo:all_reduce` 1160–1240, launch 1243–1248 | collective 80, unknown 3, launch 5, queued 2 |
/// | 1260–1300 | nothing (the step ends) | unknown 40 |
fn hand_built() -> Box<Trace> {
    let ev = [
        host("user_annotation", "ProfilerStep#1", 10.0, 590.0, None),
        host("user_annotation", "ProfilerStep#2", 600.0, 700.0, None),
        launch(1.0, 2.0, 1),
        gpu("kernel", "k0", 10.0, 90.0, 1),
        host(
            "user_annotation",
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            100.0,
            90.0,
            None,
        ),
        launch(190.0, 5.0, 2),
        gpu("kernel", "k1", 200.0, 100.0, 2),
        host("cuda_runtime", "cudaStreamSynchronize", 210.0, 92.0, None),
        host("cpu_op", "aten::add", 305.0, 85.0, None),
        launch(385.0, 5.0, 3),
        gpu("kernel", "k2", 400.0, 100.0, 3),
        host("cuda_runtime", "cudaMemcpy", 500.0, 90.0, Some(4)),
        gpu(
            "gpu_memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            590.0,
            10.0,
            4,
        ),
        launch(591.0, 4.0, 5),
        gpu("kernel", "k3", 600.0, 100.0, 5),
        launch(700.0, 95.0, 6),
        gpu("kernel", "k4", 800.0, 10.0, 6),
        host(
            "user_annotation",
            "Optimizer.step#AdamW.step",
            810.0,
            85.0,
            None,
        ),
        launch(890.0, 5.0, 7),
        gpu("kernel", "k5", 900.0, 50.0, 7),
        host("cpu_op", "aten::copy_", 950.0, 96.0, None),
        launch(1040.0, 5.0, 8),
        gpu("kernel", "k6", 1050.0, 50.0, 8),
        host("user_annotation", "## forward ##", 1100.0, 46.0, None),
        launch(1141.0, 5.0, 9),
        gpu("kernel", "k7", 1150.0, 10.0, 9),
        host("user_annotation", "gloo:all_reduce", 1160.0, 80.0, None),
        launch(1243.0, 5.0, 10),
        gpu("kernel", "k8", 1250.0, 10.0, 10),
    ];
    let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
    load(json.as_bytes(), "idle.json")
}

fn us(i: &IdleCauses, c: Cause) -> i64 {
    i.ns(c) / 1000
}

#[test]
fn each_gap_gets_its_cause_by_construction() {
    let t = hand_built();
    let st = steps(&t);
    let i = idle_causes(&t, &st);
    assert_eq!((i.window_start_ns, i.window_end_ns), (10_000, 1_300_000));
    let want = [
        (Cause::DataLoading, 90),
        (Cause::CollectiveWait, 80),
        (Cause::DeviceSync, 90),
        (Cause::H2dCopy, 90),
        (Cause::LaunchBound, 5 + 95 + 5 + 5 + 5 + 5),
        (Cause::Optimizer, 80),
        (Cause::HostOps, 90),
        (Cause::Python, 41),
        (Cause::Unknown, 3 + 40),
        (Cause::Queued, 5 + 10 + 5 + 5 + 5 + 4 + 2),
    ];
    for (c, v) in want {
        assert_eq!(us(&i, c), v, "{c:?}");
    }
    assert_eq!(i.idle_ns, 760_000);
    assert_eq!(i.causes.iter().map(|c| c.ns).sum::<i64>(), i.idle_ns);
    // Per step: gaps 1-3 (290 µs) fall in step 1, the rest (470 µs) in step 2.
    let per: Vec<i64> = i.steps.iter().map(|s| s.idle_ns / 1000).collect();
    assert_eq!(per, vec![290, 470]);
    assert_eq!(
        i.steps[0].by_cause,
        vec![
            (Cause::DataLoading, 90_000),
            (Cause::DeviceSync, 90_000),
            (Cause::H2dCopy, 90_000),
            (Cause::LaunchBound, 5_000),
            (Cause::Queued, 15_000),
        ]
    );
    // The evidence: what the host was in.
    let top = |c: Cause| {
        i.causes
            .iter()
            .find(|x| x.cause == c)
            .map(|x| x.top[0].0.clone())
            .unwrap()
    };
    assert!(top(Cause::DataLoading).starts_with("enumerate(DataLoader)"));
    assert_eq!(top(Cause::DeviceSync), "cudaStreamSynchronize");
    assert_eq!(top(Cause::H2dCopy), "cudaMemcpy");
    assert_eq!(top(Cause::Optimizer), "Optimizer.step#AdamW.step");
    assert_eq!(top(Cause::HostOps), "aten::copy_");
    assert_eq!(top(Cause::Python), "## forward ##");
    assert_eq!(top(Cause::CollectiveWait), "gloo:all_reduce");
    // One stream: its idle time is the device's, with the same causes.
    assert_eq!(i.streams.len(), 1);
    assert_eq!(i.streams[0].by_cause, i.devices[0].by_cause);
    // The intervals for the timeline: the data-loading one is 100–190 µs.
    assert_eq!(i.ranges(Cause::DataLoading), vec![(100_000, 190_000)]);
}

/// Back-to-back kernels each shorter than its launch call: the gaps between them are
/// launch-bound whatever the host did besides launching.
#[test]
fn a_stretch_of_tiny_kernels_is_launch_bound() {
    let mut ev = vec![host("user_annotation", "ProfilerStep#1", 0.0, 100.0, None)];
    for k in 0..10 {
        let t0 = 10.0 * k as f64;
        // An op around each launch: without the stretch rule its time would be host ops.
        ev.push(host("cpu_op", "aten::add", t0, 9.0, None));
        ev.push(launch(t0 + 2.0, 6.0, k + 1));
        ev.push(gpu("kernel", "tiny", t0 + 8.5, 1.0, k + 1));
    }
    let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
    let t = load(json.as_bytes(), "tiny.json");
    let i = idle_causes(&t, &steps(&t));
    // Gaps between kernels: 9.5–18.5, …: 9 × 9 µs, of which 0.5 µs each is queued (the launch
    // returns at 8, the kernel starts at 8.5): 9 × 8.5 µs launch-bound although an op covers
    // them. Before the first kernel: 2 µs in the op, then 6 µs in the launch call; after the
    // last: 0.5 µs with nothing on the host.
    assert_eq!(i.ns(Cause::Queued), 10 * 500);
    assert_eq!(i.ns(Cause::LaunchBound), 6_000 + 9 * 8_500);
    assert_eq!(i.ns(Cause::HostOps), 2_000);
    assert_eq!(i.ns(Cause::Unknown), 500);
}

/// Σ causes = idle per device and stream and step, against idle computed here from the GPU work.
fn check_sums(t: &Trace, name: &str) {
    let st = steps(t);
    let i = idle_causes(t, &st);
    let (lo, hi) = (i.window_start_ns, i.window_end_ns);
    let s = &t.slices;
    for d in &i.devices {
        let work: Vec<(i64, i64)> = (0..t.gpu.slice.len())
            .filter(|&r| {
                let k = t.gpu.slice[r] as usize;
                s.kind[k].is_gpu_work()
                    && (if t.gpu.device[r] >= 0 {
                        i64::from(t.gpu.device[r])
                    } else {
                        t.tracks[s.track[k] as usize].device.unwrap_or(-1)
                    }) == d.device
            })
            .map(|r| {
                let k = t.gpu.slice[r] as usize;
                (s.start[k], s.end(k))
            })
            .collect();
        let busy = total(&clip(&union(work), lo, hi));
        assert_eq!(d.idle_ns, (hi - lo) - busy, "{name}: device {}", d.device);
        let sum: i64 = d.by_cause.iter().map(|x| x.1).sum();
        assert_eq!(sum, d.idle_ns, "{name}: device {} causes", d.device);
    }
    for x in &i.streams {
        let sum: i64 = x.by_cause.iter().map(|c| c.1).sum();
        assert_eq!(sum, x.idle_ns, "{name}: stream {}", x.stream);
    }
    for x in &i.steps {
        let sum: i64 = x.by_cause.iter().map(|c| c.1).sum();
        assert!(
            (sum - x.idle_ns).abs() <= i.devices.len() as i64,
            "{name}: {}",
            x.name
        );
        assert!(x.idle_ns <= x.dur_ns);
    }
    // Kept intervals of one device never overlap.
    for d in &i.devices {
        let mut v: Vec<(i64, i64)> = i
            .intervals
            .iter()
            .filter(|x| x.device == d.device)
            .map(|x| (x.start_ns, x.end_ns))
            .collect();
        v.sort_unstable();
        assert!(v.windows(2).all(|w| w[0].1 <= w[1].0), "{name}: overlap");
    }
    let total_causes: i64 = i.causes.iter().map(|c| c.ns).sum();
    assert!(
        (total_causes - i.idle_ns).abs() <= i.causes.len() as i64,
        "{name}"
    );
}

#[test]
fn causes_sum_to_idle_on_the_gpu_corpus() {
    let mut files: Vec<String> = [
        "hta/a100_80gb_rank0of16.json.gz",
        "hta/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
        "hta/nccl_data_a100_rank0of2.json.gz",
        "hta/cuda_event_sync_multi_stream_trace.json.gz",
        "hta/v100_rank1of2_profile_memory.json.gz",
        "param/dlrm_8rank/kineto/worker0_step_12.1694128201545.pt.trace.json",
        "param/dlrm_8rank/kineto/worker5_step_12.1694128201549.pt.trace.json",
    ]
    .iter()
    .map(|f| format!("{REAL}/{f}"))
    .collect();
    for f in ["gpu_lm_bf16", "gpu_mlp", "gpu_matmul"] {
        files.push(format!("{FIXTURES}/{f}.pt.trace.json.gz"));
    }
    let mut seen = 0;
    for f in &files {
        let Ok(bytes) = std::fs::read(f) else {
            println!("note: {f} not found; skipping");
            continue;
        };
        let t = load(&bytes, f);
        check_sums(&t, f);
        seen += 1;
    }
    assert!(seen >= 3, "the H100 fixtures are in the repo");
}
