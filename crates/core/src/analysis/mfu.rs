//! Achieved TFLOPS and MFU (docs/definitions.md), each op against the peak of its
//! own math — dtype and math unit, decided in [`super::math_unit`] from its inputs, the kernels
//! it launched and the trace's TF32 mode ([`super::roofline::call_costs`]); peaks from the
//! device table ([`super::devices`]).
//!
//! The FLOPs are the ones torch counts (key_averages' `flops` column for GEMMs, `conv2d`, `mul`
//! and `add`, `FlopCounterMode` for attention and convolution backward; the trace's own `flops`
//! arg where an older torch wrote one), over the outermost op of each family
//! ([`super::op_cost`]), so nothing is counted twice.
//!
//! MFU with mixed math is the time the FLOPs would take at each op's own peak, over the
//! window: `Σ flops_i / peak_i ÷ window`. The overall peak shown is the one that makes
//! `achieved ÷ peak` equal that (the FLOP-weighted harmonic mean of the peaks used). On the
//! A100 rank-0-of-16 trace that blend is 103 TFLOPS: 92.6 % of the FLOPs are fp32 GEMMs under
//! TF32 (156), the rest `mul`/`add` on the SIMT units (19.5).

use super::devices::{device_of, Device};
use super::flops::FlopsSource;
use super::math_unit::{peak, Math};
use super::roofline::{call_costs, unit_slug, CallCost};
use crate::model::{StrId, Trace};
use rustc_hash::FxHashMap;
use serde::Serialize;

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
    /// The math unit of that peak (`tensor_core`, `simt`).
    #[serde(default)]
    pub unit: String,
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

/// FLOPs per math (dtype and unit) with their peak, the parts of the headline blend.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct MathFlops {
    pub dtype: String,
    pub unit: String,
    pub flops: f64,
    pub peak_tflops: Option<f64>,
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
    /// FLOPs per math (dtype and unit) and its peak: the parts of the blend, by FLOPs descending.
    #[serde(default)]
    pub by_math: Vec<MathFlops>,
    /// The device table row the peaks come from, and its source.
    #[serde(default)]
    pub device_table: Option<String>,
    #[serde(default)]
    pub device_source: Option<String>,
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
    by_math: Vec<(Math, f64)>,
}

fn add_math(v: &mut Vec<(Math, f64)>, m: Math, f: f64) {
    match v.iter_mut().find(|x| x.0 == m) {
        Some(x) => x.1 += f,
        None => v.push((m, f)),
    }
}

fn dominant(v: &[(Math, f64)]) -> Option<Math> {
    v.iter()
        .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .map(|x| x.0)
}

/// FLOPs over every op, achieved TFLOPS against device time and the window, MFU against the
/// device table's peak of each op's math. `window_ns` is the ProfilerStep window (see
/// [`super::gpu`]). A trace without a known accelerator has no peak and no MFU.
pub fn summarize(t: &Trace, window_ns: i64) -> FlopsSummary {
    let tree = super::ops::op_tree(t).into();
    summarize_calls(t, &call_costs(t, &tree), window_ns)
}

/// [`summarize`] over call costs already computed.
pub fn summarize_calls(t: &Trace, calls: &[CallCost], window_ns: i64) -> FlopsSummary {
    let props = t.meta.devices.first();
    let dev: Option<&Device> = props.and_then(device_of);
    summarize_on(t, calls, window_ns, dev)
}

/// [`summarize_calls`] against a given table row.
pub fn summarize_on(
    t: &Trace,
    calls: &[CallCost],
    window_ns: i64,
    dev: Option<&Device>,
) -> FlopsSummary {
    let mut total = 0.0;
    let mut with_dev_flops = 0.0;
    let mut dev_ns = 0i64;
    let mut by_math: Vec<(Math, f64)> = Vec::new();
    let mut per_op: FxHashMap<StrId, Acc> = FxHashMap::default();
    let mut counts = [0u64; 4];
    for c in calls {
        let f = c.mfu_flops;
        if f <= 0.0 {
            continue;
        }
        let src = if c.from_trace_arg {
            FlopsSource::Trace
        } else if matches!(c.family, super::op_cost::Family::Attention)
            || t.str(t.slices.name[c.slice as usize]) == "aten::convolution_backward"
        {
            FlopsSource::FlopCounter
        } else {
            FlopsSource::Torch
        };
        counts[src as usize] += 1;
        total += f;
        if c.device_ns > 0 {
            with_dev_flops += f;
            dev_ns += c.device_ns;
        }
        add_math(&mut by_math, c.math, f);
        let a = per_op.entry(t.slices.name[c.slice as usize]).or_default();
        a.calls += 1;
        a.flops += f;
        a.dev_ns += c.device_ns;
        add_math(&mut a.by_math, c.math, f);
    }
    let peak_of = |m: Math| dev.map(|d| peak(d, m).0).filter(|p| *p > 0.0);
    // Σ flops / peak over maths, in TFLOP/TFLOPS = s·1e12 units; only when every math has one.
    let ideal: Option<f64> = by_math
        .iter()
        .map(|(m, f)| peak_of(*m).map(|p| f / p))
        .sum();
    let achieved_window = (window_ns > 0 && total > 0.0).then(|| total / window_ns as f64 / 1e3);
    let overall_peak = ideal.filter(|x| *x > 0.0).map(|x| total / x);
    let mfu = match (achieved_window, overall_peak) {
        (Some(a), Some(p)) if dev_ns > 0 => Some(a / p),
        _ => None,
    };
    let dom = dominant(&by_math);
    let peak_source = match (dev, overall_peak) {
        (Some(d), Some(_)) => Some(describe_peak(d, &by_math)),
        _ => None,
    };
    // By dtype (the older view): a dtype's peak is its math's; several units → FLOP-weighted.
    let mut dts: Vec<(&'static str, f64, f64, bool)> = Vec::new();
    for (m, f) in &by_math {
        let ideal_part = peak_of(*m).map_or(f64::NAN, |p| f / p);
        let tc = m.unit == super::math_unit::Unit::TensorCore;
        match dts.iter_mut().find(|x| x.0 == m.dtype.as_str()) {
            Some(x) => {
                x.1 += f;
                x.2 += ideal_part;
                x.3 |= tc;
            }
            None => dts.push((m.dtype.as_str(), *f, ideal_part, tc)),
        }
    }
    let mut by_dtype_out: Vec<DtypeFlops> = dts
        .iter()
        .map(|(d, f, ideal, tc)| DtypeFlops {
            dtype: (*d).to_owned(),
            flops: *f,
            peak_tflops: (ideal.is_finite() && *ideal > 0.0).then(|| f / ideal),
            tensor_cores: *tc,
        })
        .collect();
    crate::sort::by(&mut by_dtype_out, |a, b| {
        b.flops
            .total_cmp(&a.flops)
            .then_with(|| a.dtype.cmp(&b.dtype))
    });
    let mut by_math_out: Vec<MathFlops> = by_math
        .iter()
        .map(|(m, f)| MathFlops {
            dtype: m.dtype.as_str().to_owned(),
            unit: unit_slug(m.unit).to_owned(),
            flops: *f,
            peak_tflops: peak_of(*m),
        })
        .collect();
    crate::sort::by(&mut by_math_out, |a, b| {
        b.flops
            .total_cmp(&a.flops)
            .then_with(|| a.dtype.cmp(&b.dtype))
            .then_with(|| a.unit.cmp(&b.unit))
    });
    let mut per_op: Vec<OpMfu> = per_op
        .into_iter()
        .map(|(name, a)| {
            let m = dominant(&a.by_math).unwrap_or(Math {
                dtype: super::math_unit::Dtype::Fp32,
                unit: super::math_unit::Unit::Simt,
            });
            let p = peak_of(m);
            let achieved = (a.dev_ns > 0).then(|| a.flops / a.dev_ns as f64 / 1e3);
            OpMfu {
                name: t.str(name).to_owned(),
                calls: a.calls,
                flops: a.flops,
                device_ns: a.dev_ns,
                dtype: m.dtype.as_str().to_owned(),
                unit: unit_slug(m.unit).to_owned(),
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
        dominant_dtype: dom.map(|m| m.dtype.as_str().to_owned()),
        device: t.meta.devices.first().map(|d| d.name.clone()),
        peak_tflops: overall_peak,
        peak_source,
        mfu,
        by_dtype: by_dtype_out,
        by_math: by_math_out,
        device_table: dev.map(|d| d.name.to_owned()),
        device_source: dev.map(|d| d.source.to_owned()),
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

/// `A100 SXM4 80GB dense: tf32 on tensor cores 156 + fp32 on SIMT 19.5`.
fn describe_peak(d: &Device, by_math: &[(Math, f64)]) -> String {
    let mut v: Vec<&(Math, f64)> = by_math.iter().collect();
    crate::sort::by(&mut v, |a, b| {
        b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0))
    });
    let parts: Vec<String> = v
        .iter()
        .map(|(m, _)| format!("{} {}", m.label(), peak(d, *m).0))
        .collect();
    format!("{} dense: {}", d.name, parts.join(" + "))
}
