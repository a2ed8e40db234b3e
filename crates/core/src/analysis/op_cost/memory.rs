//! Bytes (and one FLOP per element) of the memory-bound families: elementwise, reductions and
//! softmax, norms, copies, gathers, fused optimizers.

use super::names::*;
use super::{broadcast, numel, scalar_type_size, Arg, Call};

pub(super) fn elementwise(op: &str, in_place: bool, c: &Call) -> Option<(f64, f64)> {
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

pub(super) fn reduction(op: &str, c: &Call) -> Option<(f64, f64)> {
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

pub(super) fn norm(op: &str, c: &Call) -> Option<(f64, f64)> {
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

pub(super) fn copy(op: &str, c: &Call) -> Option<(f64, f64)> {
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

pub(super) fn gather(op: &str, c: &Call) -> Option<(f64, f64)> {
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

pub(super) fn optimizer(op: &str, c: &Call) -> Option<(f64, f64)> {
    let lists: Vec<f64> = (0..c.dims.len())
        .filter(|&k| matches!(c.dims[k], Arg::List(_)))
        .map(|k| c.bytes_of(k))
        .collect();
    let read: f64 = lists.iter().sum();
    if read <= 0.0 {
        return None;
    }
    // Fused Adam(W) updates params, exp_avgs and exp_avg_sqs (lists 0, 2, 3) in place; a
    // `_foreach_*` op writes its first list (in place) or a new list of that size.
    let written: f64 = if op.starts_with("_fused_adam") {
        [0, 2, 3].iter().filter_map(|&k| lists.get(k)).sum()
    } else {
        lists[0]
    };
    Some((0.0, read + written))
}
