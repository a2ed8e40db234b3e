//! Steps read from a training loop's own annotation (issue 23.10: a CPU trace annotated with
//! `train_step_N` said it had no steps). One definition (`model::steps`, docs/definitions.md
//! "Steps"): `ProfilerStep#N` when the trace has any, else a numbered loop annotation such as
//! `train_step_N`. Hand-built traces whose steps are known by construction, and the corpus trace
//! torch recorded with `record_function(f"train_step_{i}")` around each step, checked against its
//! own events read here with serde_json.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use tracelight_core::analysis::scope::{step_numbers, ScopeSpec};
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::steps::StepRule;
use tracelight_core::model::Trace;
use tracelight_core::report::json::Analysis;
use tracelight_core::view::flame::{Flame, Options, Scope};
use tracelight_core::view::steps::step_marks;

fn load(name: &str, bytes: &[u8]) -> Box<Trace> {
    match load_bytes(name, bytes) {
        Ok(Loaded::Trace(t)) => t,
        Ok(other) => panic!("{name}: not a trace: {:?}", other.format()),
        Err(e) => panic!("{name}: {e}"),
    }
}

fn x(cat: &str, name: &str, ts: f64, dur: f64) -> Value {
    json!({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur})
}

/// A CPU-only loop of four steps annotated `{step(k)}`, of 400, 100, 100, 100 µs (a slow first
/// step), each with one `aten::mm` of 30 µs and one `aten::add` of 10 µs; `outer` wraps each step
/// in a `ProfilerStep#k` of the same window.
fn trace(step: impl Fn(usize) -> String, outer: bool) -> Box<Trace> {
    let durs = [400.0, 100.0, 100.0, 100.0];
    let mut v = Vec::new();
    let mut t0 = 1000.0;
    for (k, d) in durs.iter().enumerate() {
        if outer {
            v.push(x("user_annotation", &format!("ProfilerStep#{k}"), t0, *d));
        }
        v.push(x("user_annotation", &step(k), t0, *d));
        v.push(x("cpu_op", "aten::mm", t0 + 5.0, 30.0));
        v.push(x("cpu_op", "aten::add", t0 + 50.0, 10.0));
        t0 += d;
    }
    load(
        "loop.json",
        json!({"traceEvents": v}).to_string().as_bytes(),
    )
}

#[test]
fn a_train_step_loop_has_its_steps_everywhere_steps_are_read() {
    let t = trace(|k| format!("train_step_{k}"), false);
    assert_eq!(t.step_rule(), &StepRule::User("train_step"));
    let a = Analysis::of("loop.json", &t);
    // The step table: four steps, the constructed windows.
    let names: Vec<&str> = a.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "train_step_0",
            "train_step_1",
            "train_step_2",
            "train_step_3"
        ]
    );
    let durs: Vec<i64> = a.steps.iter().map(|s| s.dur_ns).collect();
    assert_eq!(durs, [400_000, 100_000, 100_000, 100_000]);
    // Each step's breakdown sums to it: 40 µs of CPU ops, the rest other.
    let cpu = tracelight_core::analysis::steps::CATEGORIES
        .iter()
        .position(|c| *c == "cpu_exec")
        .unwrap();
    for s in &a.steps {
        assert_eq!(s.parts_ns.iter().sum::<i64>(), s.dur_ns);
        assert_eq!(s.parts_ns[cpu], 40_000, "{}", s.name);
    }
    // The GPU summary's window is the steps' (first start → last end).
    assert!(a.gpu.window_from_steps);
    assert_eq!(
        (a.gpu.window_start_ns, a.gpu.window_end_ns),
        (1_000_000, 1_700_000)
    );
    // Per step: the four steps, aten::mm 30 µs in each.
    assert_eq!(a.per_step.steps.len(), 4);
    assert_eq!(
        a.per_step.op("aten::mm").unwrap().per_step_ns,
        vec![30_000; 4]
    );
    // The operator table lists each as torch's key_averages does (a row per name: torch merges
    // only ProfilerStep#N), so it still matches torch row for row (tests/ops_vs_torch.rs).
    let step_rows: Vec<(&str, u64)> = a
        .ops
        .rows
        .iter()
        .filter(|r| r.name.starts_with("train_step"))
        .map(|r| (r.name.as_str(), r.calls))
        .collect();
    assert_eq!(
        step_rows,
        [
            ("train_step_0", 1),
            ("train_step_1", 1),
            ("train_step_2", 1),
            ("train_step_3", 1)
        ]
    );
    // Scope step:2 is train_step_2's window.
    let sc = ScopeSpec::Step(2).resolve(&t).unwrap().unwrap();
    assert_eq!(sc.windows[0].label, "train_step_2");
    assert_eq!(
        (sc.windows[0].start_ns, sc.windows[0].end_ns),
        (1_500_000, 1_600_000)
    );
    assert_eq!(step_numbers(&t), [0, 1, 2, 3]);
    assert!(ScopeSpec::Step(9)
        .resolve(&t)
        .unwrap_err()
        .contains("no train_step_9"));
    // The time ruler's marks and the flame graph's merged frame.
    assert_eq!(step_marks(&t).len(), 4);
    let f = Flame::build(&t, &Scope::default(), Options::default());
    let labels: Vec<&str> = (0..f.len() as u32).map(|n| f.label(&t, n)).collect();
    assert!(labels.contains(&"train_step*"), "{labels:?}");
    assert!(
        !labels.iter().any(|l| l.starts_with("train_step_")),
        "{labels:?}"
    );
}

#[test]
fn other_spellings_are_steps_and_profiler_steps_win_over_them() {
    for (name, prefix) in [
        (
            &(|k: usize| format!("step {k}")) as &dyn Fn(usize) -> String,
            "step",
        ),
        (&|k: usize| format!("Iteration#{k}"), "iteration"),
        (&|k: usize| format!("training_step-{k}"), "training_step"),
    ] {
        let t = trace(name, false);
        assert_eq!(t.step_rule(), &StepRule::User(prefix));
        assert_eq!(Analysis::of("loop.json", &t).steps.len(), 4, "{prefix}");
    }
    // With ProfilerStep#N present, they are the steps; train_step_N is an annotation like any.
    let t = trace(|k| format!("train_step_{k}"), true);
    assert_eq!(t.step_rule(), &StepRule::Profiler);
    let a = Analysis::of("loop.json", &t);
    assert!(a.steps.iter().all(|s| s.name.starts_with("ProfilerStep#")));
    assert_eq!(a.steps.len(), 4);
    assert!(a.ops.rows.iter().any(|r| r.name == "ProfilerStep*"));
    assert_eq!(
        a.ops
            .rows
            .iter()
            .filter(|r| r.name.starts_with("train_step_"))
            .count(),
        4,
        "each train_step_N its own row, as torch lists it"
    );
    // A loop annotation with no number, or another op's numbered name, is no step.
    let t = trace(|_| "train_step".to_owned(), false);
    assert_eq!(t.step_rule(), &StepRule::None);
    assert!(Analysis::of("loop.json", &t).steps.is_empty());
}

/// torch 2.x recorded `mlp_wide_flops_et.json` with `record_function(f"train_step_{i}")` and no
/// `profiler.step()`: its steps are the two annotations, as the file's own events give them.
#[test]
fn the_corpus_train_step_trace_has_its_two_steps() {
    let Some(bytes) = tracelight_testkit::bytes("generated/mlp_wide_flops_et.json") else {
        return;
    };
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let mut want: Vec<(String, i64)> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "user_annotation")
        .filter_map(|e| {
            let n = e["name"].as_str()?;
            n.starts_with("train_step_").then(|| {
                (
                    n.to_owned(),
                    (e["dur"].as_f64().unwrap() * 1e3).round() as i64,
                )
            })
        })
        .collect();
    want.sort();
    assert_eq!(want.len(), 2);
    assert!(!String::from_utf8_lossy(&bytes).contains("ProfilerStep#"));
    let t = load("mlp_wide_flops_et.json", &bytes);
    let a = Analysis::of("mlp_wide_flops_et.json", &t);
    let got: Vec<(String, i64)> = a.steps.iter().map(|s| (s.name.clone(), s.dur_ns)).collect();
    assert_eq!(got, want);
}
