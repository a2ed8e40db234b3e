//! The kernel table and kernel categories (docs/definitions.md).
//!
//! Two classifications are shown side by side:
//! - the seed classification (KempnerForge): substring match on the lowercased name — matmul:
//!   `gemm mm matmul dot bmm cublas nvjet cutlass`; comm: `nccl allreduce allgather
//!   reduce_scatter`; memory: `memcpy memset`; everything else `other` (flash attention, softmax
//!   and elementwise are `other` on purpose: the seed wants a conservative matmul share).
//!   [`seed_category`], used by every headline figure, checks **comm before matmul**: checked in
//!   the seed's literal order, the bare `mm` hits `ncclDevComm…`-style NCCL names (and `..._mma_`,
//!   `summary`, `immediate`) before comm is ever tried, which put 42% of the A100 rank-0-of-16
//!   trace's GPU time (its NCCL kernels) under matmul while the finer classification beside it
//!   said comm. [`seed_category_literal`] keeps the literal order for the one place where being
//!   bit-compatible with KempnerForge's `summary.md` is the point, and is labelled so.
//! - a finer one whose rules are data ([`FINE_RULES`]), so a UI can list them and a user can pass
//!   their own list to [`fine_category_with`].

use super::scope::Mask;
use super::tensor_cores::{tensor_core_hint, TensorCores};
use crate::model::{SliceKind, StrId, Trace, NONE};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The seed's rules, in the seed's literal order (matmul, comm, memory). [`seed_category`] tries
/// the comm rule first; [`seed_category_literal`] tries them in this order.
pub const SEED_RULES: &[(&str, &[&str])] = &[
    (
        "matmul",
        &[
            "gemm", "mm", "matmul", "dot", "bmm", "cublas", "nvjet", "cutlass",
        ],
    ),
    (
        "comm",
        &["nccl", "allreduce", "allgather", "reduce_scatter"],
    ),
    ("memory", &["memcpy", "memset"]),
];

/// The order [`seed_category`] tries [`SEED_RULES`] in: comm, matmul, memory.
const HEADLINE_ORDER: [usize; 3] = [1, 0, 2];

/// Seed category of a kernel name for every headline figure: `matmul`, `comm`, `memory` or
/// `other`, with comm tested before matmul (see the module doc).
pub fn seed_category(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    HEADLINE_ORDER
        .iter()
        .map(|&i| SEED_RULES[i])
        .find(|(_, subs)| subs.iter().any(|s| lower.contains(s)))
        .map_or("other", |(cat, _)| cat)
}

/// Seed category with the rules checked in KempnerForge's literal order (matmul first), for
/// output that must be bit-compatible with that project's `summary.md`. Not a headline figure:
/// it calls NCCL kernels whose name holds "mm" (`ncclDevComm`) matmul.
pub fn seed_category_literal(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    SEED_RULES
        .iter()
        .find(|(_, subs)| subs.iter().any(|s| lower.contains(s)))
        .map_or("other", |(cat, _)| cat)
}

/// A seed category read back ([`crate::report::analysis_wire`]): one of `SEED_RULES`' names or
/// `other`, so the `&'static str` the analyses hold; any other text is an error, not a leak.
fn seed_name(s: &str) -> Option<&'static str> {
    SEED_RULES
        .iter()
        .map(|(c, _)| *c)
        .chain(["other"])
        .find(|c| *c == s)
}

/// A seed category's name. An alias, not `&'static str` in the field itself: serde's derive
/// would make a row borrow from its input for a literal `&'static str` field.
pub type SeedName = &'static str;

mod seed_serde {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer};

    pub fn one<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        let s = String::deserialize(d)?;
        super::seed_name(&s).ok_or_else(|| D::Error::custom(format!("unknown category {s:?}")))
    }

    pub fn pairs<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(&'static str, i64)>, D::Error> {
        Vec::<(String, i64)>::deserialize(d)?
            .into_iter()
            .map(|(s, v)| {
                super::seed_name(&s)
                    .map(|c| (c, v))
                    .ok_or_else(|| D::Error::custom(format!("unknown category {s:?}")))
            })
            .collect()
    }
}

/// One rule of the finer classification: the first rule with a matching substring wins.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FineRule {
    pub category: String,
    /// Lowercase substrings, any of which selects the category.
    pub contains: Vec<String>,
}

/// The default finer rules as data, in the order they are checked. Communication and copies come
/// first so `nccl...` never reads as a reduction; attention before gemm so fused attention kernels
/// (which contain "gemm" in CUTLASS names) are attention.
pub const FINE_RULES: &[(&str, &[&str])] = &[
    ("memcpy", &["memcpy", "memory copy", "dtoh", "htod", "dtod"]),
    ("memset", &["memset"]),
    (
        "comm",
        &[
            "nccl",
            "allreduce",
            "all_reduce",
            "allgather",
            "all_gather",
            "reduce_scatter",
            "reducescatter",
            "alltoall",
            "sendrecv",
            "rccl",
        ],
    ),
    // cuDNN's SDPA backward runs two `cudnn::fusion` helpers besides its flash kernel.
    (
        "attention",
        &[
            "flash",
            "fmha",
            "sdpa",
            "attention",
            "attn",
            "compute_dot_do_o",
            "convert_dq_to_",
        ],
    ),
    // Not "lamb": every `{lambda()#1}` kernel would match it.
    (
        "optimizer",
        &[
            "multi_tensor_apply",
            "adam",
            "sgd",
            "multi_tensor_lamb",
            "optimizer",
        ],
    ),
    ("triton", &["triton"]),
    (
        "convolution",
        // Not "conv" alone ("convert") nor "cudnn::" (cuDNN runs attention too).
        &[
            "convolution",
            "convolve",
            "conv1d",
            "conv2d",
            "conv3d",
            "conv_",
            "_conv",
            "fprop",
            "wgrad",
            "dgrad",
            "implicit_gemm",
            "winograd",
            "nchwtonhwc",
            "nhwctonchw",
            // MIOpen's (ROCm) convolution kernels: `MIOpenConvUni`, `MIOpenConvFwd…`.
            "miopenconv",
        ],
    ),
    (
        "gemm",
        &[
            "gemm",
            "matmul",
            "cublas",
            "cutlass",
            "nvjet",
            "sm80_xmma",
            "sm90_xmma",
            "bmm",
            "_mm_",
            "dot",
        ],
    ),
    (
        "reduction/norm/softmax",
        &[
            "reduce",
            "norm",
            "softmax",
            "sum",
            "mean",
            "argmax",
            "max_",
            "min_",
            "cross_entropy",
            "nll_loss",
            "scan",
        ],
    ),
    (
        "elementwise",
        &[
            "elementwise",
            "vectorized",
            "unrolled",
            "pointwise",
            "copy_kernel",
            "fill",
            "add",
            "mul",
            "div",
            "relu",
            "gelu",
            "silu",
            "sigmoid",
            "tanh",
            "index",
            "cat",
            "where",
            "clamp",
        ],
    ),
];

pub fn default_fine_rules() -> Vec<FineRule> {
    FINE_RULES
        .iter()
        .map(|(c, subs)| FineRule {
            category: (*c).to_owned(),
            contains: subs.iter().map(|s| (*s).to_owned()).collect(),
        })
        .collect()
}

/// Finer category of a GPU slice name under `rules`; `other` when nothing matches. Memcpy/memset
/// slices are classified by their kind first (their names vary by version).
pub fn fine_category_with(rules: &[FineRule], name: &str, kind: SliceKind) -> String {
    match kind {
        SliceKind::Memcpy => return "memcpy".into(),
        SliceKind::Memset => return "memset".into(),
        _ => {}
    }
    let lower = name.to_ascii_lowercase();
    rules
        .iter()
        .find(|r| r.contains.iter().any(|s| lower.contains(s.as_str())))
        .map_or_else(|| "other".to_owned(), |r| r.category.clone())
}

pub fn fine_category(name: &str, kind: SliceKind) -> String {
    let lower = name.to_ascii_lowercase();
    match kind {
        SliceKind::Memcpy => return "memcpy".into(),
        SliceKind::Memset => return "memset".into(),
        _ => {}
    }
    FINE_RULES
        .iter()
        .find(|(_, subs)| subs.iter().any(|s| lower.contains(s)))
        .map_or("other", |(c, _)| c)
        .to_owned()
}

/// One row per distinct GPU slice name (kernels, memcpy, memset).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct KernelRow {
    pub name: String,
    pub kind: SliceKind,
    pub calls: u64,
    pub total_ns: i64,
    pub avg_ns: f64,
    pub min_ns: i64,
    pub max_ns: i64,
    /// Share of all GPU slice time, in %.
    pub pct_of_gpu: f64,
    #[serde(deserialize_with = "seed_serde::one")]
    pub category: SeedName,
    pub fine_category: String,
    /// What the name says about tensor cores ([`tensor_core_hint`]), kernels only.
    pub tensor_cores: Option<TensorCores>,
    /// Grid/block of the first call (kernels of one name usually share them).
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub registers: Option<u32>,
    /// Mean `est. achieved occupancy %` over calls that report it.
    pub occupancy_pct: Option<f64>,
    /// The op that launched the most time of this kernel (innermost cpu_op/user_annotation around
    /// the launch call), if any.
    pub launching_op: Option<String>,
    /// How close it came to the roofline where its launching op's FLOPs and bytes are known
    /// ([`super::roofline`]); filled in by the analysis that has the roofline.
    pub pct_of_roof: Option<f64>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, Default)]
pub struct KernelTable {
    pub rows: Vec<KernelRow>,
    pub total_ns: i64,
}

/// Time per category, in ns, seed and fine.
#[derive(Debug, Clone, Serialize, serde::Deserialize, Default)]
pub struct Categories {
    /// Always the four seed keys, in order matmul, comm, memory, other; comm tested first.
    #[serde(deserialize_with = "seed_serde::pairs")]
    pub seed: Vec<(&'static str, i64)>,
    /// The same four keys from [`seed_category_literal`] (KempnerForge's literal rule order):
    /// only for output that must match that project's `summary.md` bit for bit.
    #[serde(deserialize_with = "seed_serde::pairs")]
    pub seed_literal: Vec<(&'static str, i64)>,
    /// Fine categories with time, sorted by time descending then name.
    pub fine: Vec<(String, i64)>,
}

/// Innermost cpu_op / user_annotation enclosing slice `l` on its track.
pub fn enclosing_op(t: &Trace, l: u32) -> u32 {
    let mut p = if l == NONE {
        NONE
    } else {
        t.slices.parent[l as usize]
    };
    while p != NONE {
        if matches!(
            t.slices.kind[p as usize],
            SliceKind::CpuOp | SliceKind::UserAnnotation
        ) {
            return p;
        }
        p = t.slices.parent[p as usize];
    }
    NONE
}

/// Builds the kernel table, sorted by total time descending then name. O(n).
pub fn kernel_table(t: &Trace) -> KernelTable {
    kernel_table_masked(t, Mask::ALL)
}

/// [`kernel_table`] over the GPU slices `keep` passes (a scope: [`super::scope`]).
pub fn kernel_table_masked(t: &Trace, keep: Mask<'_>) -> KernelTable {
    let s = &t.slices;
    let g = &t.gpu;
    let mut index: FxHashMap<StrId, usize> = FxHashMap::default();
    let mut rows: Vec<KernelRow> = Vec::new();
    let mut occ: Vec<(f64, u64)> = Vec::new();
    let mut ops: Vec<FxHashMap<StrId, i64>> = Vec::new();
    let mut total = 0i64;
    for r in 0..g.slice.len() {
        let i = g.slice[r] as usize;
        let kind = s.kind[i];
        if !kind.is_gpu_work() || !keep.has(i) {
            continue;
        }
        let d = s.dur[i];
        total += d;
        let k = *index.entry(s.name[i]).or_insert_with(|| {
            let name = t.str(s.name[i]);
            let is_kernel = kind == SliceKind::Kernel;
            rows.push(KernelRow {
                name: name.to_owned(),
                kind,
                calls: 0,
                total_ns: 0,
                avg_ns: 0.0,
                min_ns: i64::MAX,
                max_ns: 0,
                pct_of_gpu: 0.0,
                category: seed_category(name),
                fine_category: fine_category(name, kind),
                tensor_cores: if is_kernel {
                    tensor_core_hint(name)
                } else {
                    None
                },
                grid: is_kernel.then_some(g.grid[r]),
                block: is_kernel.then_some(g.block[r]),
                registers: (is_kernel && g.registers[r] > 0).then_some(g.registers[r]),
                pct_of_roof: None,
                occupancy_pct: None,
                launching_op: None,
            });
            occ.push((0.0, 0));
            ops.push(FxHashMap::default());
            rows.len() - 1
        });
        let row = &mut rows[k];
        row.calls += 1;
        row.total_ns += d;
        row.min_ns = row.min_ns.min(d);
        row.max_ns = row.max_ns.max(d);
        let o = g.occupancy_pct[r];
        if o > 0.0 {
            occ[k].0 += f64::from(o);
            occ[k].1 += 1;
        }
        let op = enclosing_op(t, g.launch[r]);
        if op != NONE {
            *ops[k].entry(s.name[op as usize]).or_default() += d;
        }
    }
    for (k, row) in rows.iter_mut().enumerate() {
        row.avg_ns = row.total_ns as f64 / row.calls.max(1) as f64;
        row.pct_of_gpu = if total > 0 {
            100.0 * row.total_ns as f64 / total as f64
        } else {
            0.0
        };
        if occ[k].1 > 0 {
            row.occupancy_pct = Some(occ[k].0 / occ[k].1 as f64);
        }
        row.launching_op = ops[k]
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| t.str(*b.0).cmp(t.str(*a.0))))
            .map(|(n, _)| t.str(*n).to_owned());
    }
    crate::sort::by(&mut rows, |a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    KernelTable {
        rows,
        total_ns: total,
    }
}

/// GPU time per category from a kernel table.
pub fn categories(k: &KernelTable) -> Categories {
    let mut seed = vec![("matmul", 0i64), ("comm", 0), ("memory", 0), ("other", 0)];
    let mut seed_literal = seed.clone();
    let mut fine: FxHashMap<&str, i64> = FxHashMap::default();
    for r in &k.rows {
        if let Some(x) = seed.iter_mut().find(|x| x.0 == r.category) {
            x.1 += r.total_ns;
        }
        let lit = seed_category_literal(&r.name);
        if let Some(x) = seed_literal.iter_mut().find(|x| x.0 == lit) {
            x.1 += r.total_ns;
        }
        *fine.entry(r.fine_category.as_str()).or_default() += r.total_ns;
    }
    let mut fine: Vec<(String, i64)> = fine.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    crate::sort::by(&mut fine, |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Categories {
        seed,
        seed_literal,
        fine,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_classification_tests_comm_before_matmul() {
        assert_eq!(seed_category("ampere_sgemm_128x64_nn"), "matmul");
        assert_eq!(
            seed_category("ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
            "comm"
        );
        // The name of every NCCL kernel of the A100 rank-0-of-16 corpus trace.
        let nccl =
            "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)";
        assert_eq!(seed_category(nccl), "comm");
        // Only the literal order (KempnerForge's summary.md) lets the bare "mm" win.
        assert_eq!(seed_category_literal(nccl), "matmul");
        assert_eq!(seed_category_literal("ampere_sgemm_128x64_nn"), "matmul");
        assert_eq!(
            seed_category_literal("Memcpy HtoD (Pageable -> Device)"),
            "memory"
        );
        assert_eq!(seed_category("Memcpy HtoD (Pageable -> Device)"), "memory");
        assert_eq!(seed_category("flash_fwd_kernel"), "other");
        assert_eq!(
            seed_category("void at::native::vectorized_elementwise_kernel<4>"),
            "other"
        );
        assert_eq!(seed_category("nvjet_tst_128x256"), "matmul");
    }

    #[test]
    fn fine_classification_follows_its_rules() {
        assert_eq!(
            fine_category("flash_fwd_kernel<cutlass>", SliceKind::Kernel),
            "attention"
        );
        assert_eq!(
            fine_category("ncclDevKernel_AllReduce", SliceKind::Kernel),
            "comm"
        );
        assert_eq!(
            fine_category("sm90_xmma_gemm_bf16", SliceKind::Kernel),
            "gemm"
        );
        assert_eq!(
            fine_category("cudnn::detail::implicit_convolve_sgemm", SliceKind::Kernel),
            "convolution"
        );
        assert_eq!(
            fine_category("triton_poi_fused_add_0", SliceKind::Kernel),
            "triton"
        );
        assert_eq!(
            fine_category("multi_tensor_apply_kernel<AdamFunctor>", SliceKind::Kernel),
            "optimizer"
        );
        assert_eq!(
            fine_category("cunn_SoftMaxForward", SliceKind::Kernel),
            "reduction/norm/softmax"
        );
        assert_eq!(
            fine_category(
                "void at::native::vectorized_elementwise_kernel",
                SliceKind::Kernel
            ),
            "elementwise"
        );
        assert_eq!(fine_category("Memcpy DtoH", SliceKind::Memcpy), "memcpy");
        assert_eq!(fine_category("mystery", SliceKind::Kernel), "other");
        let mut rules = default_fine_rules();
        rules.insert(
            0,
            FineRule {
                category: "mine".into(),
                contains: vec!["myst".into()],
            },
        );
        assert_eq!(
            fine_category_with(&rules, "mystery", SliceKind::Kernel),
            "mine"
        );
    }
}
