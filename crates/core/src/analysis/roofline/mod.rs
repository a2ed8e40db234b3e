//! The roofline (docs/definitions.md, the roofline beside it): for every op call
//! of a known family ([`super::op_cost`]) its FLOPs, bytes moved and device time; grouped by op
//! name and input shapes, each group's arithmetic intensity (FLOPs ÷ bytes), achieved FLOP/s and
//! B/s, the peak of the math unit it ran on ([`super::math_unit`]) and the device's memory
//! bandwidth ([`super::devices`]), whether it is compute- or memory-bound, and how close it came
//! to its roof:
//!
//! - roof = min(peak, intensity × bandwidth); bound = compute when the intensity is at or past the
//!   ridge (peak ÷ bandwidth), else memory;
//! - % of roof = achieved FLOP/s ÷ roof — for a memory-bound op the same as achieved B/s ÷
//!   bandwidth; for an op without FLOPs (copies) achieved B/s ÷ bandwidth.
//!
//! Only the outermost op of a family counts (`aten::linear` → `aten::addmm` counts once, at
//! `addmm`); its device time is everything launched inside it (`device_total` of torch's tree).
//! Ops whose device work is a host↔device copy are transfers, bound by the host link, and kept
//! off the chart. MFU ([`super::mfu`]) reads the same calls.

mod calls;

pub use calls::{call_costs, CallCost};

use super::devices::{device_of, Device};
use super::math_unit::{peak, Math, Unit};
use super::op_cost::Family;
use super::ops::LaunchTree;
use crate::model::{SliceKind, StrId, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// Where the peaks come from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceInfo {
    /// The trace's `deviceProperties` name.
    pub trace_name: String,
    /// The table row used ([`Device::name`]).
    pub table_name: String,
    pub source: String,
    /// Memory bandwidth of one device, GB/s.
    pub bandwidth_gbs: f64,
}

/// Compute- or memory-bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Compute,
    Memory,
}

/// Where a group sits against its roof (all `None` on an unknown device).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Rating {
    pub peak_tflops: Option<f64>,
    pub roof_tflops: Option<f64>,
    pub bound: Option<Bound>,
    /// 0..1 (can pass 1 where the byte model undercounts reuse).
    pub pct_of_roof: Option<f64>,
}

/// One dot of the chart: an op name with one set of input shapes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoofOp {
    pub name: String,
    /// `Input Dims` as torch's table writes them (`[[8, 16], [16, 4]]`).
    pub shapes: String,
    pub family: String,
    pub calls: u64,
    pub flops: f64,
    pub bytes: f64,
    pub device_ns: i64,
    pub dtype: String,
    /// The unit its peak is taken from (`tensor_core`, `simt`).
    pub unit: String,
    /// The unit its kernels ran on, when their names say (`""` when they do not): an fp32 GEMM
    /// held against TF32 (`unit`) that ran a SIMT `sgemm` says `simt` here.
    pub ran_on: String,
    /// FLOPs per byte; `None` without FLOPs.
    pub intensity: Option<f64>,
    pub achieved_tflops: f64,
    pub achieved_gbs: f64,
    #[serde(flatten)]
    pub rating: Rating,
}

/// A kernel name's roofline figures, over the calls whose op launched that kernel alone.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoofKernel {
    pub name: String,
    pub calls: u64,
    pub flops: f64,
    pub bytes: f64,
    pub device_ns: i64,
    pub dtype: String,
    pub unit: String,
    pub ran_on: String,
    pub intensity: Option<f64>,
    pub achieved_tflops: f64,
    pub achieved_gbs: f64,
    #[serde(flatten)]
    pub rating: Rating,
}

/// The roofline of a trace.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct Roofline {
    pub device: Option<DeviceInfo>,
    /// By device time descending, then name and shapes.
    pub ops: Vec<RoofOp>,
    /// Op names (the op table's rows): the same figures summed over shapes; sorted by name.
    pub by_name: Vec<RoofOp>,
    /// Kernel names; sorted by name.
    pub kernels: Vec<RoofKernel>,
    /// Device time of the ops on the roofline, and of all device work launched by an op.
    pub covered_ns: i64,
    pub launched_ns: i64,
    /// Host↔device copies, off the chart.
    pub transfer_calls: u64,
    pub transfer_ns: i64,
}

/// Rates a total against the device: roof, bound, % of roof.
pub fn rate(dev: Option<&Device>, math: Math, flops: f64, bytes: f64, ns: i64) -> Rating {
    let Some(d) = dev else {
        return Rating::default();
    };
    if ns <= 0 || bytes <= 0.0 {
        return Rating::default();
    }
    let (p, _) = peak(d, math);
    let bw = d.bandwidth_gbs();
    let secs = ns as f64 * 1e-9;
    let achieved_gbs = bytes / secs / 1e9;
    if flops <= 0.0 {
        return Rating {
            peak_tflops: Some(p),
            roof_tflops: None,
            bound: Some(Bound::Memory),
            pct_of_roof: Some(achieved_gbs / bw),
        };
    }
    let ai = flops / bytes;
    let mem_roof = ai * bw / 1e3; // TFLOPS
    let roof = p.min(mem_roof);
    let achieved = flops / secs / 1e12;
    Rating {
        peak_tflops: Some(p),
        roof_tflops: Some(roof),
        bound: Some(if mem_roof >= p {
            Bound::Compute
        } else {
            Bound::Memory
        }),
        pct_of_roof: Some(achieved / roof),
    }
}

/// Running sums of one group.
#[derive(Default)]
struct Acc {
    calls: u64,
    flops: f64,
    bytes: f64,
    ns: i64,
    family: Option<Family>,
    /// Device time per math, to pick the group's.
    math: Vec<(Math, i64)>,
    /// Device time of calls whose kernels ran on tensor cores / on SIMT.
    ran: [i64; 2],
}

impl Acc {
    fn add(&mut self, c: &CallCost, bytes: f64, flops: f64, ns: i64) {
        self.calls += 1;
        self.flops += flops;
        self.bytes += bytes;
        self.ns += ns;
        self.family.get_or_insert(c.family);
        match self.math.iter_mut().find(|x| x.0 == c.math) {
            Some(x) => x.1 += ns,
            None => self.math.push((c.math, ns)),
        }
        match c.ran_on {
            Some(Unit::TensorCore) => self.ran[0] += ns,
            Some(Unit::Simt) => self.ran[1] += ns,
            None => {}
        }
    }

    /// The unit most of its device time ran on, as its kernels' names say.
    fn ran_on(&self) -> &'static str {
        match self.ran {
            [0, 0] => "",
            [t, s] if t >= s => unit_slug(Unit::TensorCore),
            _ => unit_slug(Unit::Simt),
        }
    }

    fn math(&self) -> Math {
        self.math
            .iter()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
            .map_or(
                Math {
                    dtype: super::math_unit::Dtype::Fp32,
                    unit: Unit::Simt,
                },
                |x| x.0,
            )
    }

    fn figures(&self, dev: Option<&Device>) -> (Option<f64>, f64, f64, Math, Rating) {
        let secs = self.ns as f64 * 1e-9;
        let math = self.math();
        (
            (self.flops > 0.0 && self.bytes > 0.0).then(|| self.flops / self.bytes),
            if secs > 0.0 {
                self.flops / secs / 1e12
            } else {
                0.0
            },
            if secs > 0.0 {
                self.bytes / secs / 1e9
            } else {
                0.0
            },
            math,
            rate(dev, math, self.flops, self.bytes, self.ns),
        )
    }

    fn op(&self, name: String, shapes: String, dev: Option<&Device>) -> RoofOp {
        let (intensity, achieved_tflops, achieved_gbs, math, rating) = self.figures(dev);
        RoofOp {
            name,
            shapes,
            family: self.family.map_or("", Family::as_str).to_owned(),
            calls: self.calls,
            flops: self.flops,
            bytes: self.bytes,
            device_ns: self.ns,
            dtype: math.dtype.as_str().to_owned(),
            unit: unit_slug(math.unit).to_owned(),
            ran_on: self.ran_on().to_owned(),
            intensity,
            achieved_tflops,
            achieved_gbs,
            rating,
        }
    }
}

pub fn unit_slug(u: Unit) -> &'static str {
    match u {
        Unit::TensorCore => "tensor_core",
        Unit::Simt => "simt",
    }
}

/// The roofline of `t` on its own device (the first `deviceProperties` entry).
pub fn roofline(t: &Trace, tree: &LaunchTree, calls: &[CallCost]) -> Roofline {
    let dev = t.meta.devices.first().and_then(device_of);
    roofline_on(t, tree, calls, dev)
}

/// [`roofline`] against a given table row (`None`: achieved figures only).
pub fn roofline_on(
    t: &Trace,
    tree: &LaunchTree,
    calls: &[CallCost],
    dev: Option<&Device>,
) -> Roofline {
    let s = &t.slices;
    let mut groups: FxHashMap<(StrId, StrId), Acc> = FxHashMap::default();
    let mut names: FxHashMap<StrId, Acc> = FxHashMap::default();
    let mut kernels: FxHashMap<StrId, Acc> = FxHashMap::default();
    let mut out = Roofline {
        device: dev.map(|d| DeviceInfo {
            trace_name: t
                .meta
                .devices
                .first()
                .map(|p| p.name.clone())
                .unwrap_or_default(),
            table_name: d.name.to_owned(),
            source: d.source.to_owned(),
            bandwidth_gbs: d.bandwidth_gbs(),
        }),
        ..Default::default()
    };
    for c in calls {
        if c.device_ns <= 0 {
            continue;
        }
        if c.transfer {
            out.transfer_calls += 1;
            out.transfer_ns += c.device_ns;
            continue;
        }
        let Some(bytes) = c.bytes.filter(|b| *b > 0.0) else {
            continue;
        };
        let i = c.slice as usize;
        out.covered_ns += c.device_ns;
        groups
            .entry((s.name[i], s.input_dims[i]))
            .or_default()
            .add(c, bytes, c.flops, c.device_ns);
        names
            .entry(s.name[i])
            .or_default()
            .add(c, bytes, c.flops, c.device_ns);
        if c.only_gpu != NONE && s.kind[c.only_gpu as usize] == SliceKind::Kernel {
            let k = c.only_gpu as usize;
            kernels
                .entry(s.name[k])
                .or_default()
                .add(c, bytes, c.flops, s.dur[k]);
        }
    }
    out.launched_ns = (0..tree.slice.len())
        .filter(|&e| tree.parent[e] == NONE)
        .map(|e| tree.device_net[e])
        .sum();
    out.ops = groups
        .into_iter()
        .map(|((n, d), a)| {
            a.op(
                t.str(n).to_owned(),
                super::flops::torch_shape_text(t.str(d)),
                dev,
            )
        })
        .collect();
    crate::sort::by(&mut out.ops, |a, b| {
        b.device_ns
            .cmp(&a.device_ns)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.shapes.cmp(&b.shapes))
    });
    out.by_name = names
        .into_iter()
        .map(|(n, a)| a.op(t.str(n).to_owned(), String::new(), dev))
        .collect();
    crate::sort::by(&mut out.by_name, |a, b| a.name.cmp(&b.name));
    out.kernels = kernels
        .into_iter()
        .map(|(n, a)| {
            let o = a.op(t.str(n).to_owned(), String::new(), dev);
            RoofKernel {
                name: o.name,
                calls: o.calls,
                flops: o.flops,
                bytes: o.bytes,
                device_ns: o.device_ns,
                dtype: o.dtype,
                unit: o.unit,
                ran_on: o.ran_on,
                intensity: o.intensity,
                achieved_tflops: o.achieved_tflops,
                achieved_gbs: o.achieved_gbs,
                rating: o.rating,
            }
        })
        .collect();
    crate::sort::by(&mut out.kernels, |a, b| a.name.cmp(&b.name));
    out
}

impl Roofline {
    /// The op table row's figures (summed over shapes), by name.
    pub fn op(&self, name: &str) -> Option<&RoofOp> {
        self.by_name
            .binary_search_by(|x| x.name.as_str().cmp(name))
            .ok()
            .map(|k| &self.by_name[k])
    }

    /// A kernel's figures, by name.
    pub fn kernel(&self, name: &str) -> Option<&RoofKernel> {
        self.kernels
            .binary_search_by(|x| x.name.as_str().cmp(name))
            .ok()
            .map(|k| &self.kernels[k])
    }

    /// The ridge point of a math (FLOPs per byte where the roofs meet).
    pub fn ridge(dev: &Device, math: Math) -> f64 {
        peak(dev, math).0 * 1e3 / dev.bandwidth_gbs()
    }
}

/// The op slices of one chart group (op name and torch's shape text, as in [`RoofOp`]), in slice
/// order: what "show in timeline" steps through.
pub fn group_slices(t: &Trace, name: &str, shapes: &str) -> Vec<u32> {
    let s = &t.slices;
    let Some(id) = t.strings.get(name) else {
        return Vec::new();
    };
    let mut memo: FxHashMap<StrId, bool> = FxHashMap::default();
    (0..s.len())
        .filter(|&i| s.name[i] == id && s.kind[i] == SliceKind::CpuOp)
        .filter(|&i| {
            *memo.entry(s.input_dims[i]).or_insert_with(|| {
                shapes.is_empty()
                    || super::flops::torch_shape_text(t.str(s.input_dims[i])) == shapes
            })
        })
        .map(|i| i as u32)
        .collect()
}

/// The math a group was held against, from its `dtype` / `unit` strings.
pub fn math_of(dtype: &str, unit: &str) -> Option<Math> {
    use super::math_unit::Dtype;
    let dtype = match dtype {
        "fp64" => Dtype::Fp64,
        "fp32" => Dtype::Fp32,
        "tf32" => Dtype::Tf32,
        "bf16" => Dtype::Bf16,
        "fp16" => Dtype::Fp16,
        "fp8" => Dtype::Fp8,
        "int8" => Dtype::Int8,
        _ => return None,
    };
    let unit = match unit {
        "tensor_core" => Unit::TensorCore,
        _ => Unit::Simt,
    };
    Some(Math { dtype, unit })
}

impl Roofline {
    /// The same groups rated against another table row (a user's choice where the trace's
    /// device is unknown or wrong): FLOPs, bytes and times stay, peaks and roofs change.
    pub fn rated_on(&self, dev: &Device) -> Roofline {
        let re = |dtype: &str, unit: &str, flops: f64, bytes: f64, ns: i64| {
            math_of(dtype, unit)
                .map_or_else(Rating::default, |m| rate(Some(dev), m, flops, bytes, ns))
        };
        let mut out = self.clone();
        out.device = Some(DeviceInfo {
            trace_name: self
                .device
                .as_ref()
                .map(|d| d.trace_name.clone())
                .unwrap_or_default(),
            table_name: dev.name.to_owned(),
            source: dev.source.to_owned(),
            bandwidth_gbs: dev.bandwidth_gbs(),
        });
        for o in out.ops.iter_mut().chain(out.by_name.iter_mut()) {
            o.rating = re(&o.dtype, &o.unit, o.flops, o.bytes, o.device_ns);
        }
        for k in &mut out.kernels {
            k.rating = re(&k.dtype, &k.unit, k.flops, k.bytes, k.device_ns);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rating_is_the_lower_roof() {
        let Some(a100) = super::super::devices::device_for("NVIDIA A100-SXM4-80GB") else {
            panic!("in the table")
        };
        let tf32 = Math {
            dtype: super::super::math_unit::Dtype::Tf32,
            unit: Unit::TensorCore,
        };
        // 1 GFLOP over 1 MB in 10 µs: intensity 1000 > ridge 156e12/2039e9 ≈ 76.5: compute
        // bound; achieved 100 TFLOPS of 156.
        let r = rate(Some(a100), tf32, 1e9, 1e6, 10_000);
        assert_eq!(r.bound, Some(Bound::Compute));
        assert!((r.pct_of_roof.unwrap_or(0.0) - 100.0 / 156.0).abs() < 1e-9);
        // 1 MFLOP over 100 MB in 100 µs: memory bound; 1 TB/s of 2.039.
        let r = rate(Some(a100), tf32, 1e6, 1e8, 100_000);
        assert_eq!(r.bound, Some(Bound::Memory));
        assert!((r.pct_of_roof.unwrap_or(0.0) - 1000.0 / 2039.0).abs() < 1e-9);
        // A copy: no FLOPs, bandwidth only.
        let r = rate(Some(a100), tf32, 0.0, 2.039e6, 1_000);
        assert!((r.pct_of_roof.unwrap_or(0.0) - 1.0).abs() < 1e-9);
    }
}
