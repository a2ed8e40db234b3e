//! The call costs the roofline and MFU share: every outermost op call of a known family with
//! its FLOPs, bytes, device time and the math it ran ([`call_costs`]).

use super::super::math_unit::Dtype;
use super::super::math_unit::{input_dtype, kernel_math, op_math, KernelMath, Math, Unit};
use super::super::op_cost::{
    cost, counts_for_mfu, family_of, parse_args, parse_strings, Call, Cost, Family,
};
use super::super::ops::LaunchTree;
use crate::model::{SliceKind, StrId, Trace, NONE};
use rustc_hash::FxHashMap;

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
    pub input: Option<super::super::math_unit::Dtype>,
    /// GPU slices launched inside it, and the only one when there is exactly one.
    pub gpu_slices: u32,
    pub only_gpu: u32,
    /// Its device work includes a host↔device copy.
    pub transfer: bool,
}

/// The entry of the op that owns a launch call (the kept event enclosing it).
fn owner(t: &Trace, tree: &LaunchTree, l: u32) -> u32 {
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

/// Every outermost family op call with its cost, in slice order. Each list is made at its size:
/// on a 304 MB trace the calls are a fifth of a million, and this ran at a reader worker's peak.
pub fn call_costs(t: &Trace, tree: &LaunchTree) -> Vec<CallCost> {
    let s = &t.slices;
    let m = tree.slice.len();
    let mut fam: FxHashMap<StrId, Option<Family>> = FxHashMap::default();
    // The point (outermost family call) above each entry, as its number among the points.
    let mut point_of = vec![NONE; m];
    let mut points: Vec<u32> = Vec::new();
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
            point_of[e] = points.len() as u32;
            points.push(e as u32);
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
    let mut dev: Vec<Dev> = vec![Dev::default(); points.len()];
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
        let d = &mut dev[point_of[o as usize] as usize];
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
    // A loop calls the same ops with the same shapes and dtypes every step: their cost is parsed
    // and computed once per (name, shapes, dtypes), except for the families whose cost reads each
    // call's concrete inputs.
    let mut cost_memo: FxHashMap<(StrId, StrId, StrId), Option<Cost>> = FxHashMap::default();
    let mut dtype_memo: FxHashMap<StrId, Option<Dtype>> = FxHashMap::default();
    drop(point_of);
    let mut out: Vec<CallCost> = Vec::with_capacity(points.len());
    for (&e, d) in points.iter().zip(&dev) {
        let (e, d) = (e as usize, *d);
        let i = tree.slice[e] as usize;
        let name = t.str(s.name[i]);
        let Some(Some(family)) = fam.get(&s.name[i]).copied() else {
            continue;
        };
        let needs_concrete = matches!(
            family,
            Family::Conv | Family::Reduction | Family::Copy | Family::Embedding
        );
        let call = |concrete: Vec<String>| Call {
            dims: parse_args(t.str(s.input_dims[i])),
            types: parse_strings(t.str(s.input_types[i])),
            concrete,
        };
        let c = if needs_concrete {
            cost(name, &call(concrete_inputs(&t.slice_args_stored(i))))
        } else {
            *cost_memo
                .entry((s.name[i], s.input_dims[i], s.input_types[i]))
                .or_insert_with(|| cost(name, &call(Vec::new())))
        };
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
        let input = *dtype_memo
            .entry(s.input_types[i])
            .or_insert_with(|| input_dtype(t.str(s.input_types[i])));
        let km = d.best.map(|b| b.1).unwrap_or_default();
        out.push(CallCost {
            slice: i as u32,
            family,
            flops,
            mfu_flops,
            from_trace_arg: arg.is_some(),
            bytes: c.map(|c| c.bytes),
            device_ns: tree.device_net[e].max(0),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concrete_inputs_are_read_from_the_stored_args() {
        let a = r#"{"Concrete Inputs": ["", "[2, 2]", "a]b", "False"], "Fwd thread id": 0}"#;
        assert_eq!(concrete_inputs(a), vec!["", "[2, 2]", "a]b", "False"]);
        assert!(concrete_inputs("{}").is_empty());
    }
}
