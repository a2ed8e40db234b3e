//! Whether a kernel runs on tensor cores, read from its name (the trace records no instruction
//! mix): cuBLAS / CUTLASS / cuDNN names carry the MMA instruction shape (`1688`, `16816`, `884`),
//! the MMA family (`hmma`, `wmma`, `gmma`, `xmma`, `tensorop`) or the input type (`bf16`, `f16`,
//! `tf32`); Hopper cuBLAS kernels are `nvjet_*`; flash attention runs on tensor cores. A plain
//! `sgemm` without any of those is fp32 on the SIMT cores. Shown in the Kernels tab, emitted as
//! `tensor_cores` in `analyze --json`, and behind the "no tensor cores" recommendation.

use serde::Serialize;

/// What a kernel's name says about tensor cores; no hint (`None`) when it says nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TensorCores {
    /// The name carries a tensor-core mark.
    Yes,
    /// A plain `sgemm`: fp32 on the SIMT cores.
    NoFp32Simt,
}

impl TensorCores {
    /// The Kernels tab's cell text.
    pub fn label(self) -> &'static str {
        match self {
            TensorCores::Yes => "yes",
            TensorCores::NoFp32Simt => "no — fp32 SIMT",
        }
    }

    /// The `analyze --json` value.
    pub fn slug(self) -> &'static str {
        match self {
            TensorCores::Yes => "yes",
            TensorCores::NoFp32Simt => "no_fp32_simt",
        }
    }
}

/// Marks of a tensor-core kernel (MMA instruction shapes and families, CUTLASS/cuBLAS tags,
/// half-precision input types).
const TENSOR_CORE_MARKS: &[&str] = &[
    "tensorop", "xmma", "hmma", "wmma", "gmma", "1688", "16816", "884", "tf32", "bf16", "f16",
    "fp16", "nvjet", "flash",
];

/// Marks that make an `sgemm` a tensor-core kernel after all (TF32 / `s1688` CUTLASS names).
const SGEMM_TENSOR_MARKS: &[&str] = &[
    "tensorop", "xmma", "1688", "884", "tf32", "wmma", "hmma", "s16816",
];

/// Whether `name` is an fp32 SIMT GEMM: an `sgemm` with no tensor-core mark.
pub fn is_fp32_simt_gemm(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.contains("sgemm") && !SGEMM_TENSOR_MARKS.iter().any(|m| l.contains(m))
}

/// The tensor-core hint of a kernel name.
pub fn tensor_core_hint(name: &str) -> Option<TensorCores> {
    if is_fp32_simt_gemm(name) {
        return Some(TensorCores::NoFp32Simt);
    }
    let l = name.to_ascii_lowercase();
    TENSOR_CORE_MARKS
        .iter()
        .any(|m| l.contains(m))
        .then_some(TensorCores::Yes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_tensor_cores_or_fp32_simt() {
        // cuBLAS's SIMT fp32 GEMMs (Volta/Ampere naming: <arch>_sgemm_<tile>_<layout>).
        for n in ["volta_sgemm_128x64_nn", "ampere_sgemm_64x32_sliced1x4_tn"] {
            assert_eq!(tensor_core_hint(n), Some(TensorCores::NoFp32Simt), "{n}");
        }
        // Tensor-core GEMMs: an HMMA shape in a cuBLAS name, a TF32 CUTLASS sgemm, Hopper's
        // nvjet and sm90 xmma kernels, a bf16 CUTLASS kernel, flash attention.
        for n in [
            "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
            "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4",
            "ampere_sgemm_tf32_128x64_nn",
            "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NNT",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
            "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>",
        ] {
            assert_eq!(tensor_core_hint(n), Some(TensorCores::Yes), "{n}");
        }
        // Names that say nothing either way.
        for n in [
            "void at::native::vectorized_elementwise_kernel<4>",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            "Memcpy HtoD (Pageable -> Device)",
        ] {
            assert_eq!(tensor_core_hint(n), None, "{n}");
        }
        assert!(is_fp32_simt_gemm("volta_sgemm_128x64_nn"));
        assert!(!is_fp32_simt_gemm(
            "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4"
        ));
    }
}
