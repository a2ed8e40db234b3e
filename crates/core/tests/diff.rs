//! The A/B diff (`report::diff`) on hand-built pairs whose answer is known by construction, and on
//! the HTA `trace_diff` pair, checked against sums of the raw events read with serde_json.

#![allow(clippy::unwrap_used)]

use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::Trace;
use tracelight_core::report::diff::rows::{DiffRow, MatchedBy, Status};
use tracelight_core::report::diff::{side::Side, Diff, Measure};
use tracelight_core::report::json::Analysis;

fn x(cat: &str, name: &str, tid: u32, ts: f64, dur: f64, args: &str) -> String {
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":1,"tid":{tid},"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
    )
}

/// An op at `ts` holding a launch whose kernel runs `kdur` µs on stream 7.
fn op_with_kernel(v: &mut Vec<String>, op: &str, kernel: &str, ts: f64, kdur: f64, corr: i64) {
    v.push(x("cpu_op", op, 1, ts, 8.0, ""));
    v.push(x(
        "cuda_runtime",
        "cudaLaunchKernel",
        1,
        ts + 1.0,
        5.0,
        &format!(r#""correlation":{corr}"#),
    ));
    v.push(x(
        "kernel",
        kernel,
        7,
        ts + 10.0,
        kdur,
        &format!(r#""device":0,"stream":7,"correlation":{corr}"#),
    ));
}

fn step(v: &mut Vec<String>, k: usize, ts: f64, dur: f64) {
    v.push(x(
        "user_annotation",
        &format!("ProfilerStep#{k}"),
        1,
        ts,
        dur,
        "",
    ));
}

fn load(events: &[String]) -> Box<Trace> {
    let json = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
    match load_bytes("t.json", json.as_bytes()).unwrap() {
        Loaded::Trace(t) => t,
        other => panic!("expected a trace, got {:?}", other.format()),
    }
}

fn side(label: &str, events: &[String]) -> Side {
    let t = load(events);
    let a = Analysis::of(label, &t);
    Side::of(label, &[(&t, &a)], false)
}

fn row<'a>(rows: &'a [DiffRow], name: &str) -> &'a DiffRow {
    rows.iter()
        .find(|r| r.name == name || r.b_name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no row {name}: {rows:#?}"))
}

/// `steps` steps of 1000 µs, each running `aten::mm` (gemm kernel of `gemm_us`) and `aten::add`.
fn training(steps: usize, gemm_us: f64, extra: Option<(&str, &str, f64)>) -> Vec<String> {
    let mut v = Vec::new();
    for k in 0..steps {
        let t0 = k as f64 * 1000.0;
        step(&mut v, k + 1, t0, 1000.0);
        let c = (k * 10) as i64;
        op_with_kernel(
            &mut v,
            "aten::mm",
            "ampere_sgemm_128x64_nn",
            t0 + 10.0,
            gemm_us,
            c,
        );
        op_with_kernel(
            &mut v,
            "aten::add",
            "elementwise_kernel",
            t0 + 400.0,
            50.0,
            c + 1,
        );
        if let Some((op, kernel, us)) = extra {
            op_with_kernel(&mut v, op, kernel, t0 + 600.0, us, c + 2);
        }
    }
    v
}

#[test]
fn a_kernel_made_twice_as_long_shows_its_exact_delta_and_share() {
    let d = Diff::of(
        side("a", &training(3, 100.0, None)),
        side("b", &training(3, 200.0, None)),
    );
    let k = row(&d.kernels, "ampere_sgemm_128x64_nn");
    assert_eq!(k.status, Status::Changed);
    assert_eq!(k.matched_by, Some(MatchedBy::Name));
    assert_eq!((k.a_calls, k.b_calls), (3, 3));
    assert_eq!((k.a_ns, k.b_ns), (300_000, 600_000));
    assert_eq!(k.delta_step_ns, 100_000.0);
    assert_eq!(
        d.kernels[0].name, "ampere_sgemm_128x64_nn",
        "sorted by impact"
    );
    assert_eq!(row(&d.kernels, "elementwise_kernel").status, Status::Same);
    // Device time of the op that launched it moves by the same amount.
    assert_eq!(d.measure, Measure::Device);
    assert_eq!(row(&d.ops, "aten::mm").delta_step_ns, 100_000.0);
    // Steps are 1000 µs on both sides: no step change, so no share.
    assert_eq!(d.step_delta_ns, 0.0);
    assert_eq!(k.share, None);
    // The gemm share of the kernel categories: +100 µs per step.
    let gemm = d.fine_categories.iter().find(|l| l.name == "gemm").unwrap();
    assert_eq!(gemm.delta(), Some(100_000.0));
}

#[test]
fn an_added_op_is_marked_added_with_its_time_per_step() {
    let d = Diff::of(
        side("a", &training(2, 100.0, None)),
        side(
            "b",
            &training(2, 100.0, Some(("aten::relu", "relu_kernel", 30.0))),
        ),
    );
    let r = row(&d.ops, "aten::relu");
    assert_eq!(r.status, Status::Added);
    assert_eq!((r.a_calls, r.b_calls), (0, 2));
    assert_eq!(r.b_step_ns, 30_000.0);
    assert_eq!(r.delta_step_ns, 30_000.0);
    let k = row(&d.kernels, "relu_kernel");
    assert_eq!(k.status, Status::Added);
    assert_eq!(k.via.as_deref(), Some("ProfilerStep*"));
    // And removed the other way round.
    let d = Diff::of(
        side(
            "a",
            &training(2, 100.0, Some(("aten::relu", "relu_kernel", 30.0))),
        ),
        side("b", &training(2, 100.0, None)),
    );
    assert_eq!(row(&d.ops, "aten::relu").status, Status::Removed);
}

/// `aten::_convolution` calling the backend's op, which launches the backend's kernel.
fn convolution(backend: &str, kernel: &str, kdur: f64) -> Vec<String> {
    let mut v = Vec::new();
    for k in 0..2 {
        let t0 = k as f64 * 1000.0;
        step(&mut v, k + 1, t0, 1000.0);
        v.push(x("cpu_op", "aten::conv2d", 1, t0 + 10.0, 40.0, ""));
        v.push(x("cpu_op", "aten::_convolution", 1, t0 + 11.0, 30.0, ""));
        op_with_kernel(&mut v, backend, kernel, t0 + 12.0, kdur, k as i64);
    }
    v
}

#[test]
fn a_backend_rename_under_the_same_parent_is_matched_not_added_and_removed() {
    let d = Diff::of(
        side(
            "a",
            &convolution("aten::cudnn_convolution", "cudnn_fprop_kernel", 100.0),
        ),
        side(
            "b",
            &convolution("aten::miopen_convolution", "MIOpenConvFwd", 70.0),
        ),
    );
    let op = row(&d.ops, "aten::cudnn_convolution");
    assert_eq!(op.b_name.as_deref(), Some("aten::miopen_convolution"));
    assert_eq!(op.matched_by, Some(MatchedBy::Parent));
    assert_eq!(op.via.as_deref(), Some("aten::_convolution"));
    assert_eq!(op.status, Status::Changed);
    assert_eq!(op.delta_step_ns, -30_000.0);
    let k = row(&d.kernels, "cudnn_fprop_kernel");
    assert_eq!(k.b_name.as_deref(), Some("MIOpenConvFwd"));
    assert_eq!(k.via.as_deref(), Some("aten::_convolution"));
    assert_eq!((k.a_calls, k.b_calls), (2, 2));
    let one_sided = d
        .ops
        .iter()
        .chain(&d.kernels)
        .filter(|r| matches!(r.status, Status::Added | Status::Removed))
        .count();
    assert_eq!(one_sided, 0, "{:#?}", d.ops);
}

#[test]
fn eager_ops_against_one_compiled_op_merge_into_one_row_under_their_parent() {
    let build = |ops: &[(&str, &str)]| {
        let mut v = Vec::new();
        step(&mut v, 1, 0.0, 1000.0);
        v.push(x("user_annotation", "nn.Module: MLP", 1, 5.0, 500.0, ""));
        for (k, (op, kernel)) in ops.iter().enumerate() {
            op_with_kernel(&mut v, op, kernel, 10.0 + 50.0 * k as f64, 20.0, k as i64);
        }
        v
    };
    let d = Diff::of(
        side(
            "a",
            &build(&[("aten::gelu", "gelu_kernel"), ("aten::mul", "mul_kernel")]),
        ),
        side(
            "b",
            &build(&[("CompiledFunction", "triton_poi_fused_gelu_mul_0")]),
        ),
    );
    let r = row(&d.ops, "aten::gelu");
    assert_eq!(r.a_members, vec!["aten::gelu", "aten::mul"]);
    assert_eq!(r.b_name.as_deref(), Some("CompiledFunction"));
    assert_eq!(r.via.as_deref(), Some("nn.Module: MLP"));
    assert_eq!((r.a_calls, r.b_calls), (2, 1));
    assert_eq!(r.delta_step_ns, -20_000.0);
    let k = row(&d.kernels, "gelu_kernel");
    assert_eq!(k.b_name.as_deref(), Some("triton_poi_fused_gelu_mul_0"));
}

#[test]
fn five_steps_against_six_compare_means_with_their_spread() {
    // A: 5 steps of 900, 1000, 1100, 1000, 1000 µs; B: 6 steps of 800 µs. Same kernel per step.
    let mut a = Vec::new();
    let mut t0 = 0.0;
    for (k, dur) in [900.0, 1000.0, 1100.0, 1000.0, 1000.0].iter().enumerate() {
        step(&mut a, k + 1, t0, *dur);
        op_with_kernel(&mut a, "aten::mm", "sgemm", t0 + 10.0, 100.0, k as i64);
        t0 += dur;
    }
    let mut b = Vec::new();
    for k in 0..6 {
        let t0 = k as f64 * 800.0;
        step(&mut b, k + 1, t0, 800.0);
        op_with_kernel(&mut b, "aten::mm", "sgemm", t0 + 10.0, 100.0, k as i64);
    }
    let d = Diff::of(side("a", &a), side("b", &b));
    assert_eq!(d.a.step_ns.n, 5);
    assert_eq!(d.a.step_ns.mean, 1_000_000.0);
    assert_eq!((d.a.step_ns.min, d.a.step_ns.max), (900_000.0, 1_100_000.0));
    // Sample stdev of (−100, 0, 100, 0, 0) µs = sqrt(20000 / 4) µs.
    assert!((d.a.step_ns.stdev - 5000f64.sqrt() * 1e3).abs() < 1e-6);
    assert_eq!(d.step_delta_ns, -200_000.0);
    assert_eq!(d.step_delta_pct, Some(-20.0));
    let k = row(&d.kernels, "sgemm");
    assert_eq!((k.a_ns, k.b_ns), (500_000, 600_000));
    assert_eq!(k.delta_step_ns, 0.0);
    assert_eq!(k.status, Status::Same);
    assert!(
        d.verdict.starts_with("B is 20.0% faster per step"),
        "{}",
        d.verdict
    );
    // Breakdown parts per step sum to the mean step on each side.
    let sum_a: f64 = d.breakdown.iter().map(|l| l.a.unwrap()).sum();
    assert!((sum_a - 1_000_000.0).abs() < 1e-6);
}

#[test]
fn the_verdict_names_the_kernel_category_that_moved() {
    // B: gemm 100 → 300 µs per step, steps 1000 → 1200 µs.
    let mut b = Vec::new();
    for k in 0..2 {
        let t0 = k as f64 * 1200.0;
        step(&mut b, k + 1, t0, 1200.0);
        op_with_kernel(
            &mut b,
            "aten::mm",
            "ampere_sgemm_128x64_nn",
            t0 + 10.0,
            300.0,
            k as i64 * 10,
        );
        op_with_kernel(
            &mut b,
            "aten::add",
            "elementwise_kernel",
            t0 + 400.0,
            50.0,
            k as i64 * 10 + 1,
        );
    }
    let d = Diff::of(side("a", &training(2, 100.0, None)), side("b", &b));
    assert_eq!(d.step_delta_ns, 200_000.0);
    assert!(
        d.verdict.starts_with(
            "B is 20.0% slower per step (1.00 ms → 1.20 ms): +200.0 µs in gemm kernels"
        ),
        "{}",
        d.verdict
    );
    let k = row(&d.kernels, "ampere_sgemm_128x64_nn");
    assert_eq!(k.share, Some(1.0));
}

// ---- the HTA trace_diff pair -------------------------------------------------------------------

const A_FILE: &str = "real/hta/trace_diff/control_a100_rank3of8.json.gz";
const B_FILE: &str = "real/hta/trace_diff/test_v100_rank1of2.json.gz";

/// (step durations µs, GPU time µs per kernel/memcpy/memset name) from the raw events.
fn raw(path: &str) -> (Vec<f64>, std::collections::BTreeMap<String, (f64, u64)>) {
    use std::io::Read;
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    let mut steps = Vec::new();
    let mut gpu = std::collections::BTreeMap::new();
    for e in v["traceEvents"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap_or("");
        let dur = e["dur"].as_f64().unwrap_or(0.0);
        if e["ph"] != "X" {
            continue;
        }
        if name.starts_with("ProfilerStep#") {
            steps.push(dur);
        }
        if matches!(
            e["cat"].as_str(),
            Some("kernel" | "Kernel" | "gpu_memcpy" | "gpu_memset")
        ) {
            let x = gpu.entry(name.to_owned()).or_insert((0.0, 0));
            x.0 += dur;
            x.1 += 1;
        }
    }
    (steps, gpu)
}

#[test]
fn hta_trace_diff_pair_agrees_with_the_raw_events() {
    let (Some(pa), Some(pb)) = (
        tracelight_testkit::path(A_FILE),
        tracelight_testkit::path(B_FILE),
    ) else {
        return;
    };
    let (pa, pb) = (pa.to_string_lossy(), pb.to_string_lossy());
    let one = |p: &str| {
        let Loaded::Trace(t) = load_bytes(p, &std::fs::read(p).unwrap()).unwrap() else {
            panic!("not a trace")
        };
        let a = Analysis::of(p, &t);
        Side::of(p, &[(&t, &a)], false)
    };
    let d = Diff::of(one(&pa), one(&pb));
    let (sa, ka) = raw(&pa);
    let (sb, kb) = raw(&pb);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert_eq!((d.a.step_ns.n, d.b.step_ns.n), (sa.len(), sb.len()));
    assert!((d.a.step_ns.mean / 1e3 - mean(&sa)).abs() < 1e-3);
    assert!((d.step_delta_ns / 1e3 - (mean(&sb) - mean(&sa))).abs() < 1e-3);
    // Every raw kernel name lands in exactly one row per side, with its time and calls.
    for (raw_side, a_side) in [(&ka, true), (&kb, false)] {
        let mut seen = std::collections::BTreeMap::new();
        for r in &d.kernels {
            let names: Vec<&String> = if a_side {
                if r.a_members.is_empty() {
                    if r.status == Status::Added {
                        vec![]
                    } else {
                        vec![&r.name]
                    }
                } else {
                    r.a_members.iter().collect()
                }
            } else if r.b_members.is_empty() {
                match r.status {
                    Status::Removed => vec![],
                    _ => vec![r.b_name.as_ref().unwrap_or(&r.name)],
                }
            } else {
                r.b_members.iter().collect()
            };
            let (ns, calls) = if a_side {
                (r.a_ns, r.a_calls)
            } else {
                (r.b_ns, r.b_calls)
            };
            let want: (f64, u64) = names.iter().fold((0.0, 0), |acc, n| {
                let x = raw_side[n.as_str()];
                (acc.0 + x.0, acc.1 + x.1)
            });
            assert!(
                (ns as f64 / 1e3 - want.0).abs() < 0.01 * want.1 as f64 + 1e-6,
                "{r:?}"
            );
            assert_eq!(calls, want.1, "{r:?}");
            for n in names {
                assert!(seen.insert(n.clone(), ()).is_none(), "{n} in two rows");
            }
        }
        assert_eq!(seen.len(), raw_side.len());
    }
    // NCCL kernels both sides run keep their name; the embedding forward kernel whose template
    // argument differs (`2ul` on A, `5ul` on B) is matched through the op that launched it.
    let nccl = row(
        &d.kernels,
        "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)",
    );
    assert_eq!(nccl.matched_by, Some(MatchedBy::Name));
    let emb = d
        .kernels
        .iter()
        .find(|r| r.name.starts_with("void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 2ul>"))
        .unwrap();
    assert!(
        emb.b_name.as_deref().unwrap().contains("long, 5ul>"),
        "{emb:?}"
    );
    assert_eq!(emb.matched_by, Some(MatchedBy::Parent));
    assert_eq!(
        emb.via.as_deref(),
        Some("fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function")
    );
}

#[test]
fn grouped_by_input_shapes_the_same_op_with_new_shapes_is_matched_as_a_shape_change() {
    let build = |n: u32| {
        let mut v = Vec::new();
        step(&mut v, 1, 0.0, 1000.0);
        v.push(x(
            "cpu_op",
            "aten::mm",
            1,
            10.0,
            40.0,
            &format!(r#""Input Dims":[[8,16],[16,{n}]]"#),
        ));
        v
    };
    let shaped = |label: &str, n: u32| {
        let t = load(&build(n));
        let a = Analysis::of(label, &t);
        Side::of(label, &[(&t, &a)], true)
    };
    let d = Diff::of(shaped("a", 32), shaped("b", 64));
    let r = row(&d.ops, "aten::mm");
    assert_eq!(r.matched_by, Some(MatchedBy::Shapes));
    assert_eq!(r.shapes.as_deref(), Some("[[8, 16], [16, 32]]"));
    assert_eq!(r.b_shapes.as_deref(), Some("[[8, 16], [16, 64]]"));
    assert_eq!((r.a_calls, r.b_calls), (1, 1));
    // Without shapes the two are one row, matched by name.
    let d = Diff::of(side("a", &build(32)), side("b", &build(64)));
    assert_eq!(row(&d.ops, "aten::mm").matched_by, Some(MatchedBy::Name));
}
