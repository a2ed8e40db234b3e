//! Achieved TFLOPS and MFU (DESIGN §4 "Achieved TFLOPS / MFU"), with the peak of each op's own
//! math: its dtype and whether it ran on tensor cores.
//!
//! The dtype of an op comes from its `Input type` arg; where the arg is silent, or where the
//! kernels it launched say more than the inputs do, from the names of those kernels
//! ([`kernel_math`]): fp32 inputs run by `cutlass_80_tensorop_s1688gemm` or `…_tf32…` kernels
//! used TF32 tensor cores (PyTorch's `allow_tf32`, on by default for cuDNN and in many
//! frameworks), and `…bf16…` / `…h16816…` kernels under fp32 ops are autocast. Before this the
//! A100 rank-0-of-16 trace (every GEMM a TF32 tensor-core kernel) was measured against the fp32
//! SIMT peak, 19.5 TFLOPS instead of 156.
//!
//! MFU with mixed dtypes is the time the FLOPs would take at each op's own peak, over the
//! window: `Σ flops_i / peak_i ÷ window`. The overall peak shown is the one that makes
//! `achieved ÷ peak` equal that (the FLOP-weighted harmonic mean of the peaks used).

use super::flops::{slice_flops, FlopsSource};
use super::kernels::enclosing_op;
use super::peaks::{dtype_of, peak_for, Peak};
use crate::model::{SliceKind, StrId, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The math a GEMM/convolution kernel name says it used: `bf16`, `fp8`, `fp16` or `tf32`
/// (tensor cores), `None` when the name does not say (`ampere_sgemm`, `nvjet_tst`, …).
pub fn kernel_math(name: &str) -> Option<&'static str> {
    let l = name.to_ascii_lowercase();
    let has = |subs: &[&str]| subs.iter().any(|s| l.contains(s));
    if has(&["bf16"]) {
        Some("bf16")
    } else if has(&["fp8", "e4m3", "e5m2"]) {
        Some("fp8")
    } else if has(&["f16", "fp16", "half", "h884", "h1688", "h16816"]) {
        Some("fp16")
    } else if has(&["tf32", "s1688", "s16816", "tensorop_s"]) {
        Some("tf32")
    } else {
        None
    }
}

/// The dtype an op's FLOPs ran at, from its inputs and the kernels it launched.
fn op_dtype(input_type: &str, kernel_hint: Option<&'static str>) -> &'static str {
    let input = (!input_type.trim_matches(|c| "[]\" ,".contains(c)).is_empty())
        .then(|| dtype_of(input_type));
    match (input, kernel_hint) {
        // Kernels outrank fp32 inputs: TF32 tensor cores or autocast to a half type.
        (Some("fp32") | None, Some(h)) => h,
        (Some(d), _) => d,
        (None, None) => "fp32",
    }
}

/// One op name's FLOPs and the peak they were measured against.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct OpMfu {
    pub name: String,
    pub calls: u64,
    pub flops: f64,
    /// Device time of the calls that have FLOPs, ns.
    pub device_ns: i64,
    /// The dtype that carries most of this op's FLOPs (`tf32` = fp32 inputs on tensor cores).
    pub dtype: String,
    /// The peak used for those FLOPs (TFLOPS), `None` on an unknown device.
    pub peak_tflops: Option<f64>,
    /// FLOPs ÷ device time.
    pub achieved_tflops: Option<f64>,
    /// `achieved_tflops ÷ peak_tflops`: how well this op's kernels use the device.
    pub mfu: Option<f64>,
}

/// FLOPs per dtype and the peak used for them.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct DtypeFlops {
    pub dtype: String,
    pub flops: f64,
    pub peak_tflops: Option<f64>,
    /// Whether that peak is a tensor-core (matrix unit) one.
    pub tensor_cores: bool,
}

/// Whole-trace FLOP figures.
#[derive(Debug, Clone, Serialize, serde::Deserialize, Default)]
pub struct FlopsSummary {
    pub total_flops: f64,
    /// FLOPs of ops that launched device work, ÷ that device time.
    pub achieved_tflops_device: Option<f64>,
    /// Total FLOPs ÷ the step window (how MFU is usually quoted).
    pub achieved_tflops_window: Option<f64>,
    /// The dtype that carries most FLOPs.
    pub dominant_dtype: Option<String>,
    pub device: Option<String>,
    /// The overall peak (TFLOPS) MFU is measured against: each op at its dtype's peak, combined
    /// as the FLOP-weighted harmonic mean. `None` without a known accelerator.
    pub peak_tflops: Option<f64>,
    /// Where the peak came from, e.g. `A100 dense tf32 (tensor cores)`.
    pub peak_source: Option<String>,
    pub mfu: Option<f64>,
    /// FLOPs per dtype and the peak used for each, by FLOPs descending.
    pub by_dtype: Vec<DtypeFlops>,
    /// Per op name with FLOPs, by FLOPs descending then name.
    pub per_op: Vec<OpMfu>,
    /// How many op calls got FLOPs from each source.
    pub by_source: Vec<(FlopsSource, u64)>,
}

/// Accumulator for one op name.
#[derive(Default)]
struct Acc {
    calls: u64,
    flops: f64,
    dev_ns: i64,
    by_dtype: Vec<(&'static str, f64)>,
}

fn add_dtype(v: &mut Vec<(&'static str, f64)>, d: &'static str, f: f64) {
    match v.iter_mut().find(|x| x.0 == d) {
        Some(x) => x.1 += f,
        None => v.push((d, f)),
    }
}

fn dominant(v: &[(&'static str, f64)]) -> Option<&'static str> {
    v.iter()
        .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(a.0)))
        .map(|x| x.0)
}

/// Kernel-name hints per op slice: the math of the longest-running GEMM-like kernel each op (and
/// every op around it) launched.
fn kernel_hints(t: &Trace) -> FxHashMap<u32, (&'static str, i64)> {
    let s = &t.slices;
    let g = &t.gpu;
    let mut out: FxHashMap<u32, FxHashMap<&'static str, i64>> = FxHashMap::default();
    for r in 0..g.slice.len() {
        let k = g.slice[r] as usize;
        if s.kind[k] != SliceKind::Kernel {
            continue;
        }
        let Some(m) = kernel_math(t.str(s.name[k])) else {
            continue;
        };
        let mut op = enclosing_op(t, g.launch[r]);
        while op != NONE {
            *out.entry(op).or_default().entry(m).or_default() += s.dur[k];
            op = enclosing_op(t, op);
        }
    }
    out.into_iter()
        .filter_map(|(op, m)| {
            m.into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
                .map(|x| (op, x))
        })
        .collect()
}

/// FLOPs over every op, achieved TFLOPS against device time and the window, MFU against
/// [`super::peaks::PEAKS`] for each op's dtype. `window_ns` is the ProfilerStep window (see
/// [`super::gpu`]). A trace without a known accelerator has no peak and no MFU.
pub fn summarize(t: &Trace, window_ns: i64) -> FlopsSummary {
    let ops = super::ops::op_tree(t);
    let hints = kernel_hints(t);
    let device = t.meta.devices.first().map(|d| d.name.clone());
    let peak: Option<&Peak> = device.as_deref().and_then(peak_for);
    let mut total = 0.0;
    let mut with_dev_flops = 0.0;
    let mut dev_ns = 0i64;
    let mut by_dtype: Vec<(&'static str, f64)> = Vec::new();
    let mut per_op: FxHashMap<StrId, Acc> = FxHashMap::default();
    let mut counts = [0u64; 4];
    for (k, &i) in ops.slice.iter().enumerate() {
        let (f, src) = slice_flops(t, i as usize);
        if f <= 0.0 {
            continue;
        }
        counts[src as usize] += 1;
        total += f;
        let dev = ops.device_total[k] - ops.repeated_device[k];
        if dev > 0 {
            with_dev_flops += f;
            dev_ns += dev;
        }
        let hint = hints.get(&i).map(|h| h.0);
        let dt = op_dtype(t.str(t.slices.input_types[i as usize]), hint);
        add_dtype(&mut by_dtype, dt, f);
        let a = per_op.entry(t.slices.name[i as usize]).or_default();
        a.calls += 1;
        a.flops += f;
        a.dev_ns += dev.max(0);
        add_dtype(&mut a.by_dtype, dt, f);
    }
    let peak_of = |d: &str| peak.and_then(|p| p.tflops(d)).filter(|p| *p > 0.0);
    // Σ flops / peak over dtypes, in TFLOP/TFLOPS = s·1e12 units; only when every dtype has one.
    let ideal: Option<f64> = by_dtype
        .iter()
        .map(|(d, f)| peak_of(d).map(|p| f / p))
        .sum();
    let achieved_window = (window_ns > 0 && total > 0.0).then(|| total / window_ns as f64 / 1e3);
    let overall_peak = ideal.filter(|x| *x > 0.0).map(|x| total / x);
    let mfu = match (achieved_window, overall_peak) {
        (Some(a), Some(p)) if dev_ns > 0 => Some(a / p),
        _ => None,
    };
    let dom = dominant(&by_dtype);
    let peak_source = match (peak, overall_peak) {
        (Some(p), Some(_)) => Some(describe_peak(p, &by_dtype)),
        _ => None,
    };
    let mut by_dtype_out: Vec<DtypeFlops> = by_dtype
        .iter()
        .map(|(d, f)| DtypeFlops {
            dtype: (*d).to_owned(),
            flops: *f,
            peak_tflops: peak_of(d),
            tensor_cores: peak.is_some_and(|p| p.tensor_cores(d)),
        })
        .collect();
    crate::sort::by(&mut by_dtype_out, |a, b| {
        b.flops
            .total_cmp(&a.flops)
            .then_with(|| a.dtype.cmp(&b.dtype))
    });
    let mut per_op: Vec<OpMfu> = per_op
        .into_iter()
        .map(|(name, a)| {
            let d = dominant(&a.by_dtype).unwrap_or("fp32");
            let p = peak_of(d);
            let achieved = (a.dev_ns > 0).then(|| a.flops / a.dev_ns as f64 / 1e3);
            OpMfu {
                name: t.str(name).to_owned(),
                calls: a.calls,
                flops: a.flops,
                device_ns: a.dev_ns,
                dtype: d.to_owned(),
                peak_tflops: p,
                achieved_tflops: achieved,
                mfu: achieved.zip(p).map(|(x, p)| x / p),
            }
        })
        .collect();
    crate::sort::by(&mut per_op, |a, b| {
        b.flops
            .total_cmp(&a.flops)
            .then_with(|| a.name.cmp(&b.name))
    });
    FlopsSummary {
        total_flops: total,
        achieved_tflops_device: (dev_ns > 0).then(|| with_dev_flops / dev_ns as f64 / 1e3),
        achieved_tflops_window: achieved_window,
        dominant_dtype: dom.map(str::to_owned),
        device,
        peak_tflops: overall_peak,
        peak_source,
        mfu,
        by_dtype: by_dtype_out,
        per_op,
        by_source: [
            FlopsSource::Trace,
            FlopsSource::Torch,
            FlopsSource::FlopCounter,
        ]
        .iter()
        .map(|&s| (s, counts[s as usize]))
        .filter(|x| x.1 > 0)
        .collect(),
    }
}

/// `A100 dense tf32 156 (tensor cores)`, or every dtype's peak joined with ` + ` when mixed.
fn describe_peak(p: &Peak, by_dtype: &[(&'static str, f64)]) -> String {
    let mut v: Vec<&(&str, f64)> = by_dtype.iter().collect();
    crate::sort::by(&mut v, |a, b| {
        b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0))
    });
    let parts: Vec<String> = v
        .iter()
        .map(|(d, _)| {
            let tc = if p.tensor_cores(d) {
                " (tensor cores)"
            } else {
                ""
            };
            let x = p.tflops(d).unwrap_or(0.0);
            format!("{d} {x}{tc}")
        })
        .collect();
    format!("{} dense {}", p.matches, parts.join(" + "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_say_which_math_ran() {
        let tf32 = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>";
        assert_eq!(kernel_math(tf32), Some("tf32"));
        assert_eq!(
            kernel_math("sm80_xmma_gemm_f32f32_tf32f32_f32_nn"),
            Some("tf32")
        );
        assert_eq!(
            kernel_math("ampere_bf16_s16816gemm_bf16_128x128"),
            Some("bf16")
        );
        assert_eq!(
            kernel_math("ampere_fp16_s16816gemm_fp16_64x64"),
            Some("fp16")
        );
        assert_eq!(kernel_math("volta_h884gemm_64x64_nn"), Some("fp16"));
        assert_eq!(kernel_math("ampere_sgemm_128x64_nn"), None);
        assert_eq!(kernel_math("volta_sgemm_128x64_nt"), None);
        assert_eq!(kernel_math("nvjet_tst_128x256_64x4"), None);
    }

    #[test]
    fn inputs_rank_below_kernels_only_for_fp32() {
        assert_eq!(op_dtype("[\"float\", \"float\"]", Some("tf32")), "tf32");
        assert_eq!(op_dtype("[\"float\", \"float\"]", None), "fp32");
        assert_eq!(op_dtype("[\"float\"]", Some("bf16")), "bf16");
        assert_eq!(op_dtype("[\"c10::BFloat16\"]", Some("tf32")), "bf16");
        assert_eq!(op_dtype("", Some("fp16")), "fp16");
        assert_eq!(op_dtype("[]", None), "fp32");
    }
}
