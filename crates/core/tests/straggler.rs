//! The straggler is the rank the others wait for (docs/definitions.md), one verdict in every
//! output. Hand-built runs whose answer is known by construction: in a synchronous job every
//! rank's step takes the same time, so the slowest step names nobody; the rank that arrives last
//! at the collectives is the straggler when it stands out beyond the step-to-step noise, and
//! there is "no straggler" when the latest arrival rotates or costs less than the noise.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::report::json::{analyze_json, rank_inputs, Analysis};
use tracelight_core::report::run::{run_figures, RunFigures};
use tracelight_core::report::run_json::run_markdown;
use tracelight_core::report::straggler::{NoStraggler, Reason, StragglerMethod, StragglerVerdict};

/// One rank: `steps` steps of `step_us` each; in step k an all_reduce (`Seq` k) that this rank
/// enters at `arrive(k)` µs into the step and that ends for everyone at `end_us`. Its clock is
/// shifted by `clock` µs (ranks' clocks are unrelated).
fn rank(
    r: i64,
    n: i64,
    steps: i64,
    step_us: i64,
    end_us: i64,
    clock: i64,
    arrive: &dyn Fn(i64) -> i64,
) -> Analysis {
    let mut ev = Vec::new();
    for k in 0..steps {
        let t0 = clock + k * step_us;
        ev.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{k}","pid":1,"tid":1,"ts":{t0},"dur":{step_us}}}"#));
        let a = arrive(k);
        ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":{},"dur":{},"args":{{"device":0,"stream":7}}}}"#, t0 + 10, a - 10));
        ev.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":7,"ts":{},"dur":{},"args":{{"device":0,"stream":7,"Collective name":"allreduce","In msg nelems":1024,"Out msg nelems":1024,"dtype":"Float","Group size":{n},"Process Group Name":"0","Seq":{k}}}}}"#,
            t0 + a,
            end_us - a
        ));
    }
    let json = format!(
        r#"{{"distributedInfo":{{"rank":{r},"world_size":{n}}},"traceEvents":[{}]}}"#,
        ev.join(",")
    );
    let Ok(Loaded::Trace(t)) = load_bytes("r.json", json.as_bytes()) else {
        panic!("hand-built trace did not load")
    };
    Analysis::of(&format!("rank{r}.json"), &t)
}

fn figures(all: &[Analysis]) -> RunFigures {
    run_figures(&rank_inputs(all, &[]))
}

/// The issue's run: 8 ranks, 10 steps of exactly 10 ms on every rank; rank 5 enters every
/// all_reduce 2 ms after the others, who arrive within 70 µs of each other.
#[test]
fn a_rank_last_at_every_collective_is_the_straggler_though_every_step_is_equal() {
    const N: i64 = 8;
    let arrive = |r: i64| move |_k: i64| if r == 5 { 6_000 } else { 4_000 + 10 * r };
    let all: Vec<Analysis> = (0..N)
        .map(|r| rank(r, N, 10, 10_000, 7_000, 1_000_000 * r, &arrive(r)))
        .collect();
    let f = figures(&all);
    assert!(
        f.ranks.iter().all(|r| r.step_time_ns == 10_000_000),
        "equal steps"
    );
    let s = f.straggler.straggler().expect("rank 5 is the straggler");
    assert_eq!(s.rank, 5);
    assert_eq!(s.method, StragglerMethod::CollectiveArrival);
    assert_eq!((s.arrived_last, s.collectives), (10, 10));
    // Per collective the others wait 2000 − 10 r µs each: Σ over r ≠ 5 of (2000 − 10 r) = 13 790 µs.
    let per: i64 = (0..N).filter(|&r| r != 5).map(|r| 2_000 - 10 * r).sum();
    assert_eq!(s.others_wait_ns, 10 * per * 1000);
    assert_eq!(s.wait_share, 1.0);
    assert_eq!(s.lost_per_step_ns, (per * 1000) as f64 / 7.0);
    // Its lateness over the collective's median start (ranks 3 and 4 at 4030, 4040 µs).
    assert_eq!(s.median_lateness_ns, (6_000 - 4_035) * 1000);
    assert_eq!(s.vs_median, 1.0);
    let kinds: Vec<&str> = s.reasons.iter().map(kind).collect();
    // Its gemm (5990 µs) runs longer per step than the median of the others' (rank 3's
    // 4020 µs): the op that makes it late.
    assert_eq!(kinds, ["arrived_last", "slower_ops"]);
    assert_eq!(s.ops[0].name, "gemm");
    assert_eq!(s.ops[0].delta_ns, (5_990 - 4_020) as f64 * 1000.0);
    // One verdict everywhere: the JSON and the Markdown name rank 5 the same way.
    let v = analyze_json(&all);
    assert_eq!(v["straggler"]["rank"], 5);
    assert_eq!(
        v["straggler"]["reasons"].as_array().unwrap().len(),
        s.reasons.len()
    );
    assert_eq!(v["straggler"]["reasons"][0]["kind"], "arrived_last");
    let md = run_markdown(&f);
    assert!(
        md.contains("### Straggler: rank 5 (found by collective arrival)"),
        "{md}"
    );
    assert!(md.contains("| 5 ◀ |"), "{md}");
    for r in &s.reasons {
        assert!(
            md.contains(&r.sentence(&tracelight_core::report::run_json::text_dur)),
            "{md}"
        );
    }
}

fn kind(r: &Reason) -> &'static str {
    match r {
        Reason::ArrivedLast { .. } => "arrived_last",
        Reason::LateStart { .. } => "late_start",
        Reason::SlowestStep { .. } => "slowest_step",
        Reason::SlowerOps { .. } => "slower_ops",
        Reason::Unexplained => "unexplained",
    }
}

/// Four ranks, eight collectives: at collective k rank k mod 4 arrives 300 µs after the others.
/// Each rank caused a quarter of the waiting: no rank stands out.
#[test]
fn a_latest_arrival_that_rotates_names_no_straggler() {
    const N: i64 = 4;
    let all: Vec<Analysis> = (0..N)
        .map(|r| {
            let arrive = move |k: i64| if k % N == r { 4_300 } else { 4_000 };
            rank(r, N, 8, 10_000, 5_000, 777 * r, &arrive)
        })
        .collect();
    let f = figures(&all);
    match &f.straggler {
        StragglerVerdict::None(NoStraggler::WithinNoise {
            method,
            share,
            share_needed,
            ..
        }) => {
            assert_eq!(*method, StragglerMethod::CollectiveArrival);
            assert_eq!(*share, 0.25);
            assert_eq!(*share_needed, (1.0 + 0.25) / 2.0);
        }
        other => panic!("expected no straggler, got {other:?}"),
    }
    let v = analyze_json(&all);
    assert!(v["straggler"].is_null());
    assert_eq!(v["no_straggler"]["kind"], "within_noise");
    assert!(run_markdown(&f).contains("### No straggler"));
}

/// Rank 3 is last at every collective, by 20 µs on 10 ms steps: it costs each other rank
/// 20 µs per step, below the 1 % (100 µs) noise floor.
#[test]
fn a_consistent_but_negligible_lateness_is_within_noise() {
    const N: i64 = 4;
    let all: Vec<Analysis> = (0..N)
        .map(|r| {
            let arrive = move |_k: i64| if r == 3 { 4_020 } else { 4_000 };
            rank(r, N, 5, 10_000, 5_000, 0, &arrive)
        })
        .collect();
    let f = figures(&all);
    let Some(NoStraggler::WithinNoise {
        rank,
        share,
        excess_ns,
        noise_ns,
        ..
    }) = f.straggler.none()
    else {
        panic!("expected no straggler, got {:?}", f.straggler)
    };
    assert_eq!((*rank, *share), (3, 1.0));
    assert_eq!(*excess_ns, 20_000.0);
    assert_eq!(*noise_ns, 100_000.0);
}

/// No collective at all: the slowest mean step names the straggler when it exceeds the median
/// by more than the noise, and nobody when the steps are equal to the noise.
#[test]
fn without_collectives_the_slowest_step_beyond_noise_is_the_straggler() {
    let run = |steps: [i64; 3]| -> RunFigures {
        let all: Vec<Analysis> = steps
            .iter()
            .enumerate()
            .map(|(r, &us)| {
                let ev: Vec<String> = (0..4)
                    .map(|k| format!(r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{k}","pid":1,"tid":1,"ts":{},"dur":{us}}}"#, k * us))
                    .collect();
                let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
                let Ok(Loaded::Trace(t)) = load_bytes("r.json", json.as_bytes()) else { panic!() };
                Analysis::of(&format!("rank{r}.json"), &t)
            })
            .collect();
        figures(&all)
    };
    let f = run([1_000, 1_000, 1_300]);
    let s = f.straggler.straggler().expect("rank 2 is slow");
    assert_eq!((s.rank, s.method), (2, StragglerMethod::StepTime));
    assert_eq!(s.vs_median, 1.3);
    assert_eq!(kind(&s.reasons[0]), "slowest_step");
    let f = run([1_000, 1_002, 1_005]);
    assert!(
        matches!(
            f.straggler.none(),
            Some(NoStraggler::WithinNoise {
                method: StragglerMethod::StepTime,
                rank: 2,
                ..
            })
        ),
        "{:?}",
        f.straggler
    );
}
