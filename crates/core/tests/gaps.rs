//! The per-gap list agrees with the per-stream idle sums (same gaps, same classes), on a small
//! hand-built trace and on a real corpus trace when the corpus is present.

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::gaps::{gaps, largest_gaps, GapKind};
use tracelight_core::analysis::gpu::idle_gaps;
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::Trace;

fn load(bytes: &[u8], name: &str) -> Box<Trace> {
    match load_bytes(name, bytes).unwrap() {
        Loaded::Trace(t) => t,
        other => panic!("expected a trace, got {:?}", other.format()),
    }
}

fn check_sums(t: &Trace) {
    let all = gaps(t);
    for st in idle_gaps(t) {
        let sum = |k: GapKind| -> i64 {
            all.iter()
                .filter(|g| g.device == st.device && g.stream == st.stream && g.kind == k)
                .map(|g| g.dur_ns)
                .sum()
        };
        assert_eq!(sum(GapKind::HostWait), st.host_wait_ns);
        assert_eq!(sum(GapKind::KernelWait), st.kernel_wait_ns);
        assert_eq!(sum(GapKind::Other), st.other_ns);
    }
}

#[test]
fn gaps_are_classified_like_the_stream_sums() {
    let k = |name: &str, ts: f64, dur: f64, corr: i64| {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#
        )
    };
    let l = |ts: f64, dur: f64, corr: i64| {
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{ts},"dur":{dur},"args":{{"correlation":{corr}}}}}"#
        )
    };
    let ev = [
        l(0.0, 5.0, 1),
        k("a", 10.0, 10.0, 1),
        l(6.0, 5.0, 2),
        k("b", 25.0, 10.0, 2), // 5 µs gap, launched before: kernel wait
        l(100.0, 5.0, 3),
        k("c", 110.0, 10.0, 3), // launched after b ended: host wait of 75 µs
        l(111.0, 5.0, 4),
        k("d", 200.0, 10.0, 4), // 80 µs, launched before: other
    ];
    let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
    let t = load(json.as_bytes(), "t.json");
    let g = largest_gaps(&t, 10);
    let kinds: Vec<(i64, GapKind)> = g.iter().map(|g| (g.dur_ns, g.kind)).collect();
    assert_eq!(
        kinds,
        vec![
            (80_000, GapKind::Other),
            (75_000, GapKind::HostWait),
            (5_000, GapKind::KernelWait)
        ]
    );
    check_sums(&t);
}

#[test]
fn gaps_match_idle_sums_on_a_real_trace() {
    let Some(bytes) = tracelight_testkit::bytes("real/hta/nccl_data_a100_rank0of2.json.gz") else {
        return;
    };
    let t = load(&bytes, "nccl_data_a100_rank0of2.json.gz");
    assert!(!gaps(&t).is_empty());
    check_sums(&t);
}
