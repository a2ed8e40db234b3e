//! FLOPs and bytes of the matrix families (GEMM, convolution, attention): the formulas of
//! `torch.utils.flop_counter`, checked against `FlopCounterMode` in `tests/roofline.rs`.

use super::names::*;
use super::{numel, Call};

pub(super) fn gemm(op: &str, c: &Call) -> Option<(f64, f64)> {
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

pub(super) fn conv(op: &str, c: &Call) -> Option<(f64, f64)> {
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

pub(super) fn attention(op: &str, c: &Call) -> Option<(f64, f64)> {
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
