//! The roofline (DESIGN §4 "Achieved TFLOPS / MFU", the roofline beside it): for every op call
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

use super::devices::{device_of, Device};
use super::math_unit::{input_dtype, kernel_math, op_math, peak, KernelMath, Math, Unit};
use super::op_cost::{cost, counts_for_mfu, family_of, parse_args, parse_strings, Call, Family};
use super::ops::OpTree;
use crate::model::{SliceKind, StrId, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// One op call with a family: the unit of the roofline and of MFU.
#[derive(Debug, Clone)]
pub struct CallCost {
    pub slice: u32,
    pub family: Family,
    /// Formula FLOPs (0 where the family counts none).
    pub flops: f64,
    /// FLOPs MFU counts: the trace's own `flops` arg where written, else the formula's for the
    /// families torch counts ([`counts_for_mfu`]), else 0.
    pub mfu_flops: f64,
    pub from_trace_arg: bool,
    /// `None` when the shapes needed are missing.
    pub bytes: Option<f64>,
    /// Device time launched inside the call, ns (torch's overhead repeats left out).
    pub device_ns: i64,
    pub math: Math,
    /// The unit its own kernels ran on, when their names say (`math` can differ: see
    /// [`call_costs`] on TF32).
    pub ran_on: Option<Unit>,
    /// The dtype its inputs say.
    pub input: Option<super::math_unit::Dtype>,
    /// GPU slices launched inside it, and the only one when there is exactly one.
    pub gpu_slices: u32,
    pub only_gpu: u32,
    /// Its device work includes a host↔device copy.
    pub transfer: bool,
}

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

/// The entry of the op that owns a launch call (the kept event enclosing it).
fn owner(t: &Trace, tree: &OpTree, l: u32) -> u32 {
    let le = tree.entry_of[l as usize];
    if le != NONE {
        return tree.parent[le as usize];
    }
    let mut p = t.slices.parent[l as usize];
    while p != NONE {
        let e = tree.entry_of[p as usize];
        if e != NONE {
            return e;
        }
        p = t.slices.parent[p as usize];
    }
    NONE
}

/// Every outermost family op call with its cost, in slice order.
pub fn call_costs(t: &Trace, tree: &OpTree) -> Vec<CallCost> {
    let s = &t.slices;
    let m = tree.slice.len();
    let mut fam: FxHashMap<StrId, Option<Family>> = FxHashMap::default();
    let mut point_of = vec![NONE; m];
    for e in 0..m {
        let p = tree.parent[e];
        if p != NONE && point_of[p as usize] != NONE {
            point_of[e] = point_of[p as usize];
            continue;
        }
        let i = tree.slice[e] as usize;
        if s.kind[i] != SliceKind::CpuOp {
            continue;
        }
        let f = *fam
            .entry(s.name[i])
            .or_insert_with(|| family_of(t.str(s.name[i])));
        if f.is_some() {
            point_of[e] = e as u32;
        }
    }
    // The device work of each point: the longest matmul kernel's name, counts, transfers.
    #[derive(Default, Clone, Copy)]
    struct Dev {
        best: Option<(i64, KernelMath)>,
        n: u32,
        only: u32,
        transfer: bool,
    }
    let mut dev: FxHashMap<u32, Dev> = FxHashMap::default();
    let mut km_memo: FxHashMap<StrId, KernelMath> = FxHashMap::default();
    let g = &t.gpu;
    for r in 0..g.slice.len() {
        let (k, l) = (g.slice[r] as usize, g.launch[r]);
        if l == NONE || !s.kind[k].is_gpu_work() {
            continue;
        }
        let o = owner(t, tree, l);
        if o == NONE || point_of[o as usize] == NONE {
            continue;
        }
        let d = dev.entry(point_of[o as usize]).or_default();
        d.n += 1;
        d.only = k as u32;
        match s.kind[k] {
            SliceKind::Memcpy => {
                let n = t.str(s.name[k]);
                if n.contains("HtoD") || n.contains("DtoH") || n.contains("Pageable") {
                    d.transfer = true;
                }
            }
            SliceKind::Kernel => {
                let km = *km_memo
                    .entry(s.name[k])
                    .or_insert_with(|| kernel_math(t.str(s.name[k])));
                if km.unit.is_some() && d.best.is_none_or(|b| s.dur[k] > b.0) {
                    d.best = Some((s.dur[k], km));
                }
            }
            _ => {}
        }
    }
    let mut out: Vec<CallCost> = Vec::new();
    for e in 0..m {
        if point_of[e] != e as u32 {
            continue;
        }
        let i = tree.slice[e] as usize;
        let name = t.str(s.name[i]);
        let Some(Some(family)) = fam.get(&s.name[i]).copied() else {
            continue;
        };
        let needs_concrete = matches!(
            family,
            Family::Conv | Family::Reduction | Family::Copy | Family::Embedding
        );
        let call = Call {
            dims: parse_args(t.str(s.input_dims[i])),
            types: parse_strings(t.str(s.input_types[i])),
            concrete: if needs_concrete {
                concrete_inputs(&t.slice_args_stored(i))
            } else {
                Vec::new()
            },
        };
        let c = cost(name, &call);
        let arg = t
            .flops
            .slice
            .binary_search(&(i as u32))
            .ok()
            .map(|r| t.flops.flops[r]);
        let flops = c.map_or(0.0, |c| c.flops);
        let mfu_flops = match arg {
            Some(f) => f,
            None if counts_for_mfu(name) => flops,
            None => 0.0,
        };
        let d = dev.get(&(e as u32)).copied().unwrap_or_default();
        let input = input_dtype(t.str(s.input_types[i]));
        let km = d.best.map(|b| b.1).unwrap_or_default();
        out.push(CallCost {
            slice: i as u32,
            family,
            flops,
            mfu_flops,
            from_trace_arg: arg.is_some(),
            bytes: c.map(|c| c.bytes),
            device_ns: (tree.device_total[e] - tree.repeated_device[e]).max(0),
            math: op_math(family.is_matrix(), input, km),
            ran_on: km.unit,
            input,
            gpu_slices: d.n,
            only_gpu: if d.n == 1 { d.only } else { NONE },
            transfer: d.transfer,
        });
    }
    tf32_mode(&mut out);
    out
}

/// TF32 is a process-wide switch (`torch.backends.cuda.matmul.allow_tf32` for GEMMs,
/// `torch.backends.cudnn.allow_tf32` for convolutions and attention): where any fp32 op of a
/// family ran a TF32 tensor-core kernel, the switch was on for that family, and every fp32 op of
/// it is held against the TF32 peak — also one that cuBLAS's heuristics still ran as a SIMT
/// `sgemm`, which then shows far from its roof instead of near a lower one. (On the A100
/// rank-0-of-16 trace 5 of 25 GEMM calls, 30 % of the GEMM FLOPs, ran `ampere_sgemm_128x64_nn`.)
fn tf32_mode(calls: &mut [CallCost]) {
    use super::math_unit::Dtype;
    let fp32_in = |c: &CallCost| matches!(c.input, Some(Dtype::Fp32) | None);
    let on = |fam: Family, calls: &[CallCost]| {
        calls.iter().any(|c| {
            c.family == fam
                && fp32_in(c)
                && c.ran_on == Some(Unit::TensorCore)
                && c.math.dtype == Dtype::Tf32
        })
    };
    for fam in [Family::Gemm, Family::Conv, Family::Attention] {
        if !on(fam, calls) {
            continue;
        }
        for c in calls.iter_mut() {
            if c.family == fam && fp32_in(c) && c.math.dtype == Dtype::Fp32 {
                c.math = Math {
                    dtype: Dtype::Tf32,
                    unit: Unit::TensorCore,
                };
            }
        }
    }
}

/// `Concrete Inputs` of a stored args object.
fn concrete_inputs(args: &str) -> Vec<String> {
    let Some(at) = args.find("\"Concrete Inputs\"") else {
        return Vec::new();
    };
    let rest = &args[at + "\"Concrete Inputs\"".len()..];
    let Some(start) = rest.find('[') else {
        return Vec::new();
    };
    // The list is flat strings: it ends at the first `]` outside a string.
    let b = rest.as_bytes();
    let mut in_str = false;
    let mut esc = false;
    for (k, &c) in b.iter().enumerate().skip(start) {
        match (in_str, esc, c) {
            (true, true, _) => esc = false,
            (true, false, b'\\') => esc = true,
            (true, false, b'"') => in_str = false,
            (false, _, b'"') => in_str = true,
            (false, _, b']') => return parse_strings(&rest[start..=k]),
            _ => {}
        }
    }
    Vec::new()
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
pub fn roofline(t: &Trace, tree: &OpTree, calls: &[CallCost]) -> Roofline {
    let dev = t.meta.devices.first().and_then(device_of);
    roofline_on(t, tree, calls, dev)
}

/// [`roofline`] against a given table row (`None`: achieved figures only).
pub fn roofline_on(t: &Trace, tree: &OpTree, calls: &[CallCost], dev: Option<&Device>) -> Roofline {
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
        .map(|e| tree.device_total[e] - tree.repeated_device[e])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concrete_inputs_are_read_from_the_stored_args() {
        let a = r#"{"Concrete Inputs": ["", "[2, 2]", "a]b", "False"], "Fwd thread id": 0}"#;
        assert_eq!(concrete_inputs(a), vec!["", "[2, 2]", "a]b", "False"]);
        assert!(concrete_inputs("{}").is_empty());
    }

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
