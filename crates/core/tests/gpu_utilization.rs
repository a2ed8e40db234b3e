//! GPU utilization, the Overview's headline (TensorBoard plugin: union of kernel intervals per
//! device ÷ the ProfilerStep window; whole trace without steps; memcpy/memset not counted; mean
//! over devices) — each rule on a hand-built trace whose answer is worked out by hand (issue 31).

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::gpu::gpu_summary;
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::Trace;

const T0: f64 = 2_000_000.0;

fn step(n: u32, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{n}","pid":1,"tid":1,"ts":{},"dur":{dur}}}"#,
        T0 + ts
    )
}

fn cpu(name: &str, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph":"X","cat":"cpu_op","name":"{name}","pid":1,"tid":1,"ts":{},"dur":{dur}}}"#,
        T0 + ts
    )
}

/// GPU work on `device`, `stream`, [ts, ts + dur) µs after T0.
fn gpu(cat: &str, name: &str, device: u32, stream: u32, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{device},"tid":{stream},"ts":{},"dur":{dur},"args":{{"device":{device},"stream":{stream}}}}}"#,
        T0 + ts
    )
}

fn load(ev: &[String]) -> Box<Trace> {
    let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
    match load_bytes("t.json", json.as_bytes()) {
        Ok(Loaded::Trace(t)) => t,
        _ => panic!("hand-built trace must load"),
    }
}

/// Two steps [0, 100) and [100, 200) µs: the window is [0, 200). A kernel [-50, 20) before the
/// first step is clipped to [0, 20); two overlapping kernels [50, 80) + [60, 90) on two streams
/// count once, [50, 90); a kernel [190, 260) is clipped to [190, 200); a memcpy [100, 150) and a
/// memset [150, 160) do not count. Busy = 20 + 40 + 10 = 70 µs of 200: 35 %.
#[test]
fn one_device_clips_to_the_step_window_and_skips_copies() {
    let t = load(&[
        step(1, 0.0, 100.0),
        step(2, 100.0, 100.0),
        gpu("kernel", "k_before", 0, 7, -50.0, 70.0),
        gpu("kernel", "k_a", 0, 7, 50.0, 30.0),
        gpu("kernel", "k_b", 0, 8, 60.0, 30.0),
        gpu(
            "gpu_memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            0,
            7,
            100.0,
            50.0,
        ),
        gpu("gpu_memset", "Memset (Device)", 0, 7, 150.0, 10.0),
        gpu("kernel", "k_after", 0, 7, 190.0, 70.0),
    ]);
    let g = gpu_summary(&t);
    assert!(g.window_from_steps);
    assert_eq!(g.window_ns, 200_000);
    assert_eq!(g.devices.len(), 1);
    assert_eq!(g.devices[0].busy_ns, 70_000);
    assert_eq!(g.utilization, Some(0.35));
    assert_eq!(g.idle_ns, 130_000);
}

/// Device 0 busy [0, 50) and device 1 busy [0, 100) of a [0, 200) step: 25 % and 50 %, so the
/// headline is their mean, 37.5 %, and busy the mean 75 µs (not the 100 µs union across devices).
#[test]
fn several_devices_average_their_own_utilization() {
    let t = load(&[
        step(1, 0.0, 200.0),
        gpu("kernel", "k0", 0, 7, 0.0, 50.0),
        gpu("kernel", "k1", 1, 7, 0.0, 100.0),
    ]);
    let g = gpu_summary(&t);
    let mut d: Vec<(i64, i64)> = g.devices.iter().map(|d| (d.device, d.busy_ns)).collect();
    d.sort();
    assert_eq!(d, vec![(0, 50_000), (1, 100_000)]);
    assert_eq!(g.utilization, Some(0.375));
    assert_eq!(g.busy_ns, 75_000);
}

/// Without ProfilerSteps the window is the whole trace: a CPU op [0, 400) and a kernel
/// [100, 200): 100 µs of 400 = 25 %.
#[test]
fn without_steps_the_window_is_the_whole_trace() {
    let t = load(&[
        cpu("aten::mm", 0.0, 400.0),
        gpu("kernel", "k", 0, 7, 100.0, 100.0),
    ]);
    let g = gpu_summary(&t);
    assert!(!g.window_from_steps);
    assert_eq!(g.window_ns, 400_000);
    assert_eq!(g.utilization, Some(0.25));
}

/// A trace with copies but no kernel has no utilization (not 0 %): nothing ran.
#[test]
fn copies_alone_give_no_utilization() {
    let t = load(&[
        step(1, 0.0, 100.0),
        gpu(
            "gpu_memcpy",
            "Memcpy DtoH (Device -> Pinned)",
            0,
            7,
            10.0,
            50.0,
        ),
    ]);
    assert_eq!(gpu_summary(&t).utilization, None);
}
