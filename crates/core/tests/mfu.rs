//! MFU against the peak of each op's dtype and math unit (issue 18: the A100 trace's TF32
//! tensor-core GEMMs were measured against the fp32 SIMT peak, "MFU 0.1 % … peak 19.5 TFLOPS").

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::gpu::gpu_summary;
use tracelight_core::analysis::mfu::summarize;
use tracelight_core::ingest::{load_bytes, Loaded};

/// The corpus folder (`tracelight_testkit::root()`, overridable by `TRACELIGHT_CORPUS`).
fn real() -> String {
    tracelight_testkit::root()
        .join("real")
        .to_string_lossy()
        .into_owned()
}

fn trace(text: &str) -> Box<tracelight_core::model::Trace> {
    let Ok(Loaded::Trace(t)) = load_bytes("hand.json", text.as_bytes()) else {
        panic!("hand-built trace must load")
    };
    t
}

/// Two 1024³ matmuls on an A100 inside a 1 ms step: one with fp32 inputs run by a TF32
/// tensor-core kernel (`cutlass_80_tensorop_s1688gemm`), one with bf16 inputs. Each is
/// 2·1024³ FLOPs. By construction: per-op peaks 156 (tf32) and 312 (bf16) TFLOPS; MFU =
/// (f/156e12 + f/312e12) / 1 ms; the overall peak is 2f over that ideal time = 208 TFLOPS.
#[test]
fn each_op_is_measured_against_its_own_dtype_and_tensor_core_peak() {
    let t = trace(
        r#"{"deviceProperties":[{"id":0,"name":"NVIDIA A100-SXM4-80GB"}],"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":20,"args":{"Input Dims":[[1024,1024],[1024,1024]],"Input type":["float","float"]}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":5,"args":{"correlation":1}},
 {"ph":"X","cat":"cpu_op","name":"aten::bmm","pid":1,"tid":1,"ts":40,"dur":20,"args":{"Input Dims":[[1,1024,1024],[1,1024,1024]],"Input type":["c10::BFloat16","c10::BFloat16"]}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":42,"dur":5,"args":{"correlation":2}},
 {"ph":"X","cat":"kernel","name":"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>","pid":0,"tid":7,"ts":100,"dur":100,"args":{"correlation":1,"stream":7,"device":0}},
 {"ph":"X","cat":"kernel","name":"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nn","pid":0,"tid":7,"ts":300,"dur":50,"args":{"correlation":2,"stream":7,"device":0}}
]}"#,
    );
    let g = gpu_summary(&t);
    assert_eq!(g.window_ns, 1_000_000);
    let f = summarize(&t, g.window_ns);
    let one = 2.0 * 1024f64.powi(3);
    assert_eq!(f.total_flops, 2.0 * one);
    let mm = f.per_op.iter().find(|o| o.name == "aten::mm").unwrap();
    assert_eq!((mm.dtype.as_str(), mm.peak_tflops), ("tf32", Some(156.0)));
    let bmm = f.per_op.iter().find(|o| o.name == "aten::bmm").unwrap();
    assert_eq!((bmm.dtype.as_str(), bmm.peak_tflops), ("bf16", Some(312.0)));
    // Per op: FLOPs over its kernel's 100 µs / 50 µs.
    assert!((mm.achieved_tflops.unwrap() - one / 100e-6 / 1e12).abs() < 1e-9);
    let ideal_s = one / 156e12 + one / 312e12;
    let mfu = f.mfu.unwrap();
    assert!((mfu - ideal_s / 1e-3).abs() < 1e-12, "{mfu}");
    assert!((f.peak_tflops.unwrap() - 208.0).abs() < 1e-9);
    assert!(f.by_dtype.iter().all(|d| d.tensor_cores));
    assert!(f.peak_source.unwrap().starts_with("A100 SXM4 80GB dense"));
}

/// A CPU trace has FLOPs but no accelerator: no peak, no MFU.
#[test]
fn a_cpu_trace_has_no_mfu() {
    let t = trace(
        r#"{"traceEvents":[
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":20,"args":{"Input Dims":[[64,64],[64,64]],"Input type":["float","float"]}}
]}"#,
    );
    let f = summarize(&t, 20_000);
    assert_eq!(f.total_flops, 2.0 * 64f64.powi(3));
    assert_eq!((f.peak_tflops, f.mfu), (None, None));
    assert!(f
        .per_op
        .iter()
        .all(|o| o.peak_tflops.is_none() && o.mfu.is_none()));
}

/// The A100 rank-0-of-16 trace: every `aten::mm` / `aten::addmm` takes fp32 inputs (its
/// `Input type` says "float") and ran a `cutlass_80_tensorop_s1688gemm` kernel — TF32 tensor
/// cores, 156 TFLOPS dense, not the 19.5 of fp32 SIMT. The `aten::mul` calls written
/// `["float", "double", …]` multiply by a Python scalar: fp32 math, not fp64.
#[test]
fn a100_rank0_gemms_use_the_tf32_tensor_core_peak() {
    let path = format!("{}/hta/a100_80gb_rank0of16.json.gz", real());
    let Some(bytes) = tracelight_testkit::read(&path) else {
        return;
    };
    let Ok(Loaded::Trace(t)) = load_bytes(&path, &bytes) else {
        panic!("{path} must load")
    };
    let f = summarize(&t, gpu_summary(&t).window_ns);
    for op in ["aten::mm", "aten::addmm"] {
        let o = f.per_op.iter().find(|o| o.name == op).unwrap();
        assert_eq!(
            (o.dtype.as_str(), o.peak_tflops),
            ("tf32", Some(156.0)),
            "{op}"
        );
    }
    let mul = f.per_op.iter().find(|o| o.name == "aten::mul").unwrap();
    assert_eq!(mul.dtype, "fp32");
    assert_eq!(f.dominant_dtype.as_deref(), Some("tf32"));
    assert!(f.by_dtype.iter().all(|d| d.dtype != "fp64"));
}

/// The headline blend on the A100 rank-0-of-16 trace (issue 26). Its fp32 GEMMs ran TF32
/// tensor-core kernels (`cutlass_80_tensorop_s1688gemm`), so TF32 was on; 5 of its 25 GEMM
/// calls (`aten::mm` [4096, 64] × [64, 2798], 7.3 GFLOP) still ran cuBLAS's SIMT
/// `ampere_sgemm_128x64_nn`, and counting those at the SIMT fp32 peak made the blend 43.0
/// TFLOPS. Held against the mode's TF32 peak, the GEMMs (92.6 % of the FLOPs: 22.53 of 24.32
/// GFLOP, by the mm/addmm formula on the trace's shapes) weigh at 156 and `mul`/`add` at 19.5:
/// 24.32 / (22.53/156 + 1.79/19.5) = 103.0.
#[test]
fn a100_rank0_blend_is_103_tflops_not_43() {
    let path = format!("{}/hta/a100_80gb_rank0of16.json.gz", real());
    let Some(bytes) = tracelight_testkit::read(&path) else {
        return;
    };
    let Ok(Loaded::Trace(t)) = load_bytes(&path, &bytes) else {
        panic!("{path} must load")
    };
    let f = summarize(&t, gpu_summary(&t).window_ns);
    let gemm: f64 = f
        .per_op
        .iter()
        .filter(|o| o.name == "aten::mm" || o.name == "aten::addmm")
        .map(|o| o.flops)
        .sum();
    assert!((gemm - 22_528_655_360.0).abs() < 1.0, "{gemm}");
    assert!((gemm / f.total_flops - 0.926).abs() < 0.001);
    let peak = f.peak_tflops.unwrap();
    assert!((peak - 103.0).abs() < 0.1, "blend {peak}");
    assert_eq!(f.device_table.as_deref(), Some("A100 SXM4 80GB"));
    let tf32 = f.by_math.iter().find(|m| m.dtype == "tf32").unwrap();
    assert_eq!(
        (tf32.unit.as_str(), tf32.peak_tflops),
        ("tensor_core", Some(156.0))
    );
}
