//! FLOPs and bytes moved of one op call, by op family, from the shapes and dtypes the trace
//! records (`Input Dims`, `Input type`, `Concrete Inputs`): the inputs of the roofline
//! ([`super::roofline`]) and of MFU ([`super::mfu`]).
//!
//! - **FLOPs** of GEMMs (`mm`, `addmm`, `bmm`, `baddbmm`, `_scaled_mm`: 2·M·K·N, times the
//!   batch), convolutions (forward and `convolution_backward`) and attention (the
//!   `scaled_dot_product_attention` family, forward 2·B·H·Sq·Sk·(D+Dv), backward
//!   B·H·Sq·Sk·(6·D+4·Dv)) are `torch.utils.flop_counter`'s formulas, checked against
//!   `FlopCounterMode` on the same shapes (`tests/roofline.rs`). Every other family counts one
//!   FLOP per element (of the output for elementwise ops, of the input for reductions, softmax
//!   and norms): a lower bound that places them where they belong on a roofline, orders of
//!   magnitude left of the ridge. Copies, embeddings and fused optimizers count none.
//! - **Bytes** are the least the op must move: every tensor input read once, every output
//!   written once (an in-place op writes its first input back). Checked against the tensors'
//!   own `nbytes` on CPU (`tests/roofline.rs`). Caches and re-reads are not modelled: a real
//!   kernel moves at least this much, so achieved bandwidth from these bytes is a lower bound.
//! - `aten::linear`, `aten::matmul`, `aten::to`, `aten::contiguous` and the like have no family
//!   of their own: they dispatch to ops that do, and only the outermost op of a family is
//!   counted, so nothing is counted twice.

mod matrix;
mod memory;
mod names;

use matrix::{attention, conv, gemm};
use memory::{copy, elementwise, gather, norm, optimizer, reduction};
use names::*;
use serde::Serialize;

/// What kind of work an op is, for its formulas and the roofline's colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Gemm,
    Conv,
    Attention,
    Elementwise,
    Reduction,
    Norm,
    Copy,
    Embedding,
    Optimizer,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Gemm => "gemm",
            Family::Conv => "conv",
            Family::Attention => "attention",
            Family::Elementwise => "elementwise",
            Family::Reduction => "reduction",
            Family::Norm => "norm",
            Family::Copy => "copy",
            Family::Embedding => "embedding",
            Family::Optimizer => "optimizer",
        }
    }

    /// GEMM, convolution and attention: the families whose FLOPs can run on tensor cores.
    pub fn is_matrix(self) -> bool {
        matches!(self, Family::Gemm | Family::Conv | Family::Attention)
    }
}

/// One input of an op as the trace shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A tensor's shape (`[]` is a 0-dim tensor, or a non-tensor: see `dtype`).
    Tensor(Vec<i64>),
    /// A TensorList.
    List(Vec<Vec<i64>>),
    /// Anything the dims do not describe.
    Other,
}

/// The shapes, dtypes and concrete values of one op call.
#[derive(Debug, Clone, Default)]
pub struct Call {
    pub dims: Vec<Arg>,
    /// `Input type` per input (`float`, `c10::BFloat16`, `Scalar`, `TensorList`, ``).
    pub types: Vec<String>,
    /// `Concrete Inputs` per input (`[1, 1]`, `False`, ``), empty when not recorded.
    pub concrete: Vec<String>,
}

/// FLOPs and bytes of one call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cost {
    pub family: Family,
    pub flops: f64,
    pub bytes: f64,
}

/// Parses `Input Dims` text (`[[384,48],[48,384],[],[[2,3],[4]]]`) into one [`Arg`] per input.
pub fn parse_args(text: &str) -> Vec<Arg> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let Some(items) = v.as_array() else {
        return Vec::new();
    };
    let ints = |v: &serde_json::Value| -> Option<Vec<i64>> {
        v.as_array()?
            .iter()
            .map(serde_json::Value::as_i64)
            .collect()
    };
    items
        .iter()
        .map(|x| {
            if let Some(d) = ints(x) {
                return Arg::Tensor(d);
            }
            match x.as_array() {
                Some(list) => list
                    .iter()
                    .map(ints)
                    .collect::<Option<Vec<_>>>()
                    .map_or(Arg::Other, Arg::List),
                None => Arg::Other,
            }
        })
        .collect()
}

/// Parses a JSON list of strings (`Input type`, `Concrete Inputs`).
pub fn parse_strings(text: &str) -> Vec<String> {
    serde_json::from_str::<Vec<serde_json::Value>>(text)
        .map(|v| {
            v.into_iter()
                .map(|x| match x {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Bytes per element of a torch dtype as `Input type` writes it; `None` for non-tensors.
pub fn elem_size(ty: &str) -> Option<f64> {
    Some(match ty {
        "float" | "int" | "unsigned int" => 4.0,
        "double" | "long int" | "long" | "int64_t" | "c10::complex<float>" => 8.0,
        "c10::complex<double>" => 16.0,
        "c10::Half" | "c10::BFloat16" | "short int" | "short" | "c10::complex<c10::Half>" => 2.0,
        "bool" | "unsigned char" | "signed char" | "char" => 1.0,
        t if t.starts_with("c10::Float8") || t.starts_with("c10::Float4") => 1.0,
        t if t.starts_with("c10::quint") || t.starts_with("c10::qint") => 1.0,
        _ => return None,
    })
}

/// Element size of a torch `ScalarType` code (`Concrete Inputs` of `to`/`_to_copy`).
pub(crate) fn scalar_type_size(code: &str) -> Option<f64> {
    Some(match code.trim().parse::<u32>().ok()? {
        0 | 1 | 11 | 12 | 13 => 1.0,
        2 | 5 | 15 => 2.0,
        3 | 6 | 14 => 4.0,
        4 | 7 | 9 => 8.0,
        8 | 10 => 16.0,
        23..=28 => 1.0,
        _ => return None,
    })
}

pub(crate) fn numel(d: &[i64]) -> f64 {
    d.iter().map(|&x| x.max(0) as f64).product()
}

/// Broadcast shape of several shapes (numpy rules; mismatches keep the larger).
pub(crate) fn broadcast(shapes: &[&[i64]]) -> Vec<i64> {
    let n = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    (0..n)
        .map(|k| {
            shapes
                .iter()
                .filter_map(|s| {
                    let off = n - s.len();
                    (k >= off).then(|| s[k - off])
                })
                .max()
                .unwrap_or(1)
        })
        .collect()
}

impl Call {
    /// Shape of input `k` when it is a tensor with a known dtype.
    pub(crate) fn tensor(&self, k: usize) -> Option<(&[i64], f64)> {
        match (self.dims.get(k)?, self.types.get(k)) {
            (Arg::Tensor(d), Some(t)) => Some((d, elem_size(t)?)),
            _ => None,
        }
    }

    /// Bytes of input `k` (a tensor or a tensor list), 0 when it is neither.
    pub(crate) fn bytes_of(&self, k: usize) -> f64 {
        let es = self
            .types
            .get(k)
            .and_then(|t| elem_size(t))
            .or_else(|| self.list_elem(k));
        match (self.dims.get(k), es) {
            (Some(Arg::Tensor(d)), Some(e)) => numel(d) * e,
            (Some(Arg::List(l)), Some(e)) => l.iter().map(|d| numel(d) * e).sum(),
            _ => 0.0,
        }
    }

    /// A TensorList's dtype is not written; take the first typed tensor input's.
    fn list_elem(&self, k: usize) -> Option<f64> {
        matches!(self.dims.get(k), Some(Arg::List(_)))
            .then(|| self.types.iter().find_map(|t| elem_size(t)))
            .flatten()
            .or(matches!(self.dims.get(k), Some(Arg::List(_))).then_some(4.0))
    }

    /// Bytes of every tensor (and tensor list) input.
    pub(crate) fn inputs_bytes(&self) -> f64 {
        (0..self.dims.len()).map(|k| self.bytes_of(k)).sum()
    }

    /// Integers of `Concrete Inputs[k]` (`[1, 1]` → [1, 1], `2` → [2]).
    pub(crate) fn ints(&self, k: usize) -> Option<Vec<i64>> {
        let s = self.concrete.get(k)?;
        let v: Vec<i64> = s
            .split(|c: char| !(c.is_ascii_digit() || c == '-'))
            .filter(|x| !x.is_empty() && *x != "-")
            .filter_map(|x| x.parse().ok())
            .collect();
        (!v.is_empty() || s.trim() == "[]").then_some(v)
    }

    pub(crate) fn flag(&self, k: usize) -> Option<bool> {
        match self.concrete.get(k)?.trim() {
            "True" | "true" | "1" => Some(true),
            "False" | "false" | "0" => Some(false),
            _ => None,
        }
    }
}

/// The op name without `aten::` and overload or in-place suffixes (`add_` → `add`, and whether
/// it was in place).
fn base(name: &str) -> Option<(&str, bool)> {
    let op = name.strip_prefix("aten::")?;
    let op = op.split('.').next().unwrap_or(op);
    if let Some(b) = op.strip_suffix('_') {
        if !b.starts_with('_') || b.ends_with("adam") || b.ends_with("adamw") {
            return Some((b, true));
        }
    }
    Some((op, false))
}

/// The family of an op name, `None` for ops that only dispatch or have no formula here.
pub fn family_of(name: &str) -> Option<Family> {
    let (op, _) = base(name)?;
    let is = |l: &[&str]| l.contains(&op);
    Some(
        if matches!(op, "mm" | "addmm" | "bmm" | "baddbmm" | "_scaled_mm") {
            Family::Gemm
        } else if is(CONVS) || op == "convolution_backward" {
            Family::Conv
        } else if is(ATTENTION)
            || is(ATTENTION_BACKWARD)
            || is(ATTENTION_BSHD)
            || is(ATTENTION_BSHD_BACKWARD)
        {
            Family::Attention
        } else if is(ELEMENTWISE) || is(WRITE_ONLY) {
            Family::Elementwise
        } else if is(REDUCTIONS) || is(SOFTMAX) {
            Family::Reduction
        } else if is(NORMS) || is(NORM_BACKWARD) {
            Family::Norm
        } else if is(COPIES) {
            Family::Copy
        } else if is(GATHERS) || op == "embedding_dense_backward" {
            Family::Embedding
        } else if op.starts_with("_fused_adam") || op.starts_with("_foreach_") {
            Family::Optimizer
        } else {
            return None;
        },
    )
}

/// Whether an op's FLOPs are the ones MFU counts: those torch counts — its key_averages `flops`
/// column (GEMMs, `conv2d`, `mul`, `add`) and `FlopCounterMode` (attention, convolution
/// backward) — so the MFU of a trace is the one a user computes from torch's own numbers.
pub fn counts_for_mfu(name: &str) -> bool {
    match family_of(name) {
        Some(Family::Gemm | Family::Conv | Family::Attention) => true,
        // Exactly torch's names: `computeFlops` counts `aten::mul` / `aten::add`, not `mul_`.
        Some(Family::Elementwise) => matches!(base(name), Some(("mul" | "add", false))),
        _ => false,
    }
}

/// FLOPs and bytes of one call of `name`; `None` without a family or without the shapes it needs.
pub fn cost(name: &str, c: &Call) -> Option<Cost> {
    let family = family_of(name)?;
    let (op, in_place) = base(name)?;
    let (flops, bytes) = match family {
        Family::Gemm => gemm(op, c)?,
        Family::Conv => conv(op, c)?,
        Family::Attention => attention(op, c)?,
        Family::Elementwise => elementwise(op, in_place, c)?,
        Family::Reduction => reduction(op, c)?,
        Family::Norm => norm(op, c)?,
        Family::Copy => copy(op, c)?,
        Family::Embedding => gather(op, c)?,
        Family::Optimizer => optimizer(op, c)?,
    };
    (flops.is_finite() && bytes.is_finite()).then_some(Cost {
        family,
        flops,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(dims: &str, types: &str, concrete: &str) -> Call {
        Call {
            dims: parse_args(dims),
            types: parse_strings(types),
            concrete: parse_strings(concrete),
        }
    }

    #[test]
    fn families_by_name() {
        assert_eq!(family_of("aten::addmm"), Some(Family::Gemm));
        assert_eq!(family_of("aten::add_"), Some(Family::Elementwise));
        assert_eq!(family_of("aten::add.Tensor"), Some(Family::Elementwise));
        assert_eq!(family_of("aten::_fused_adamw_"), Some(Family::Optimizer));
        assert_eq!(family_of("aten::linear"), None);
        assert_eq!(family_of("aten::to"), None);
        assert_eq!(family_of("aten::_to_copy"), Some(Family::Copy));
        assert_eq!(family_of("aten::_softmax"), Some(Family::Reduction));
        assert_eq!(family_of("cudaLaunchKernel"), None);
        assert!(counts_for_mfu("aten::mul"));
        assert!(!counts_for_mfu("aten::relu"));
    }

    /// Shapes whose answers are known by hand.
    #[test]
    fn formulas_on_known_shapes() {
        let c = call("[[256,512],[512,128]]", r#"["float","float"]"#, "");
        let x = cost("aten::mm", &c).map(|x| (x.flops, x.bytes));
        assert_eq!(
            x,
            Some((
                2.0 * 256.0 * 512.0 * 128.0,
                4.0 * (256.0 * 512.0 + 512.0 * 128.0 + 256.0 * 128.0)
            ))
        );
        // In place: reads both, writes the first back.
        let c = call("[[8,4],[8,4],[]]", r#"["float","float","Scalar"]"#, "");
        let x = cost("aten::add_", &c).map(|x| (x.flops, x.bytes));
        assert_eq!(x, Some((32.0, 3.0 * 32.0 * 4.0)));
        // `mul.out(self, other, out)` as the A100 trace writes it: the third tensor is written.
        let c = call("[[4,8],[],[4,8]]", r#"["float","double","float"]"#, "");
        let x = cost("aten::mul", &c).map(|x| (x.flops, x.bytes));
        assert_eq!(x, Some((32.0, 32.0 * 4.0 + 8.0 + 32.0 * 4.0)));
        // Comparison writes bools.
        let c = call("[[10],[10]]", r#"["c10::BFloat16","c10::BFloat16"]"#, "");
        assert_eq!(cost("aten::eq", &c).map(|x| x.bytes), Some(40.0 + 10.0));
        // Reduce all: a scalar out.
        let c = call("[[4,5]]", r#"["float"]"#, "");
        assert_eq!(cost("aten::sum", &c).map(|x| x.bytes), Some(80.0 + 4.0));
        // Transposed conv: output (in−1)·s − 2p + d(k−1) + op + 1 = 7 on an input of 4.
        let c = call(
            "[[1,2,4,4],[2,3,3,3],[],[],[],[],[],[],[]]",
            r#"["float","float","","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar"]"#,
            r#"["","","","[2, 2]","[1, 1]","[1, 1]","True","[0, 0]","1"]"#,
        );
        let x = cost("aten::convolution", &c).map(|x| (x.flops, x.bytes));
        let out = 3.0 * 7.0 * 7.0;
        assert_eq!(
            x,
            Some((2.0 * 2.0 * 3.0 * 9.0 * 16.0, 4.0 * (32.0 + 54.0 + out)))
        );
    }
}
