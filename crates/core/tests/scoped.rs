//! Scoped tables (`Analysis::scoped`, `analysis::scope`) on a hand-built two-step trace whose
//! answers are known by construction: a step's tables equal the whole-trace tables of a file
//! holding only that step's events (cut by hand); a drawn window counts host events by their
//! start, whole, and kernels by their launch (a kernel running inside but launched before is
//! out, one launched inside and running after is in), while utilization is the GPU time inside
//! the window; an annotation's occurrences, all or one; the peak memory a window opens with.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use tracelight_core::analysis::scope::{annotation_names, ScopeSpec, TimeScope};
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::Trace;
use tracelight_core::report::json::Analysis;

/// One `ProfilerStep#k` of 1000 µs starting at `base` µs: a forward annotation with a module
/// frame, `aten::linear` > `aten::addmm` > launch of `gemm` (`gemm_us` long, at base+200), an
/// `aten::relu` launching `relu_k`; a backward annotation with the `AddmmBackward0` node (its
/// `evaluate_function` wrapper) launching `gemm_b`; an optimizer annotation whose `aten::copy_`
/// launches `late_k` at base+950, which runs at base+1010, in the next step's time. Memory:
/// 1000 B allocated at base+35, +500 B at base+480, all freed at base+700.
fn step(k: i64, gemm_us: i64) -> Vec<String> {
    let b = (k - 1) * 1000;
    let seq = 10 * k;
    let c = 100 * k;
    let x = |cat: &str, name: &str, ts: i64, dur: i64, args: &str| {
        format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":1,"tid":1,"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
        )
    };
    let kern = |name: &str, ts: i64, dur: i64, corr: i64| {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#
        )
    };
    let mem = |ts: i64, bytes: i64, total: i64| {
        format!(
            r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{ts},"args":{{"Device Type":1,"Device Id":0,"Addr":{},"Bytes":{bytes},"Total Allocated":{total},"Total Reserved":4096}}}}"#,
            7000 + ts
        )
    };
    let launch = |ts: i64, corr: i64| {
        x(
            "cuda_runtime",
            "cudaLaunchKernel",
            ts,
            5,
            &format!(r#""correlation":{corr}"#),
        )
    };
    let fwd = |s: i64| format!(r#""Sequence number":{s},"Fwd thread id":0"#);
    let bwd = |s: i64| format!(r#""Sequence number":{s},"Fwd thread id":1"#);
    vec![
        x("user_annotation", &format!("ProfilerStep#{k}"), b, 1000, ""),
        x("user_annotation", "## forward ##", b + 10, 390, ""),
        x("python_function", "nn.Module: Net_0", b + 15, 375, ""),
        x("cpu_op", "aten::linear", b + 20, 100, &fwd(seq + 5)),
        x("cpu_op", "aten::addmm", b + 30, 80, &fwd(seq + 6)),
        launch(b + 40, c + 1),
        kern("gemm", b + 200, gemm_us, c + 1),
        x("cpu_op", "aten::relu", b + 150, 50, &fwd(seq + 7)),
        launch(b + 160, c + 2),
        kern("relu_k", b + 300, 20, c + 2),
        x("user_annotation", "## backward ##", b + 450, 450, ""),
        x(
            "cpu_op",
            "autograd::engine::evaluate_function: AddmmBackward0",
            b + 460,
            140,
            &bwd(seq + 6),
        ),
        x("cpu_op", "AddmmBackward0", b + 462, 136, &bwd(seq + 6)),
        launch(b + 470, c + 3),
        kern("gemm_b", b + 600, 100, c + 3),
        x("user_annotation", "## optimizer ##", b + 920, 75, ""),
        x("cpu_op", "aten::copy_", b + 940, 50, ""),
        launch(b + 950, c + 4),
        kern("late_k", b + 1010, 50, c + 4),
        mem(b + 35, 1000, 1000),
        mem(b + 480, 500, 1500),
        mem(b + 700, -1500, 0),
    ]
}

fn load(events: &[String]) -> Trace {
    let text = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
    match load_bytes("scoped.json", text.as_bytes()) {
        Ok(Loaded::Trace(t)) => *t,
        _ => panic!("the hand-built trace did not load"),
    }
}

fn whole() -> Trace {
    let mut ev = step(1, 100);
    ev.extend(step(2, 60));
    load(&ev)
}

fn scope(t: &Trace, spec: &str) -> TimeScope {
    match ScopeSpec::parse(spec).map(|s| s.resolve(t)) {
        Ok(Ok(Some(s))) => s,
        other => panic!("{spec}: {other:?}"),
    }
}

/// The rows of a table as JSON values (slice indices, which differ between two files, are not
/// serialized).
fn rows<T: serde::Serialize>(v: &T) -> serde_json::Value {
    let mut v = serde_json::to_value(v).unwrap_or_default();
    if let Some(a) = v.as_array_mut() {
        for x in a.iter_mut().filter_map(|x| x.as_object_mut()) {
            x.remove("peak_op_slice");
        }
    }
    v
}

#[test]
fn a_step_scope_equals_the_trace_cut_by_hand_to_that_step() {
    let t = whole();
    let a = Analysis::of("whole", &t);
    for (k, gemm) in [(1, 100), (2, 60)] {
        let cut = load(&step(k, gemm));
        let want = Analysis::of("cut", &cut);
        let got = a.scoped(&t, &scope(&t, &format!("step:{k}")));
        assert_eq!(rows(&got.ops.rows), rows(&want.ops.rows), "step {k}: ops");
        assert_eq!(
            (got.ops.self_cpu_total_ns, got.ops.self_device_total_ns),
            (want.ops.self_cpu_total_ns, want.ops.self_device_total_ns)
        );
        assert_eq!(rows(&got.kernels), rows(&want.kernels), "step {k}: kernels");
        assert_eq!(rows(&got.categories), rows(&want.categories));
        assert_eq!(rows(&got.modules), rows(&want.modules), "step {k}: modules");
        assert_eq!(rows(&got.sources), rows(&want.sources));
        assert_eq!(rows(&got.backward), rows(&want.backward), "step {k}: pairs");
        assert_eq!(rows(&got.health), rows(&want.health));
        assert_eq!(rows(&got.memory), rows(&want.memory), "step {k}: memory");
        // Time figures are about the window: step 1's holds only its own work, step 2's also
        // step 1's late_k (checked below), which the cut file does not have.
        if k == 1 {
            let parts = |a: &Analysis| (a.steps[0].name.clone(), a.steps[0].parts_ns);
            assert_eq!(parts(&got), parts(&want), "step {k}: breakdown");
            assert_eq!(got.gpu.utilization, want.gpu.utilization);
            assert_eq!(got.gpu.busy_ns, want.gpu.busy_ns);
        }
    }
    // And the figures themselves, by construction: step 1's kernels are gemm 100, relu_k 20,
    // gemm_b 100 inside the step and late_k 50, launched in step 1 but running in step 2.
    let s1 = a.scoped(&t, &scope(&t, "step:1"));
    let k = |a: &Analysis, n: &str| {
        a.kernels
            .rows
            .iter()
            .find(|r| r.name == n)
            .map(|r| (r.calls, r.total_ns))
    };
    assert_eq!(k(&s1, "gemm"), Some((1, 100_000)));
    assert_eq!(k(&s1, "late_k"), Some((1, 50_000)));
    assert_eq!(s1.kernels.total_ns, 270_000);
    // Utilization counts what ran inside step 1's window: 100 + 20 + 100 of 1000 µs (late_k
    // runs in step 2's window, and counts there).
    assert_eq!(s1.gpu.busy_ns, 220_000);
    assert_eq!(s1.gpu.utilization, Some(0.22));
    let s2 = a.scoped(&t, &scope(&t, "step:2"));
    assert_eq!(s2.gpu.busy_ns, 60_000 + 20_000 + 100_000 + 50_000);
    assert_eq!(s2.steps[0].parts_ns[0], 230_000);
    assert_eq!(k(&s2, "gemm"), Some((1, 60_000)));
    // The two steps partition the trace's kernels.
    assert_eq!(
        s1.kernels.total_ns + s2.kernels.total_ns,
        a.kernels.total_ns
    );
    // The scoped op table of a step is the per-step distribution's column for that step.
    for r in s2
        .ops
        .rows
        .iter()
        .filter(|r| !r.on_device && !r.name.starts_with("Profiler"))
    {
        let d = a
            .per_step
            .op(&r.name)
            .unwrap_or_else(|| panic!("{}", r.name));
        assert_eq!(d.per_step_ns[1], r.cpu_total_ns, "{}", r.name);
    }
}

#[test]
fn a_drawn_window_counts_ops_whole_by_start_and_kernels_by_launch() {
    let t = whole();
    let a = Analysis::of("whole", &t);
    // [100, 460) µs: aten::linear and aten::addmm (started at 20 and 30) are out; aten::relu
    // (150) is in; the backward annotation starts at 450 and counts whole, 450 µs, though its
    // node starts at 460, outside.
    let w = a.scoped(&t, &scope(&t, "window:100000-460000"));
    let op = |n: &str| w.ops.rows.iter().find(|r| r.name == n && !r.on_device);
    let names: Vec<&str> = w.ops.rows.iter().map(|r| r.name.as_str()).collect();
    assert!(
        op("aten::linear").is_none() && op("aten::addmm").is_none(),
        "{names:?}"
    );
    let relu = op("aten::relu").expect("relu");
    assert_eq!(
        (
            relu.calls,
            relu.cpu_total_ns,
            relu.self_cpu_ns,
            relu.device_total_ns
        ),
        (1, 50_000, 45_000, 20_000)
    );
    let bw = op("## backward ##").expect("backward annotation");
    // Whole: its full duration, self time net of its node (which is outside the window), and
    // the device time of all it launched, gemm_b included though launched after the edge.
    assert_eq!(
        (bw.cpu_total_ns, bw.self_cpu_ns, bw.device_total_ns),
        (450_000, 310_000, 100_000)
    );
    assert!(op("autograd::engine::evaluate_function: AddmmBackward0").is_none());
    assert_eq!(op("cudaLaunchKernel").map(|r| r.calls), Some(1));
    assert_eq!(names.len(), 4, "{names:?}");
    // Kernels: relu_k (launched at 160) only. gemm runs at [200, 300), inside the window, but
    // was launched at 40; gemm_b was launched at 470.
    let kernels: Vec<(&str, u64)> = w
        .kernels
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.calls))
        .collect();
    assert_eq!(kernels, [("relu_k", 1)]);
    // Utilization is about the window's time: gemm and relu_k ran 120 of its 360 µs.
    assert_eq!((w.gpu.window_ns, w.gpu.busy_ns), (360_000, 120_000));
    assert_eq!(w.gpu.utilization, Some(1.0 / 3.0));
    // Memory: no event inside; the window opens with the 1000 B allocated at 35 µs.
    assert_eq!(w.memory.len(), 1);
    assert_eq!(
        (w.memory[0].events, w.memory[0].peak_allocated_bytes),
        (0, 1000)
    );
    // Modules: Net_0's frame started at 15, out; its forward kernels too.
    assert!(w.modules.rows.iter().all(|r| r.calls == 0));
    // One step-breakdown row over the window, its parts summing to it.
    assert_eq!(w.steps.len(), 1);
    assert_eq!(w.steps[0].parts_ns.iter().sum::<i64>(), 360_000);
}

#[test]
fn an_annotation_scope_takes_every_occurrence_or_one() {
    let t = whole();
    let a = Analysis::of("whole", &t);
    let all = a.scoped(&t, &scope(&t, "annotation:## backward ##"));
    let node = |a: &Analysis| {
        a.ops
            .rows
            .iter()
            .find(|r| r.name == "autograd::engine::evaluate_function: AddmmBackward0")
            .map(|r| (r.calls, r.cpu_total_ns, r.device_total_ns))
    };
    assert_eq!(node(&all), Some((2, 280_000, 200_000)));
    let names: Vec<&str> = all.kernels.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["gemm_b"]);
    assert_eq!(all.gpu.window_ns, 900_000);
    // One breakdown row per occurrence. In [450, 900): gemm_b 100 µs of kernel, the launch 5 µs
    // of runtime, the node's other 135 µs of CPU exec; the annotation itself is left out (as
    // the step annotations are), so the remaining 210 µs are "other".
    let labels: Vec<&str> = all.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(labels, ["## backward ## #1", "## backward ## #2"]);
    assert_eq!(
        all.steps[0].parts_ns,
        [100_000, 0, 0, 0, 5_000, 0, 135_000, 210_000]
    );
    assert_eq!(all.step_time_ns(), 450_000);
    let second = a.scoped(&t, &scope(&t, "annotation:## backward ##:2"));
    assert_eq!(node(&second), Some((1, 140_000, 100_000)));
    // The forward ↔ backward pairs: in the backward scope the node's side counts, the forward
    // op's (which ran in the forward annotation) does not.
    let pair = all
        .backward
        .iter()
        .find(|r| r.backward == "AddmmBackward0")
        .expect("pair");
    assert_eq!(
        (
            pair.pairs,
            pair.backward_host_ns,
            pair.backward_gpu_ns,
            pair.forward_host_ns
        ),
        (2, 280_000, 200_000, 0)
    );
    // Modules: Net_0 has no call in the backward, but its backward GPU time is there.
    let net = &all.modules.rows[0];
    assert_eq!(
        (net.path.as_str(), net.calls, net.backward_gpu_ns),
        ("Net_0", 0, 200_000)
    );
    // What a picker offers: the annotations but the steps, most time first.
    let offered: Vec<(String, u32)> = annotation_names(&t)
        .into_iter()
        .map(|(n, c, _)| (n, c))
        .collect();
    assert_eq!(
        offered,
        [
            ("## backward ##".to_owned(), 2),
            ("## forward ##".to_owned(), 2),
            ("## optimizer ##".to_owned(), 2)
        ]
    );
}

#[test]
fn a_scope_that_the_trace_lacks_says_what_it_has() {
    let t = whole();
    let err = |s: &str| match ScopeSpec::parse(s).map(|x| x.resolve(&t)) {
        Ok(Err(e)) => e,
        other => panic!("{s}: {other:?}"),
    };
    assert_eq!(
        err("step:7"),
        "no ProfilerStep#7 in this trace (it has 2 steps, #1 to #2)"
    );
    assert_eq!(
        err("annotation:## backward ##:3"),
        "\"## backward ##\" occurs 2 times, not 3"
    );
    assert!(err("annotation:decode").contains("no user_annotation named \"decode\""));
}
