//! Which ops and kernels may stand for one another when a rename is matched (docs/compare.md): a
//! rename pairs only like with like.
//!
//! A backend change renames work without changing it: `aten::cudnn_convolution` becomes
//! `aten::miopen_convolution`, `volta_sgemm_128x64_tn` becomes `ampere_sgemm_64x64_nn`, eager
//! `gelu` + `mul` kernels become one `triton_poi_fused_gelu_mul_0`. Matching through the op tree
//! alone (TraceLens's lowest common parent) also pairs things that merely sit under the same
//! parent — on HTA's trace_diff pair it read an elementwise `tanh` kernel as "changed →
//! `volta_sgemm_128x64_tn`" and charged +8 ms per step to it. So each item gets a *family*, and
//! only items of one family pair:
//!
//! - **kernels**: their fine category ([`crate::analysis::kernels::FINE_RULES`]: gemm,
//!   convolution, attention, elementwise, reduction/norm/softmax, optimizer, comm, memcpy,
//!   memset). Inductor's generated kernels take the family their prefix names —
//!   `triton_poi…` pointwise → elementwise, `triton_red…` / `triton_per…` → reduction/norm/softmax,
//!   `triton_tem…` (GEMM templates) → gemm — so a fused kernel pairs with the eager kernels it
//!   replaced. Kernels of the fine category `other` have no family. Before families are
//!   looked at, a kernel pairs with the one kernel on the other side whose name differs only in
//!   its numbers ([`sizes_stem`]: tile sizes, template sizes): `ampere_sgemm_32x128_tn` with
//!   `ampere_sgemm_64x64_tn`, `split_embedding_codegen_forward_unweighted_kernel<…, 2ul>` with its
//!   `…, 5ul>` instance — the same code at other sizes, whatever its category.
//! - **ops**: a family read from the op's name ([`op_family`]): matmul, convolution, attention,
//!   normalization, reduction, elementwise, layout (views, copies, allocation), indexing,
//!   embedding, loss, optimizer, communication; autograd nodes (`TanhBackward0`) take the family
//!   of the op they differentiate. A compiled region (`CompiledFunction`, `Torch-Compiled Region`,
//!   `## Call CompiledFxGraph …`) is its own family, [`COMPILED`]: it replaces *every* eager op
//!   under its parent, so it is matched with all of them at once, never with one of them. Ops of
//!   no known family (user annotations, custom ops) are never renamed.
//! - **shapes**: when ops are keyed by input shapes, a rename also needs the same *shape family*:
//!   as many inputs, each of the same rank ([`shape_family`]).

/// The family of compiled regions (see the module doc).
pub const COMPILED: &str = "compiled";

/// The op name with what does not change its family removed: the namespace, the autograd
/// wrapper, a `Backward0` / `_backward` suffix, in-place and private underscores; lowercased.
fn stem(name: &str) -> String {
    let mut s = name.trim();
    for p in ["autograd::engine::evaluate_function: ", "aten::", "prim::"] {
        if let Some(r) = s.strip_prefix(p) {
            s = r;
        }
    }
    let mut l = s.to_ascii_lowercase();
    if let Some(k) = l.rfind("backward") {
        if l[k + 8..].chars().all(|c| c.is_ascii_digit()) {
            l.truncate(k);
        }
    }
    l.trim_matches('_').to_owned()
}

/// Exact stems per family, checked before the substring rules.
const OP_EXACT: &[(&str, &[&str])] = &[
    (
        "matmul",
        &[
            "mm",
            "addmm",
            "bmm",
            "baddbmm",
            "matmul",
            "linear",
            "addmv",
            "mv",
            "dot",
            "einsum",
            "scaled_mm",
            "addbmm",
            "vdot",
            "outer",
        ],
    ),
    (
        "layout",
        &[
            "view",
            "reshape",
            "permute",
            "transpose",
            "t",
            "expand",
            "expand_as",
            "contiguous",
            "clone",
            "copy",
            "to",
            "to_copy",
            "as_strided",
            "slice",
            "select",
            "squeeze",
            "unsqueeze",
            "flatten",
            "unflatten",
            "cat",
            "stack",
            "split",
            "split_with_sizes",
            "chunk",
            "narrow",
            "detach",
            "alias",
            "unsafe_view",
            "reshape_alias",
            "empty",
            "empty_like",
            "empty_strided",
            "zeros",
            "zeros_like",
            "ones",
            "ones_like",
            "full",
            "full_like",
            "fill",
            "zero",
            "resize",
            "lift_fresh",
            "pad",
            "constant_pad_nd",
            "repeat",
            "roll",
            "flip",
            "unbind",
            "movedim",
            "broadcast_tensors",
            "new_empty",
            "new_zeros",
            "new_empty_strided",
            "record_stream",
            "set",
            "view_as",
            "reshape_as",
            "transpose_as",
            "permute_copy",
            "view_copy",
            "tensor",
            "scalar_tensor",
            "arange",
        ],
    ),
    (
        "indexing",
        &[
            "index",
            "index_select",
            "index_put",
            "index_add",
            "gather",
            "scatter",
            "scatter_add",
            "masked_select",
            "masked_scatter",
            "nonzero",
            "take",
            "index_copy",
            "put",
            "sort",
            "topk",
            "argsort",
            "unique",
            "searchsorted",
            "bucketize",
        ],
    ),
    (
        "reduction",
        &[
            "sum",
            "mean",
            "max",
            "min",
            "amax",
            "amin",
            "argmax",
            "argmin",
            "prod",
            "var",
            "std",
            "var_mean",
            "std_mean",
            "cumsum",
            "cumprod",
            "logsumexp",
            "all",
            "any",
            "count_nonzero",
            "norm",
            "linalg_vector_norm",
            "aminmax",
        ],
    ),
    (
        "elementwise",
        &[
            "add",
            "sub",
            "mul",
            "div",
            "neg",
            "abs",
            "exp",
            "exp2",
            "expm1",
            "log",
            "log1p",
            "log2",
            "pow",
            "sqrt",
            "rsqrt",
            "reciprocal",
            "tanh",
            "sigmoid",
            "relu",
            "gelu",
            "silu",
            "mish",
            "elu",
            "selu",
            "celu",
            "leaky_relu",
            "hardtanh",
            "hardswish",
            "hardsigmoid",
            "softplus",
            "threshold",
            "where",
            "clamp",
            "clamp_min",
            "clamp_max",
            "clip",
            "dropout",
            "native_dropout",
            "feature_dropout",
            "masked_fill",
            "lerp",
            "addcmul",
            "addcdiv",
            "sign",
            "sgn",
            "erf",
            "erfc",
            "erfinv",
            "sin",
            "cos",
            "tan",
            "atan",
            "atan2",
            "floor",
            "ceil",
            "round",
            "trunc",
            "frac",
            "fmod",
            "remainder",
            "maximum",
            "minimum",
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "logical_and",
            "logical_or",
            "logical_not",
            "bitwise_and",
            "bitwise_or",
            "bitwise_not",
            "isnan",
            "isinf",
            "isfinite",
            "nan_to_num",
            "square",
            "rsub",
            "true_divide",
            "floor_divide",
            "bernoulli",
            "uniform",
            "normal",
            "rand",
            "randn",
            "randint",
            "randperm",
            "exponential",
            "add_relu",
            "glu",
            "prelu",
            "triu",
            "tril",
        ],
    ),
    (
        "loss",
        &[
            "cross_entropy_loss",
            "nll_loss",
            "nll_loss_forward",
            "nll_loss2d",
            "mse_loss",
            "l1_loss",
            "smooth_l1_loss",
            "huber_loss",
            "binary_cross_entropy",
            "binary_cross_entropy_with_logits",
            "kl_div",
            "nllloss",
            "nllloss2d",
        ],
    ),
];

/// Substrings per family, checked in order when no exact stem matched.
const OP_CONTAINS: &[(&str, &[&str])] = &[
    (
        COMPILED,
        &[
            "compiledfunction",
            "compiled region",
            "compiledfxgraph",
            "torch-compiled",
            "torchdynamo",
            "inductor",
        ],
    ),
    (
        "communication",
        &[
            "c10d::",
            "nccl",
            "gloo",
            "record_param_comms",
            "allreduce",
            "all_reduce",
            "allgather",
            "all_gather",
            "reduce_scatter",
            "alltoall",
            "all_to_all",
            "c10d",
        ],
    ),
    (
        "optimizer",
        &[
            "optimizer.",
            "optimizer#",
            "foreach",
            "fused_adam",
            "fused_sgd",
            "multi_tensor",
            "adam",
            "sgd",
            "rmsprop",
            "adagrad",
        ],
    ),
    (
        "attention",
        &[
            "scaled_dot_product",
            "flash_attention",
            "efficient_attention",
            "cudnn_attention",
            "attention",
            "sdpa",
            "fmha",
        ],
    ),
    (
        "convolution",
        &[
            "convolution",
            "conv1d",
            "conv2d",
            "conv3d",
            "conv_transpose",
        ],
    ),
    (
        "normalization",
        &[
            "batch_norm",
            "batchnorm",
            "layer_norm",
            "layernorm",
            "group_norm",
            "groupnorm",
            "instance_norm",
            "rms_norm",
            "rmsnorm",
            "softmax",
            "weight_norm",
        ],
    ),
    ("embedding", &["embedding"]),
    ("loss", &["_loss", "loss_"]),
    ("matmul", &["addmm", "bmm", "matmul", "gemm"]),
];

/// The family of an op (see the module doc); `None` for names of no known family.
pub fn op_family(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    // Whole-name markers first: a compiled region or a collective, whatever its wording.
    for (fam, subs) in &OP_CONTAINS[..2] {
        if subs.iter().any(|s| lower.contains(s)) {
            return Some(fam);
        }
    }
    let s = stem(name);
    if s.is_empty() {
        return None;
    }
    if let Some((fam, _)) = OP_EXACT.iter().find(|(_, v)| v.contains(&s.as_str())) {
        return Some(fam);
    }
    // An autograd node is CamelCase (`AddmmBackward0` → `addmm`): exact names without the
    // underscores torch writes between words.
    let squashed: String = s.chars().filter(|c| *c != '_').collect();
    if let Some((fam, _)) = OP_EXACT.iter().find(|(_, v)| {
        v.iter()
            .any(|x| x.len() > 1 && x.chars().filter(|c| *c != '_').eq(squashed.chars()))
    }) {
        return Some(fam);
    }
    OP_CONTAINS[2..]
        .iter()
        .find(|(_, subs)| subs.iter().any(|x| s.contains(x) || squashed.contains(x)))
        .map(|(fam, _)| *fam)
}

/// A kernel's name without its numbers (tile sizes, template sizes): two kernels with the same
/// stem are the same code at other sizes.
pub fn sizes_stem(name: &str) -> String {
    name.chars().filter(|c| !c.is_ascii_digit()).collect()
}

/// The family of a GPU kernel (or copy, or memset) from its name and fine category (see the
/// module doc); `None` for the fine category `other`.
pub fn kernel_family(name: &str, fine_category: &str) -> Option<String> {
    let l = name.to_ascii_lowercase();
    if l.contains("triton") {
        let generated = |p: &str| l.starts_with(p) || l.contains(&format!(" {p}"));
        if generated("triton_poi") {
            return Some("elementwise".into());
        }
        if generated("triton_red") || generated("triton_per") {
            return Some("reduction/norm/softmax".into());
        }
        if generated("triton_tem") || l.contains("_mm_") || l.contains("bmm") {
            return Some("gemm".into());
        }
    }
    (fine_category != "other").then(|| fine_category.to_owned())
}

/// The shape family of an op's `Input Dims` text: the rank of each input (`[[8,16],[16]]` →
/// `[2, 1]`); inputs that are not plain tensors count as rank `-1`.
pub fn shape_family(shapes: &str) -> Vec<i32> {
    crate::analysis::flops::parse_dims(shapes)
        .into_iter()
        .map(|d| d.map_or(-1, |v| v.len() as i32))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_fall_in_the_family_of_what_they_compute() {
        assert_eq!(op_family("aten::mm"), Some("matmul"));
        assert_eq!(op_family("aten::addmm"), Some("matmul"));
        assert_eq!(op_family("AddmmBackward0"), Some("matmul"));
        assert_eq!(
            op_family("autograd::engine::evaluate_function: AddmmBackward0"),
            Some("matmul")
        );
        assert_eq!(op_family("aten::cudnn_convolution"), Some("convolution"));
        assert_eq!(op_family("aten::miopen_convolution"), Some("convolution"));
        assert_eq!(op_family("aten::permute"), Some("layout"));
        assert_eq!(op_family("aten::tanh"), Some("elementwise"));
        assert_eq!(op_family("aten::tanh_backward"), Some("elementwise"));
        assert_eq!(op_family("TanhBackward0"), Some("elementwise"));
        assert_eq!(op_family("aten::relu_"), Some("elementwise"));
        assert_eq!(op_family("aten::native_layer_norm"), Some("normalization"));
        assert_eq!(op_family("aten::_softmax"), Some("normalization"));
        assert_eq!(
            op_family("aten::_scaled_dot_product_flash_attention"),
            Some("attention")
        );
        assert_eq!(op_family("CompiledFunction"), Some(COMPILED));
        assert_eq!(op_family("CompiledFunctionBackward"), Some(COMPILED));
        assert_eq!(op_family("Torch-Compiled Region: 0/0"), Some(COMPILED));
        assert_eq!(op_family("nccl:all_reduce"), Some("communication"));
        assert_eq!(op_family("record_param_comms"), Some("communication"));
        assert_eq!(op_family("Optimizer.step#SGD.step"), Some("optimizer"));
        assert_eq!(op_family("aten::_foreach_add_"), Some("optimizer"));
        assert_eq!(op_family("aten::embedding_bag"), Some("embedding"));
        assert_eq!(op_family("## forward ##"), None);
        assert_eq!(op_family("nn.Module: MLP"), None);
        assert_eq!(op_family("aten::sum"), Some("reduction"));
        assert_eq!(op_family("aten::broadcast_tensors"), Some("layout"));
        assert_eq!(op_family("aten::upsample_bilinear2d"), None);
    }

    #[test]
    fn kernels_take_their_fine_category_and_inductor_kernels_their_prefix() {
        assert_eq!(
            kernel_family("triton_poi_fused_gelu_mul_0", "triton").as_deref(),
            Some("elementwise")
        );
        assert_eq!(
            kernel_family("triton_red_fused_sum_1", "triton").as_deref(),
            Some("reduction/norm/softmax")
        );
        assert_eq!(
            kernel_family("volta_sgemm_128x64_tn", "gemm").as_deref(),
            Some("gemm")
        );
        assert_eq!(kernel_family("some_kernel", "other"), None);
        assert_eq!(
            sizes_stem("ampere_sgemm_32x128_tn"),
            sizes_stem("ampere_sgemm_64x64_tn")
        );
        assert_ne!(
            sizes_stem("elementwise_kernel<128, 2, tanh_kernel>"),
            sizes_stem("elementwise_kernel<128, 2, add_kernel>")
        );
    }

    #[test]
    fn shape_family_is_the_rank_of_each_input() {
        assert_eq!(shape_family("[[8, 16], [16], []]"), vec![2, 1, 0]);
        assert_eq!(shape_family("[]"), Vec::<i32>::new());
    }
}
