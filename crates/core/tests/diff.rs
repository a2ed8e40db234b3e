//! The A/B diff (`report::diff`) on hand-built pairs whose answer is known by construction, and on
//! the HTA `trace_diff` pair, checked against sums of the raw events read with serde_json.

#![allow(clippy::unwrap_used)]

use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::model::Trace;
use tracelight_core::report::diff::rows::{Confidence, DiffRow, MatchOptions, MatchedBy, Status};
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
    assert_eq!(emb.matched_by, Some(MatchedBy::Sizes));
    assert_eq!(emb.confidence, Some(Confidence::High));
    assert_eq!(
        emb.via.as_deref(),
        Some("fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function")
    );
}

#[test]
fn hta_trace_diff_pair_renames_only_like_with_like_and_greys_rates_of_unequal_coverage() {
    // Issue 23: on this pair the page paired a `tanh` kernel with `volta_sgemm_128x64_tn`,
    // `aten::permute` with `CompiledFunction`, and showed a −95% "achieved TFLOPS" that came
    // from B (torch.compile, CUDA graphs, a V100 rank of 2) counting a fraction of A's FLOPs.
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
    // Setup read straight from the raw JSON.
    let meta = |p: &str| {
        use std::io::Read;
        let mut s = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap())
            .read_to_string(&mut s)
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        let names: Vec<&str> = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["name"].as_str())
            .collect();
        (
            v["deviceProperties"][0]["name"]
                .as_str()
                .unwrap()
                .to_owned(),
            v["distributedInfo"]["world_size"].as_i64().unwrap(),
            names.contains(&"CompiledFunction"),
            names.contains(&"cudaGraphLaunch"),
        )
    };
    let (ma, mb) = (meta(&pa), meta(&pb));
    assert_eq!((ma.2, ma.3, mb.2, mb.3), (false, false, true, true));
    assert_eq!(
        d.setup_notes,
        vec![
            format!("device: A {}, B {}", ma.0, mb.0),
            format!("world size: A {}, B {}", ma.1, mb.1),
            "B runs torch.compile (CompiledFunction), A eager".to_owned(),
            "B replays CUDA graphs (cudaGraphLaunch), A does not".to_owned(),
        ]
    );
    assert!(!d.rates.comparable, "{:?}", d.rates);
    assert!(d.rates.reasons[0]
        .starts_with("FLOPs were counted for 582 op calls per step in A, 234 in B"));
    // Every renamed kernel pair keeps matrix kernels with matrix kernels: the elementwise
    // `tanh` kernel is no longer read as a gemm.
    for r in d
        .kernels
        .iter()
        .filter(|r| matches!(r.matched_by, Some(MatchedBy::Parent | MatchedBy::Sizes)))
    {
        let a: Vec<&String> = if r.a_members.is_empty() {
            vec![&r.name]
        } else {
            r.a_members.iter().collect()
        };
        let b: Vec<&String> = if r.b_members.is_empty() {
            r.b_name.iter().collect()
        } else {
            r.b_members.iter().collect()
        };
        // BLAS kernels (gemm, gemv, cuBLAS, CUTLASS) against everything else.
        let gemm = |n: &&String| {
            let l = n.to_lowercase();
            ["gemm", "gemv", "cublas", "cutlass"]
                .iter()
                .any(|k| l.contains(k))
        };
        assert!(
            a.iter().all(gemm) == b.iter().all(gemm) && a.iter().any(gemm) == b.iter().any(gemm),
            "{r:#?}"
        );
        assert!(
            r.confidence.is_some() && r.family.is_some() || r.matched_by == Some(MatchedBy::Sizes)
        );
    }
    // No single eager op stands for B's compiled region.
    for r in d
        .ops
        .iter()
        .filter(|r| r.b_name.as_deref() == Some("CompiledFunction"))
    {
        assert!(r.a_members.len() > 1, "{r:#?}");
        assert!(
            r.how().starts_with("low: B's compiled region stands for"),
            "{}",
            r.how()
        );
    }
    // Off, nothing is renamed.
    let d = Diff::with(one(&pa), one(&pb), MatchOptions { renames: false });
    assert!(d
        .ops
        .iter()
        .chain(&d.kernels)
        .all(|r| !matches!(r.matched_by, Some(MatchedBy::Parent | MatchedBy::Sizes))));
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

// ---- renames pair like with like (issue 23, point 2) -------------------------------------------

/// Under one module annotation, A runs `a_op` launching `a_kernel`, B runs `b_op` launching
/// `b_kernel`: no op or kernel of either side has a same-named counterpart.
fn module_with(op: &str, kernel: &str) -> Vec<String> {
    let mut v = Vec::new();
    for k in 0..2 {
        let t0 = k as f64 * 1000.0;
        step(&mut v, k + 1, t0, 1000.0);
        v.push(x(
            "user_annotation",
            "nn.Module: Block",
            1,
            t0 + 5.0,
            500.0,
            "",
        ));
        op_with_kernel(&mut v, op, kernel, t0 + 10.0, 100.0, k as i64);
    }
    v
}

#[test]
fn an_elementwise_kernel_is_never_renamed_into_a_gemm() {
    // HTA's trace_diff pair read an elementwise `tanh` kernel as "changed →
    // volta_sgemm_128x64_tn": the two sit under one parent but compute different things.
    let d = Diff::of(
        side("a", &module_with("aten::tanh", "tanh_kernel")),
        side("b", &module_with("aten::mm", "volta_sgemm_128x64_tn")),
    );
    let k = row(&d.kernels, "tanh_kernel");
    assert_eq!(k.status, Status::Removed, "{k:#?}");
    assert_eq!(
        row(&d.kernels, "volta_sgemm_128x64_tn").status,
        Status::Added
    );
    assert_eq!(row(&d.ops, "aten::tanh").status, Status::Removed);
    assert_eq!(row(&d.ops, "aten::mm").status, Status::Added);
    // Two gemm kernels under the same parent do pair, and say how and how sure.
    let d = Diff::of(
        side("a", &module_with("aten::mm", "ampere_sgemm_128x64_nn")),
        side("b", &module_with("aten::mm", "volta_sgemm_128x64_tn")),
    );
    let k = row(&d.kernels, "ampere_sgemm_128x64_nn");
    assert_eq!(k.b_name.as_deref(), Some("volta_sgemm_128x64_tn"));
    assert_eq!(k.family.as_deref(), Some("gemm"));
    assert_eq!(k.confidence, Some(Confidence::Medium));
    assert_eq!(k.how(), "medium: renamed within gemm under aten::mm");
}

#[test]
fn a_backend_rename_says_how_it_was_matched_and_can_be_turned_off() {
    let a = convolution("aten::cudnn_convolution", "cudnn_fprop_kernel", 100.0);
    let b = convolution("aten::miopen_convolution", "MIOpenConvFwd", 70.0);
    let d = Diff::of(side("a", &a), side("b", &b));
    let op = row(&d.ops, "aten::cudnn_convolution");
    assert_eq!(op.family.as_deref(), Some("convolution"));
    assert_eq!(op.confidence, Some(Confidence::Medium));
    assert_eq!(
        op.how(),
        "medium: renamed within convolution under aten::_convolution"
    );
    assert_eq!(
        row(&d.ops, "aten::conv2d").confidence,
        Some(Confidence::Exact)
    );
    assert!(d.renames);
    // Off: the rename is one removal and one addition, each with its full time per step.
    let d = Diff::with(
        side("a", &a),
        side("b", &b),
        MatchOptions { renames: false },
    );
    assert!(!d.renames);
    let gone = row(&d.ops, "aten::cudnn_convolution");
    assert_eq!(
        (gone.status, gone.b_name.as_deref()),
        (Status::Removed, None)
    );
    assert_eq!(gone.delta_step_ns, -100_000.0);
    let new = row(&d.ops, "aten::miopen_convolution");
    assert_eq!(new.status, Status::Added);
    assert_eq!(new.delta_step_ns, 70_000.0);
    assert_eq!(row(&d.kernels, "MIOpenConvFwd").status, Status::Added);
}

#[test]
fn a_compiled_region_stands_for_every_eager_op_under_its_parent_not_one() {
    // `aten::permute` "changed → CompiledFunction" (issue 23): the compiled region replaced the
    // module's whole eager forward, so it is matched with all of it.
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
            &build(&[
                ("aten::permute", "copy_kernel"),
                ("aten::tanh", "tanh_kernel"),
                ("aten::mm", "ampere_sgemm_128x64_nn"),
            ]),
        ),
        side(
            "b",
            &build(&[("CompiledFunction", "triton_poi_fused_tanh_0")]),
        ),
    );
    let r = row(&d.ops, "aten::permute");
    assert_eq!(r.a_members, vec!["aten::permute", "aten::tanh", "aten::mm"]);
    assert_eq!(r.b_name.as_deref(), Some("CompiledFunction"));
    assert_eq!(r.family.as_deref(), Some("compiled"));
    assert_eq!(r.confidence, Some(Confidence::Low));
    assert_eq!(
        r.how(),
        "low: B's compiled region stands for 3 eager items under nn.Module: MLP"
    );
    assert_eq!((r.a_calls, r.b_calls), (3, 1));
    // The fused pointwise kernel pairs with the eager elementwise kernels, not with the gemm.
    let k = row(&d.kernels, "triton_poi_fused_tanh_0");
    assert!(!k.a_members.iter().any(|n| n.contains("sgemm")), "{k:#?}");
    assert_eq!(
        row(&d.kernels, "ampere_sgemm_128x64_nn").status,
        Status::Removed
    );
}

// ---- FLOP coverage and setup (issue 23, point 1) -----------------------------------------------

/// One step of 1000 µs holding `mms` calls of `aten::mm` [[64,128],[128,256]] (2·64·128·256 =
/// 4,194,304 FLOPs each, torch's formula) launching a 10 µs gemm, and `other` calls of an op
/// with no FLOP formula launching a 10 µs kernel, then `extra` (an event) if given.
fn flop_trace(mms: usize, other: usize, extra: &str) -> Vec<String> {
    let mut v = Vec::new();
    step(&mut v, 1, 0.0, 1000.0);
    for k in 0..mms {
        let (ts, c) = (10.0 + 40.0 * k as f64, k);
        v.push(x(
            "cpu_op",
            "aten::mm",
            1,
            ts,
            8.0,
            r#""Input Dims":[[64,128],[128,256]],"Input type":["float","float"]"#,
        ));
        v.push(x(
            "cuda_runtime",
            "cudaLaunchKernel",
            1,
            ts + 1.0,
            5.0,
            &format!(r#""correlation":{c}"#),
        ));
        v.push(x(
            "kernel",
            "ampere_sgemm_64x64_nn",
            7,
            ts + 10.0,
            10.0,
            &format!(r#""device":0,"stream":7,"correlation":{c}"#),
        ));
    }
    for k in 0..other {
        op_with_kernel(
            &mut v,
            "CompiledFunction",
            "triton_poi_fused_0",
            500.0 + 40.0 * k as f64,
            10.0,
            100 + k as i64,
        );
    }
    if !extra.is_empty() {
        v.push(extra.to_owned());
    }
    v
}

fn side_with_meta(label: &str, events: &[String], meta: &str) -> Side {
    let json = format!(r#"{{{meta}"traceEvents":[{}]}}"#, events.join(","));
    let Loaded::Trace(t) = load_bytes("t.json", json.as_bytes()).unwrap() else {
        panic!("not a trace")
    };
    let a = Analysis::of(label, &t);
    Side::of(label, &[(&t, &a)], false)
}

#[test]
fn flop_rates_are_compared_only_when_both_sides_counted_the_same_work() {
    // A counts 4 mm calls per step, all of its GPU time; B counts 1 and runs the rest in
    // compiled kernels no formula covers: its TFLOPS would read 4x lower at the same speed.
    let a = side("a", &flop_trace(4, 0, ""));
    let b = side("b", &flop_trace(1, 3, ""));
    assert_eq!(a.coverage.flops_per_step, 4.0 * 4_194_304.0);
    assert_eq!(b.coverage.flops_per_step, 4_194_304.0);
    assert_eq!(
        (a.coverage.ops_per_step, b.coverage.ops_per_step),
        (4.0, 1.0)
    );
    assert_eq!(a.coverage.device_share, Some(1.0));
    assert_eq!(b.coverage.device_share, Some(0.25));
    let d = Diff::of(a, b);
    assert!(!d.rates.comparable);
    assert_eq!(
        d.rates.reasons,
        vec![
            "FLOPs were counted for 4 op calls per step in A, 1 in B".to_owned(),
            "those ops ran 100% of A's GPU time, 25% of B's".to_owned(),
            "16.8 MFLOP per step counted in A, 4.19 MFLOP in B".to_owned(),
        ]
    );
    assert_eq!(d.b.setup.compiled.as_deref(), Some("CompiledFunction"));
    assert_eq!(
        d.setup_notes,
        vec!["B runs torch.compile (CompiledFunction), A eager".to_owned()]
    );
    let md = tracelight_core::report::diff::markdown::diff_markdown(&d);
    assert!(md.contains("| achieved FLOPS (step window) |"), "{md}");
    assert!(md.contains("not comparable ¹"), "{md}");
    assert!(
        md.contains("¹ FLOP rates not compared: FLOPs were counted for 4 op calls"),
        "{md}"
    );
    assert!(
        md.contains("> **Not like for like** — B runs torch.compile"),
        "{md}"
    );
    let js = tracelight_core::report::diff::json::diff_json(&d);
    assert_eq!(js["flops"]["rates_comparable"], false);
    assert_eq!(js["flops"]["flop_ops_per_step"]["a"], 4.0);
    // The same work on both sides, B's gemm slower: comparable, no reason.
    let d = Diff::of(
        side("a", &flop_trace(4, 0, "")),
        side("b", &flop_trace(4, 0, "")),
    );
    assert!(d.rates.comparable, "{:?}", d.rates);
    assert!(d.setup_notes.is_empty());
}

#[test]
fn a_change_of_device_or_world_size_is_said_above_the_comparison() {
    let meta = |dev: &str, ws: u32| {
        format!(
            r#""deviceProperties":[{{"id":0,"name":"{dev}"}}],"distributedInfo":{{"backend":"nccl","rank":0,"world_size":{ws}}},"#
        )
    };
    let a = side_with_meta(
        "a",
        &flop_trace(2, 0, ""),
        &meta("NVIDIA A100-SXM4-80GB", 8),
    );
    let b = side_with_meta("b", &flop_trace(2, 0, ""), &meta("Tesla V100-SXM2-16GB", 2));
    let d = Diff::of(a, b);
    assert_eq!(
        d.setup_notes,
        vec![
            "device: A NVIDIA A100-SXM4-80GB, B Tesla V100-SXM2-16GB".to_owned(),
            "world size: A 8, B 2".to_owned()
        ]
    );
}
