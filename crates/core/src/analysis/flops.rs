//! FLOPs per op and achieved TFLOPS / MFU (docs/definitions.md).
//!
//! Current torch writes no `flops` arg into the trace even with `with_flops=True` (older versions
//! did), so FLOPs come from, in order: the `flops` arg when present ([`FlopsSource::Trace`]);
//! torch's own `computeFlops` formulas (torch/csrc/profiler/util.cpp) for the ops it covers —
//! `aten::mm`, `addmm`, `bmm`, `baddbmm` (2·M·K·N, times B), `aten::conv2d` (2·N·Hout·Wout·Cout·
//! Cin/groups·kH·kW with stride/padding/dilation from `Concrete Inputs`), `aten::mul`/`aten::add`
//! (one per element of input 0) — [`FlopsSource::Torch`], which reproduces the `flops` column of
//! `key_averages()` exactly; and the `torch.utils.flop_counter` formula for the fused attention ops
//! torch's table leaves at 0 (`_scaled_dot_product_*_attention`, `_flash_attention_forward`,
//! `_efficient_attention_forward`: 4·B·H·Sq·Sk·D) — [`FlopsSource::FlopCounter`].
//! `aten::matmul`, `aten::linear` and `aten::convolution` are not counted themselves: they dispatch
//! to the ops above, which are, and counting both would double the total.
//!
//! This is the op table's `flops` column (torch's own numbers). MFU and the roofline count FLOPs
//! per op family in [`super::op_cost`] (the same formulas, plus attention backward and
//! convolution backward), each op against the peak of its own math ([`super::math_unit`],
//! [`super::devices`]).

use crate::model::{StrId, Trace};
use serde::Serialize;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum FlopsSource {
    #[default]
    None,
    /// The `flops` arg written by (older) torch.
    Trace,
    /// Derived from `Input Dims` with torch's `computeFlops` formulas (= key_averages' column).
    Torch,
    /// Derived with `torch.utils.flop_counter` formulas for ops torch's table leaves at 0.
    FlopCounter,
}

/// Parses `Input Dims` text (`[[384,48],[48,384],[],[]]`) into one shape per input; inputs that
/// are not a flat list of integers (tensor lists, scalars written oddly) become `None`.
pub fn parse_dims(text: &str) -> Vec<Option<Vec<i64>>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    if b.first() != Some(&b'[') {
        return out;
    }
    i += 1;
    while i < b.len() {
        match b[i] {
            b'[' => {
                let mut dims = Vec::new();
                let mut ok = true;
                let mut cur: Option<i64> = None;
                let mut depth = 1;
                i += 1;
                while i < b.len() && depth > 0 {
                    match b[i] {
                        b'[' => {
                            depth += 1;
                            ok = false;
                        }
                        b']' => {
                            depth -= 1;
                            if let Some(v) = cur.take() {
                                dims.push(v);
                            }
                        }
                        b',' => {
                            if let Some(v) = cur.take() {
                                dims.push(v);
                            }
                        }
                        c if c.is_ascii_digit() => {
                            cur = Some(cur.unwrap_or(0).saturating_mul(10) + i64::from(c - b'0'));
                        }
                        b' ' => {}
                        _ => ok = false,
                    }
                    i += 1;
                }
                out.push(ok.then_some(dims));
            }
            b',' | b' ' => i += 1,
            b']' => break,
            _ => {
                // A scalar or string element: skip to the next comma at this level.
                while i < b.len() && b[i] != b',' && b[i] != b']' {
                    i += 1;
                }
                out.push(None);
            }
        }
    }
    out
}

/// `key_averages(group_by_input_shape=True)` writes shapes as Python does (`[[8, 16], []]`), and
/// only for tensor inputs: a TensorList input (nested list in `Input Dims`) shows as `[]`.
pub fn torch_shape_text(text: &str) -> String {
    let dims = parse_dims(text);
    let mut s = String::with_capacity(text.len() + text.len() / 3);
    s.push('[');
    for (k, d) in dims.iter().enumerate() {
        if k > 0 {
            s.push_str(", ");
        }
        s.push('[');
        if let Some(d) = d {
            for (j, x) in d.iter().enumerate() {
                if j > 0 {
                    s.push_str(", ");
                }
                s.push_str(&x.to_string());
            }
        }
        s.push(']');
    }
    s.push(']');
    s
}

fn dim(d: &[Option<Vec<i64>>], k: usize) -> Option<&[i64]> {
    d.get(k).and_then(|x| x.as_deref())
}

fn prod(v: &[i64]) -> f64 {
    v.iter().map(|&x| x as f64).product()
}

/// Integers from one `Concrete Inputs` entry such as `"[1, 1]"` or `"1"`.
fn concrete_ints(args: &str, k: usize) -> Option<Vec<i64>> {
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    let s = v.get("Concrete Inputs")?.get(k)?.as_str()?;
    let nums: Vec<i64> = s
        .split(|c: char| !c.is_ascii_digit())
        .filter(|x| !x.is_empty())
        .filter_map(|x| x.parse().ok())
        .collect();
    (!nums.is_empty()).then_some(nums)
}

/// FLOPs of slice `i` and where they came from. `(0, None)` for ops without a formula.
pub fn slice_flops(t: &Trace, i: usize) -> (f64, FlopsSource) {
    if let Ok(r) = t.flops.slice.binary_search(&(i as u32)) {
        return (t.flops.flops[r], FlopsSource::Trace);
    }
    let name = t.str(t.slices.name[i]);
    let Some(op) = name.strip_prefix("aten::") else {
        return (0.0, FlopsSource::None);
    };
    let dims_id = t.slices.input_dims[i];
    if dims_id == StrId::EMPTY {
        return (0.0, FlopsSource::None);
    }
    let d = parse_dims(t.str(dims_id));
    let f = match op {
        "mm" => mm(dim(&d, 0), dim(&d, 1)),
        "addmm" => mm(dim(&d, 1), dim(&d, 2)),
        "bmm" => bmm(dim(&d, 0), dim(&d, 1)),
        "baddbmm" => bmm(dim(&d, 1), dim(&d, 2)),
        "mul" | "mul.Tensor" | "add" | "add.Tensor" => dim(&d, 0).map(prod),
        "conv2d" => conv2d(&d, &t.slice_args_stored(i)),
        _ => None,
    };
    if let Some(f) = f {
        return (f, FlopsSource::Torch);
    }
    let attn = matches!(
        op,
        "_scaled_dot_product_flash_attention"
            | "_scaled_dot_product_efficient_attention"
            | "_scaled_dot_product_cudnn_attention"
            | "_flash_attention_forward"
            | "_efficient_attention_forward"
    );
    if attn {
        // q [B, H, Sq, D], k [B, H, Sk, D]: two matmuls of 2·B·H·Sq·Sk·D each.
        if let (Some(q), Some(k)) = (dim(&d, 0), dim(&d, 1)) {
            if q.len() == 4 && k.len() == 4 {
                let f = 4.0 * q[0] as f64 * q[1] as f64 * q[2] as f64 * k[2] as f64 * q[3] as f64;
                return (f, FlopsSource::FlopCounter);
            }
        }
    }
    (0.0, FlopsSource::None)
}

fn mm(a: Option<&[i64]>, b: Option<&[i64]>) -> Option<f64> {
    match (a?, b?) {
        ([m, k], [_, n]) => Some(2.0 * *m as f64 * *k as f64 * *n as f64),
        _ => None,
    }
}

fn bmm(a: Option<&[i64]>, b: Option<&[i64]>) -> Option<f64> {
    match (a?, b?) {
        ([bt, m, k], [_, _, n]) => Some(2.0 * *bt as f64 * *m as f64 * *k as f64 * *n as f64),
        _ => None,
    }
}

fn conv2d(d: &[Option<Vec<i64>>], args: &str) -> Option<f64> {
    let (x, w) = (dim(d, 0)?, dim(d, 1)?);
    let ([n, _, h, wi], [co, ci, kh, kw]) = (x, w) else {
        return None;
    };
    let pair = |k: usize, default: i64| -> (i64, i64) {
        match concrete_ints(args, k).as_deref() {
            Some([a, b]) => (*a, *b),
            Some([a]) => (*a, *a),
            _ => (default, default),
        }
    };
    let (sh, sw) = pair(3, 1);
    let (ph, pw) = pair(4, 0);
    let (dh, dw) = pair(5, 1);
    let out = |inp: i64, k: i64, s: i64, p: i64, dl: i64| -> i64 {
        if s <= 0 {
            return 0;
        }
        ((inp + 2 * p - dl * (k - 1) - 1) / s + 1).max(0)
    };
    let oh = out(*h, *kh, sh, ph, dh);
    let ow = out(*wi, *kw, sw, pw, dw);
    Some(
        2.0 * *n as f64 * oh as f64 * ow as f64 * *co as f64 * *ci as f64 * *kh as f64 * *kw as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_dims_parse_into_shapes() {
        let d = parse_dims("[[384,48],[48,384],[],[]]");
        assert_eq!(
            d,
            vec![
                Some(vec![384, 48]),
                Some(vec![48, 384]),
                Some(vec![]),
                Some(vec![])
            ]
        );
        let d = parse_dims("[[[1,2],[3]],[5]]");
        assert_eq!(d, vec![None, Some(vec![5])]);
        assert_eq!(
            torch_shape_text("[[8,16],[],[[1],[2]]]"),
            "[[8, 16], [], []]"
        );
    }
}
