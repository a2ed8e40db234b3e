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
fn scalar_type_size(code: &str) -> Option<f64> {
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

fn numel(d: &[i64]) -> f64 {
    d.iter().map(|&x| x.max(0) as f64).product()
}

/// Broadcast shape of several shapes (numpy rules; mismatches keep the larger).
fn broadcast(shapes: &[&[i64]]) -> Vec<i64> {
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
    fn tensor(&self, k: usize) -> Option<(&[i64], f64)> {
        match (self.dims.get(k)?, self.types.get(k)) {
            (Arg::Tensor(d), Some(t)) => Some((d, elem_size(t)?)),
            _ => None,
        }
    }

    /// Bytes of input `k` (a tensor or a tensor list), 0 when it is neither.
    fn bytes_of(&self, k: usize) -> f64 {
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
    fn inputs_bytes(&self) -> f64 {
        (0..self.dims.len()).map(|k| self.bytes_of(k)).sum()
    }

    /// Integers of `Concrete Inputs[k]` (`[1, 1]` → [1, 1], `2` → [2]).
    fn ints(&self, k: usize) -> Option<Vec<i64>> {
        let s = self.concrete.get(k)?;
        let v: Vec<i64> = s
            .split(|c: char| !(c.is_ascii_digit() || c == '-'))
            .filter(|x| !x.is_empty() && *x != "-")
            .filter_map(|x| x.parse().ok())
            .collect();
        (!v.is_empty() || s.trim() == "[]").then_some(v)
    }

    fn flag(&self, k: usize) -> Option<bool> {
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

const ELEMENTWISE: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "rsub",
    "neg",
    "abs",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "sqrt",
    "rsqrt",
    "pow",
    "reciprocal",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "relu6",
    "leaky_relu",
    "elu",
    "selu",
    "gelu",
    "silu",
    "mish",
    "hardswish",
    "hardsigmoid",
    "hardtanh",
    "softplus",
    "clamp",
    "clamp_min",
    "clamp_max",
    "clip",
    "threshold",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "leaky_relu_backward",
    "hardswish_backward",
    "elu_backward",
    "where",
    "masked_fill",
    "maximum",
    "minimum",
    "eq",
    "ne",
    "lt",
    "gt",
    "le",
    "ge",
    "logical_and",
    "logical_or",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_not",
    "addcmul",
    "addcdiv",
    "lerp",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
    "erf",
    "erfinv",
    "fmod",
    "remainder",
    "square",
    "native_dropout",
    "native_dropout_backward",
    "lt",
    "isnan",
    "nan_to_num",
    "copysign",
    "atan2",
    "hypot",
];
/// Elementwise ops with two operands (`self`, `other`; `alpha` and the like are scalars after
/// them). A tensor past an op's operands is its `out=` argument: written, not read.
const BINARY: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "rsub",
    "pow",
    "maximum",
    "minimum",
    "eq",
    "ne",
    "lt",
    "gt",
    "le",
    "ge",
    "logical_and",
    "logical_or",
    "bitwise_and",
    "bitwise_or",
    "fmod",
    "remainder",
    "atan2",
    "hypot",
    "copysign",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "leaky_relu_backward",
    "hardswish_backward",
    "native_dropout_backward",
];
/// Elementwise ops with three operands.
const TERNARY: &[&str] = &[
    "where",
    "addcmul",
    "addcdiv",
    "lerp",
    "masked_fill",
    "clamp",
    "clip",
];
/// Elementwise ops whose tensors may sit anywhere in the argument list.
const ANY_ARITY: &[&str] = &["elu_backward"];

/// Elementwise ops that write without reading.
const WRITE_ONLY: &[&str] = &["fill", "zero", "uniform", "normal", "random", "bernoulli"];
const COMPARISONS: &[&str] = &[
    "eq",
    "ne",
    "lt",
    "gt",
    "le",
    "ge",
    "logical_and",
    "logical_or",
    "logical_not",
    "isnan",
];
const REDUCTIONS: &[&str] = &[
    "sum",
    "mean",
    "amax",
    "amin",
    "max",
    "min",
    "argmax",
    "argmin",
    "prod",
    "norm",
    "linalg_vector_norm",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "all",
    "any",
    "logsumexp",
    "nansum",
    "count_nonzero",
];
const SOFTMAX: &[&str] = &[
    "softmax",
    "_softmax",
    "log_softmax",
    "_log_softmax",
    "_softmax_backward_data",
    "_log_softmax_backward_data",
    "cumsum",
    "cumprod",
];
const NORMS: &[&str] = &[
    "layer_norm",
    "native_layer_norm",
    "group_norm",
    "native_group_norm",
    "batch_norm",
    "native_batch_norm",
    "_batch_norm_impl_index",
    "cudnn_batch_norm",
    "miopen_batch_norm",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training",
    "instance_norm",
    "rms_norm",
    "_fused_rms_norm",
];
const NORM_BACKWARD: &[&str] = &[
    "native_layer_norm_backward",
    "native_batch_norm_backward",
    "cudnn_batch_norm_backward",
    "miopen_batch_norm_backward",
    "native_group_norm_backward",
    "_fused_rms_norm_backward",
    "_batch_norm_impl_index_backward",
];
const CONVS: &[&str] = &[
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "convolution",
    "_convolution",
    "cudnn_convolution",
    "cudnn_convolution_transpose",
    "mkldnn_convolution",
    "miopen_convolution",
    "_slow_conv2d_forward",
    "convolution_overrideable",
];
/// Attention ops with `[B, H, S, D]` inputs.
const ATTENTION: &[&str] = &[
    "scaled_dot_product_attention",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_attention_math",
    "_scaled_dot_product_fused_attention_overrideable",
    "_cudnn_attention_forward",
];
const ATTENTION_BACKWARD: &[&str] = &[
    "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_cudnn_attention_backward",
    "_scaled_dot_product_fused_attention_overrideable_backward",
    "_cudnn_attention_backward",
];
/// Attention ops whose inputs are `[B, S, H, D]` (FlashAttention's own layout).
const ATTENTION_BSHD: &[&str] = &["_flash_attention_forward", "_efficient_attention_forward"];
const ATTENTION_BSHD_BACKWARD: &[&str] =
    &["_flash_attention_backward", "_efficient_attention_backward"];
const COPIES: &[&str] = &["copy", "_to_copy", "clone", "cat", "stack"];
const GATHERS: &[&str] = &["embedding", "index_select", "gather"];

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
        Family::Optimizer => optimizer(op, in_place, c)?,
    };
    (flops.is_finite() && bytes.is_finite()).then_some(Cost {
        family,
        flops,
        bytes,
    })
}

fn gemm(op: &str, c: &Call) -> Option<(f64, f64)> {
    let (a, b, bias) = match op {
        "addmm" | "baddbmm" => (1, 2, Some(0)),
        _ => (0, 1, None),
    };
    let ((x, ex), (y, _)) = (c.tensor(a)?, c.tensor(b)?);
    let (batch, m, k, n) = match (x, y) {
        ([m, k], [_, n]) => (1, *m, *k, *n),
        ([bt, m, k], [_, _, n]) => (*bt, *m, *k, *n),
        _ => return None,
    };
    let out_es = if op == "_scaled_mm" { 2.0 } else { ex };
    let flops = 2.0 * batch as f64 * m as f64 * k as f64 * n as f64;
    let mut bytes = c.bytes_of(a) + c.bytes_of(b) + batch as f64 * m as f64 * n as f64 * out_es;
    if let Some(k) = bias {
        bytes += c.bytes_of(k);
    }
    if op == "_scaled_mm" {
        bytes += (2..c.dims.len()).map(|k| c.bytes_of(k)).sum::<f64>();
    }
    Some((flops, bytes))
}

/// `torch.utils.flop_counter.conv_flop_count`: 2 · batch · c_out · c_in · ∏filter · ∏conv_shape,
/// where `conv_shape` is the output's spatial shape, or the input's for a transposed conv.
fn conv_flop_count(x: &[i64], w: &[i64], out: &[i64], transposed: bool) -> f64 {
    let conv_shape = if transposed { &x[2..] } else { &out[2..] };
    2.0 * x[0] as f64 * w[0] as f64 * w[1] as f64 * numel(&w[2..]) * numel(conv_shape)
}

/// Positions of (bias, stride, padding, dilation, transposed, output_padding, groups) per
/// convolution op; `None` where the op has no such argument.
type ConvArgs = (
    Option<usize>,
    usize,
    usize,
    usize,
    Option<usize>,
    Option<usize>,
    usize,
);

fn conv_args(op: &str) -> ConvArgs {
    match op {
        "convolution" | "_convolution" | "convolution_overrideable" => {
            (Some(2), 3, 4, 5, Some(6), Some(7), 8)
        }
        "conv_transpose1d" | "conv_transpose2d" | "conv_transpose3d" => {
            (Some(2), 3, 4, 7, None, Some(5), 6)
        }
        // cudnn_convolution(self, weight, padding, stride, dilation, groups, …)
        "cudnn_convolution" | "miopen_convolution" => (None, 3, 2, 4, None, None, 5),
        "cudnn_convolution_transpose" => (None, 4, 2, 5, None, Some(3), 6),
        // mkldnn_convolution(self, weight, bias, padding, stride, dilation, groups)
        "mkldnn_convolution" => (Some(2), 4, 3, 5, None, None, 6),
        "_slow_conv2d_forward" => (Some(3), 4, 5, 99, None, None, 99),
        // conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups)
        _ => (Some(2), 3, 4, 5, None, None, 6),
    }
}

fn conv(op: &str, c: &Call) -> Option<(f64, f64)> {
    if op == "convolution_backward" {
        return conv_backward(c);
    }
    let ((x, ex), (w, _)) = (c.tensor(0)?, c.tensor(1)?);
    let sp = x
        .len()
        .checked_sub(2)
        .filter(|&s| s >= 1 && w.len() == x.len())?;
    let (bias, s_at, p_at, d_at, t_at, op_at, g_at) = conv_args(op);
    let transposed = match t_at {
        Some(k) => c.flag(k).unwrap_or(false),
        None => op.contains("transpose"),
    };
    let per_dim = |k: usize, default: i64| -> Vec<i64> {
        match c.ints(k) {
            Some(v) if v.len() == sp => v,
            Some(v) if v.len() == 1 => vec![v[0]; sp],
            _ => vec![default; sp],
        }
    };
    let (stride, pad, dil) = (per_dim(s_at, 1), per_dim(p_at, 0), per_dim(d_at, 1));
    let out_pad = op_at.map_or(vec![0; sp], |k| per_dim(k, 0));
    let groups = c
        .ints(g_at)
        .and_then(|v| v.first().copied())
        .unwrap_or(1)
        .max(1);
    let mut out = vec![x[0], if transposed { w[1] * groups } else { w[0] }];
    for k in 0..sp {
        let (i, kk) = (x[2 + k], w[2 + k]);
        let o = if transposed {
            (i - 1) * stride[k] - 2 * pad[k] + dil[k] * (kk - 1) + out_pad[k] + 1
        } else if stride[k] > 0 {
            (i + 2 * pad[k] - dil[k] * (kk - 1) - 1) / stride[k] + 1
        } else {
            0
        };
        out.push(o.max(0));
    }
    let flops = conv_flop_count(x, w, &out, transposed);
    let bias_bytes = bias.map_or(0.0, |k| c.bytes_of(k));
    let bytes = c.bytes_of(0) + c.bytes_of(1) + bias_bytes + numel(&out) * ex;
    Some((flops, bytes))
}

/// `convolution_backward(grad_out, input, weight, bias_sizes, stride, padding, dilation,
/// transposed, output_padding, groups, output_mask)`, FLOPs as `flop_counter.conv_backward_flop`.
fn conv_backward(c: &Call) -> Option<(f64, f64)> {
    let ((go, eg), (x, ex), (w, ew)) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    if go.len() < 3 || x.len() != go.len() || w.len() != go.len() {
        return None;
    }
    let transposed = c.flag(7).unwrap_or(false);
    let mask: Vec<bool> = c
        .concrete
        .get(10)
        .map(|s| s.split(',').map(|x| x.contains("True")).collect())
        .unwrap_or_else(|| vec![true, true, false]);
    let on = |k: usize| mask.get(k).copied().unwrap_or(false);
    let t = |s: &[i64]| -> Vec<i64> {
        let mut v = vec![s[1], s[0]];
        v.extend_from_slice(&s[2..]);
        v
    };
    let mut flops = 0.0;
    let mut bytes = numel(go) * eg + numel(x) * ex + numel(w) * ew;
    if on(0) {
        flops += conv_flop_count(go, w, x, !transposed);
        bytes += numel(x) * ex;
    }
    if on(1) {
        flops += if transposed {
            conv_flop_count(&t(go), &t(x), &t(w), false)
        } else {
            conv_flop_count(&t(x), &t(go), &t(w), false)
        };
        bytes += numel(w) * ew;
    }
    if on(2) {
        bytes += go[1] as f64 * eg;
    }
    Some((flops, bytes))
}

fn attention(op: &str, c: &Call) -> Option<(f64, f64)> {
    let bshd = ATTENTION_BSHD.contains(&op) || ATTENTION_BSHD_BACKWARD.contains(&op);
    let backward = ATTENTION_BACKWARD.contains(&op) || ATTENTION_BSHD_BACKWARD.contains(&op);
    let first = usize::from(backward);
    // (B, H, S, D) of q, k, v.
    let bhsd = |k: usize| -> Option<[f64; 4]> {
        let (d, _) = c.tensor(k)?;
        let [b, x, y, e] = d else { return None };
        let (h, s) = if bshd { (*y, *x) } else { (*x, *y) };
        Some([*b as f64, h as f64, s as f64, *e as f64])
    };
    let (q, k, v) = (bhsd(first)?, bhsd(first + 1)?, bhsd(first + 2)?);
    let (b, hq, sq, dq) = (q[0], q[1], q[2], q[3]);
    let (sk, dv) = (k[2], v[3]);
    let (_, eq) = c.tensor(first)?;
    let out = b * hq * sq * dv * eq;
    if backward {
        let flops = b * hq * sq * sk * (6.0 * dq + 4.0 * dv);
        // Every input (grad_out, q, k, v, out, logsumexp, …) read; dq, dk, dv written.
        let grads = c.bytes_of(first) + c.bytes_of(first + 1) + c.bytes_of(first + 2);
        Some((flops, c.inputs_bytes() + grads))
    } else {
        let flops = 2.0 * b * hq * sq * sk * (dq + dv);
        Some((flops, c.inputs_bytes() + out))
    }
}

fn elementwise(op: &str, in_place: bool, c: &Call) -> Option<(f64, f64)> {
    let arity = if ANY_ARITY.contains(&op) {
        c.dims.len()
    } else if TERNARY.contains(&op) {
        3
    } else if BINARY.contains(&op) {
        2
    } else {
        1
    };
    let ins: Vec<(&[i64], f64)> = (0..arity.min(c.dims.len()))
        .filter_map(|k| c.tensor(k))
        .collect();
    let reads: f64 = (0..arity.min(c.dims.len())).map(|k| c.bytes_of(k)).sum();
    let (first, es) = *ins.first()?;
    if WRITE_ONLY.contains(&op) {
        return Some((numel(first), numel(first) * es));
    }
    let shapes: Vec<&[i64]> = ins.iter().map(|x| x.0).collect();
    let out = if in_place {
        first.to_vec()
    } else {
        broadcast(&shapes)
    };
    let n = numel(&out);
    let out_es = if COMPARISONS.contains(&op) { 1.0 } else { es };
    let mut bytes = reads + n * out_es;
    if op == "native_dropout" {
        bytes += n; // the bool mask
    }
    Some((n, bytes))
}

fn reduction(op: &str, c: &Call) -> Option<(f64, f64)> {
    let (x, es) = c.tensor(0)?;
    let n = numel(x);
    if SOFTMAX.contains(&op) {
        // Forward: input → output of the same shape; backward: grad_out, output → grad_in.
        return Some((n, c.inputs_bytes() + n * es));
    }
    // Reduced dims (`dim` is input 1, `keepdim` input 2), none = all.
    let dims: Vec<i64> = c.ints(1).unwrap_or_default();
    let rank = x.len() as i64;
    let reduced: Vec<usize> = if dims.is_empty() {
        (0..x.len()).collect()
    } else {
        dims.iter()
            .map(|&d| if d < 0 { d + rank } else { d })
            .filter(|&d| d >= 0 && d < rank)
            .map(|d| d as usize)
            .collect()
    };
    let out: f64 = x
        .iter()
        .enumerate()
        .filter(|(k, _)| !reduced.contains(k))
        .map(|(_, &d)| d as f64)
        .product();
    let out_es = match op {
        "argmax" | "argmin" | "count_nonzero" => 8.0,
        "all" | "any" => 1.0,
        _ => es,
    };
    Some((n, c.inputs_bytes() + out * out_es))
}

fn norm(op: &str, c: &Call) -> Option<(f64, f64)> {
    let backward = NORM_BACKWARD.contains(&op);
    // The normalized tensor: input 0 forward, input 1 (after grad_out) backward.
    let (x, es) = c.tensor(usize::from(backward))?;
    let n = numel(x);
    if !backward {
        return Some((n, c.inputs_bytes() + n * es));
    }
    // grad_input, and grads of the 1-D affine parameters (weight/bias) among the inputs.
    let params: f64 = (2..c.dims.len())
        .filter_map(|k| c.tensor(k))
        .filter(|(d, _)| d.len() == 1)
        .map(|(d, e)| numel(d) * e)
        .sum();
    Some((n, c.inputs_bytes() + n * es + params))
}

fn copy(op: &str, c: &Call) -> Option<(f64, f64)> {
    match op {
        // copy_(dst, src): read src, write dst.
        "copy" => Some((0.0, c.bytes_of(0) + c.bytes_of(1))),
        "_to_copy" => {
            let (x, es) = c.tensor(0)?;
            let out_es = c
                .concrete
                .get(1)
                .and_then(|s| scalar_type_size(s))
                .unwrap_or(es);
            Some((0.0, numel(x) * (es + out_es)))
        }
        "clone" => Some((0.0, 2.0 * c.bytes_of(0))),
        // cat/stack(tensors, dim): read every input, write their sum.
        _ => Some((0.0, 2.0 * c.bytes_of(0))).filter(|x| x.1 > 0.0),
    }
}

fn gather(op: &str, c: &Call) -> Option<(f64, f64)> {
    let (out, es, index_bytes) = match op {
        // embedding(weight [V, D], indices)
        "embedding" => {
            let ((w, es), (idx, ei)) = (c.tensor(0)?, c.tensor(1)?);
            let d = *w.last()?;
            (numel(idx) * d as f64, es, numel(idx) * ei)
        }
        // index_select(self, dim, index)
        "index_select" => {
            let ((x, es), (idx, ei)) = (c.tensor(0)?, c.tensor(2)?);
            let dim = c.ints(1).and_then(|v| v.first().copied()).unwrap_or(0);
            let dim = if dim < 0 { dim + x.len() as i64 } else { dim } as usize;
            let row: f64 = x
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != dim)
                .map(|(_, &v)| v as f64)
                .product();
            (numel(idx) * row, es, numel(idx) * ei)
        }
        // gather(self, dim, index): output has the index's shape.
        "gather" => {
            let ((_, es), (idx, ei)) = (c.tensor(0)?, c.tensor(2)?);
            (numel(idx), es, numel(idx) * ei)
        }
        // embedding_dense_backward(grad [.., D], indices, num_weights, …): writes [num_weights, D].
        _ => {
            let ((g, es), (idx, ei)) = (c.tensor(0)?, c.tensor(1)?);
            let rows = c.ints(2).and_then(|v| v.first().copied()).unwrap_or(0) as f64;
            let d = *g.last()? as f64;
            return Some((0.0, numel(g) * es + numel(idx) * ei + rows * d * es));
        }
    };
    // Rows read, output written, indices read.
    Some((0.0, 2.0 * out * es + index_bytes))
}

fn optimizer(op: &str, in_place: bool, c: &Call) -> Option<(f64, f64)> {
    let lists: Vec<f64> = (0..c.dims.len())
        .filter(|&k| matches!(c.dims[k], Arg::List(_)))
        .map(|k| c.bytes_of(k))
        .collect();
    let read: f64 = lists.iter().sum();
    if read <= 0.0 {
        return None;
    }
    let written = if op.starts_with("_fused_adam") {
        // params, exp_avgs, exp_avg_sqs (lists 0, 2, 3) are updated in place.
        [0, 2, 3].iter().filter_map(|&k| lists.get(k)).sum()
    } else if in_place {
        lists[0]
    } else {
        lists[0]
    };
    Some((0.0, read + written))
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
