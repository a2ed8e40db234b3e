//! Multi-rank figures on hand-built traces whose answers are known by construction: four ranks on
//! four unrelated clocks run a step of compute then all_reduce; rank 2's compute before the second
//! all_reduce takes a known 1500 µs longer, so the others wait exactly that long for it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::report::json::{analyze_json, rank_inputs, Analysis};
use tracelight_core::report::run::{run_figures, AlignMethod};
use tracelight_core::report::run_steps::steps_across;
use tracelight_core::report::straggler::{Reason, StragglerMethod};

fn reason_kind(r: &Reason) -> &'static str {
    match r {
        Reason::ArrivedLast { .. } => "arrived_last",
        Reason::LateStart { .. } => "late_start",
        Reason::SlowestStep { .. } => "slowest_step",
        Reason::SlowerOps { .. } => "slower_ops",
        Reason::Unexplained => "unexplained",
    }
}

const N: i64 = 4;
const DELAY_US: i64 = 1500;
const XFER_US: i64 = 200;
const NELEMS: u64 = 1 << 20;

/// One rank's trace. Times are µs on the rank's own clock (`clock` added to everything). Each
/// all_reduce ends at the same true instant on every rank: the latest arrival + the transfer.
fn rank_trace(rank: i64, clock: i64, seq_args: bool, nelems_of_second: u64) -> Vec<u8> {
    let mut ev = Vec::new();
    let step = |ts: i64, dur: i64| {
        format!(
            r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#5","pid":1,"tid":1,"ts":{ts},"dur":{dur}}}"#
        )
    };
    let kernel = |name: &str, ts: i64, dur: i64, extra: &str| {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7{extra}}}}}"#
        )
    };
    let comm = |seq: i64, nelems: u64| {
        let mut a = format!(
            r#","Collective name":"allreduce","In msg nelems":{nelems},"Out msg nelems":{nelems},"dtype":"Float","Group size":{N},"Process Group Name":"0""#
        );
        if seq_args {
            a += &format!(r#","Seq":{seq}"#);
        }
        a
    };
    // True time: step 0..4000; compute 100..1100 (+ a rank-dependent 0..30 µs so starts differ);
    // all_reduce 0 from 1100 + jitter to 1130 + XFER; compute 2 then all_reduce 1.
    let jitter = rank * 10;
    let ar0_latest = 1100 + (N - 1) * 10;
    let ar0_end = ar0_latest + XFER_US;
    let slow = if rank == 2 { DELAY_US } else { 0 };
    let c2_start = ar0_end + 50;
    let ar1_start = c2_start + 600 + slow;
    let ar1_end = c2_start + 600 + DELAY_US + XFER_US;
    ev.push(step(clock, 4000));
    ev.push(kernel("gemm_fwd", clock + 100, 1000 + jitter, ""));
    ev.push(kernel(
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        clock + 1100 + jitter,
        ar0_end - 1100 - jitter,
        &comm(0, NELEMS),
    ));
    ev.push(kernel("gemm_bwd", clock + c2_start, 600, ""));
    if slow > 0 {
        ev.push(kernel(
            "slow_extra_kernel",
            clock + c2_start + 600,
            slow,
            "",
        ));
    }
    ev.push(kernel(
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        clock + ar1_start,
        ar1_end - ar1_start,
        &comm(1, nelems_of_second),
    ));
    format!(
        r#"{{"distributedInfo":{{"rank":{rank},"world_size":{N}}},"traceEvents":[{}]}}"#,
        ev.join(",")
    )
    .into_bytes()
}

fn analyses(seq_args: bool, odd_rank_nelems: Option<(i64, u64)>) -> Vec<Analysis> {
    (0..N)
        .map(|r| {
            let nelems = match odd_rank_nelems {
                Some((odd, n)) if odd == r => n,
                _ => NELEMS,
            };
            // Unrelated clocks: ranks are 1000 s, 3 ms and 17 µs apart.
            let clock = 1_000_000_000 * r + 3_000 * r * r + 17 * r;
            let bytes = rank_trace(r, clock, seq_args, nelems);
            let Ok(Loaded::Trace(t)) = load_bytes(&format!("rank{r}.json"), &bytes) else {
                panic!("hand-built trace did not load")
            };
            Analysis::of(&format!("rank{r}.json"), &t)
        })
        .collect()
}

#[test]
fn a_rank_delayed_before_a_collective_gives_exact_skew_wait_and_the_rank_waited_for() {
    for seq_args in [true, false] {
        let all = analyses(seq_args, None);
        let f = run_figures(&rank_inputs(&all, &[]));
        assert_eq!(f.alignment.method, AlignMethod::Collectives);
        assert_eq!(f.collectives.len(), 2, "seq_args={seq_args}");
        assert_eq!(f.unmatched_calls, 0);
        let c0 = &f.collectives[0];
        let c1 = &f.collectives[1];
        assert_eq!((c0.seq, c1.seq), (0, 1));
        assert_eq!(c1.seq_from_args, seq_args);
        assert_eq!(c0.pg.as_deref(), Some("0"));
        // All_reduce 0: ranks arrive 10 µs apart, rank 3 last.
        assert_eq!(c0.skew_ns, 30_000);
        assert_eq!(c0.latest_rank, 3);
        assert_eq!(c0.earliest_rank, 0);
        assert_eq!(c0.latency_ns, XFER_US * 1000);
        // All_reduce 1: rank 2 arrives DELAY_US late; the others each wait exactly that.
        assert_eq!(c1.skew_ns, DELAY_US * 1000);
        assert_eq!(c1.latest_rank, 2);
        for p in &c1.parts {
            let want = if p.rank == 2 { 0 } else { DELAY_US * 1000 };
            assert_eq!(p.wait_ns, want, "rank {}", p.rank);
        }
        assert_eq!(c1.latency_ns, XFER_US * 1000);
        // 4 MiB of Float in 200 µs: algbw 20.97 GB/s, busbw × 2(n−1)/n = 1.5.
        assert_eq!(c1.bytes, Some(NELEMS * 4));
        let algbw = (NELEMS * 4) as f64 / (XFER_US * 1000) as f64;
        assert!((c1.algbw_gbs.unwrap_or(0.0) - algbw).abs() < 1e-9);
        assert!((c1.busbw_gbs.unwrap_or(0.0) - algbw * 1.5).abs() < 1e-9);
        assert!(c1.mismatches.is_empty());
        // Per rank: waits summed over both collectives; rank 2 and rank 3 each arrived last once.
        let w = |r: i64| &f.ranks[r as usize].wait;
        assert_eq!(w(0).wait_ns, 30_000 + DELAY_US * 1000);
        assert_eq!(w(2).wait_ns, 10_000);
        assert_eq!(w(3).wait_ns, DELAY_US * 1000);
        assert_eq!((w(2).arrived_last, w(3).arrived_last), (1, 1));
        assert_eq!(w(2).arrived_last_pct, 50.0);
        // The straggler: rank 2, the rank the others waited 3 × 1500 µs for (rank 3's 10, 20
        // and 30 µs at the first all_reduce are 1.3% of all the waiting); its evidence is the
        // extra kernel, 1500 µs per step. Every step is 4000 µs: no slowest step to name.
        let st = f.straggler.straggler().expect("a straggler");
        assert_eq!(st.rank, 2);
        assert_eq!(st.method, StragglerMethod::CollectiveArrival);
        assert_eq!(st.others_wait_ns, 3 * DELAY_US * 1000);
        assert_eq!(st.wait_share, 4_500.0 / 4_560.0);
        assert_eq!(st.lost_per_step_ns, (DELAY_US * 1000) as f64);
        assert_eq!(st.ops[0].name, "slow_extra_kernel");
        assert_eq!(st.ops[0].delta_ns, (DELAY_US * 1000) as f64);
        assert_eq!(st.ops[0].median_ns, 0.0);
        let kinds: Vec<&str> = st.reasons.iter().map(reason_kind).collect();
        assert_eq!(kinds, ["arrived_last", "slower_ops"]);
        // The clocks were 1000 s apart: offsets recovered to the ns.
        assert_eq!(
            f.alignment.offsets_ns[1],
            1_000_000_000_000 + 3_000_000 + 17_000
        );
    }
}

#[test]
fn ranks_that_disagree_on_a_collective_are_reported() {
    let all = analyses(true, Some((1, NELEMS / 2)));
    let f = run_figures(&rank_inputs(&all, &[]));
    let c1 = &f.collectives[1];
    assert_eq!(
        c1.mismatches,
        vec![format!(
            "In msg nelems: rank 0 = {NELEMS}, rank 1 = {}",
            NELEMS / 2
        )]
    );
    assert!(f.collectives[0].mismatches.is_empty());
}

#[test]
fn analyze_json_of_several_traces_keeps_its_fields_and_adds_the_collectives() {
    let all = analyses(true, None);
    let v = analyze_json(&all);
    let ranks = v["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), N as usize);
    for key in [
        "rank",
        "file",
        "step_time_us",
        "compute_us",
        "comm_us",
        "idle_us",
        "exposed_comm_us",
    ] {
        assert!(ranks[0].get(key).is_some(), "{key}");
    }
    assert_eq!(ranks[0]["wait_us"], 30.0 + DELAY_US as f64);
    assert!(v["straggler"]["rank"].is_i64());
    assert!(v["straggler"]["vs_median"].is_f64());
    let c = &v["collectives"][1];
    assert_eq!(c["name"], "allreduce");
    assert_eq!(c["pg"], "0");
    assert_eq!(c["seq"], 1);
    assert_eq!(c["bytes"], NELEMS * 4);
    assert_eq!(c["skew_us"], DELAY_US as f64);
    assert_eq!(c["ranks"][2]["wait_us"], 0.0);
    assert_eq!(c["ranks"][0]["wait_us"], DELAY_US as f64);
    assert_eq!(v["straggler"]["rank"], 2);
    assert_eq!(v["straggler"]["method"], "collective_arrival");
    assert_eq!(v["straggler"]["others_wait_us"], 3.0 * DELAY_US as f64);
    assert!(v["no_straggler"].is_null());
    assert!(v.get("waited_for").is_none());
}

#[test]
fn without_collectives_ranks_align_on_the_first_step_they_all_hold() {
    // Three ranks without NCCL: rank k's clock is `k` × 7.25 ms + k² × 1 µs ahead, and rank 0
    // alone recorded ProfilerStep#4 before the common #5; #5 starts at true time 1000 µs. Step #6
    // takes 900, 950 and 920 µs: rank 1 is its slowest.
    let clocks = [0i64, 7_251, 14_504];
    const STEP6: [i64; 3] = [900, 950, 920];
    let all: Vec<Analysis> = clocks
        .iter()
        .enumerate()
        .map(|(r, &clock)| {
            let step = |n: i64, ts: i64, dur: i64| {
                format!(
                    r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{n}","pid":1,"tid":1,"ts":{ts},"dur":{dur}}}"#
                )
            };
            let mut ev = vec![step(5, clock + 1000, 900), step(6, clock + 2000, STEP6[r])];
            if r == 0 {
                ev.push(step(4, clock, 900));
            }
            let kernel = format!(
                r#"{{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":{},"dur":100,"args":{{"device":0,"stream":7}}}}"#,
                clock + 1100
            );
            ev.push(kernel);
            let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
            let Ok(Loaded::Trace(t)) = load_bytes("r.json", json.as_bytes()) else {
                panic!("hand-built trace did not load")
            };
            Analysis::of(&format!("rank{r}.json"), &t)
        })
        .collect();
    let f = run_figures(&rank_inputs(&all, &[]));
    assert_eq!(f.alignment.method, AlignMethod::Steps);
    assert_eq!(f.alignment.step.as_deref(), Some("ProfilerStep#5"));
    let want: Vec<i64> = clocks.iter().map(|c| c * 1000).collect();
    assert_eq!(f.alignment.offsets_ns, want);
    assert!(f.collectives.is_empty());
    // Per step across ranks, by name: #4 is rank 0's alone; #5 ties at 900 µs (the lowest rank
    // is named); #6 is rank 1's 950 µs against a 920 µs median.
    let s = steps_across(&f.ranks);
    let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        ["ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6"]
    );
    assert_eq!((s[0].slowest_rank, s[0].slowest_ns), (0, 900_000));
    assert_eq!((s[1].slowest_rank, s[1].slowest_ns), (0, 900_000));
    assert_eq!(s[1].median_ns, 900_000.0);
    assert_eq!((s[2].slowest_rank, s[2].slowest_ns), (1, 950_000));
    assert_eq!(s[2].median_ns, 920_000.0);
}
