//! The Kernels tab's "tensor cores" column: what a kernel's name says about the unit it ran on,
//! read through [`super::math_unit::kernel_math`] — the one place that decides a math unit —
//! so the column, MFU and the roofline agree. Emitted as `tensor_cores` in `analyze --json` and
//! behind the "no tensor cores" recommendation.

use super::math_unit::{kernel_math, Dtype, Unit};
use serde::Serialize;

/// What a kernel's name says about tensor cores; no hint (`None`) when it says nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TensorCores {
    /// The name carries a tensor-core mark.
    Yes,
    /// An fp32 GEMM on the SIMT cores (`sgemm`, an xmma `…ffma…` kernel).
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

/// Whether `name` is an fp32 GEMM on the SIMT units.
pub fn is_fp32_simt_gemm(name: &str) -> bool {
    let k = kernel_math(name);
    k.unit == Some(Unit::Simt)
        && matches!(k.dtype, Some(Dtype::Fp32) | None)
        && name.to_ascii_lowercase().contains("gemm")
}

/// The tensor-core hint of a kernel name.
pub fn tensor_core_hint(name: &str) -> Option<TensorCores> {
    if is_fp32_simt_gemm(name) {
        return Some(TensorCores::NoFp32Simt);
    }
    (kernel_math(name).unit == Some(Unit::TensorCore)).then_some(TensorCores::Yes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_tensor_cores_or_fp32_simt() {
        // cuBLAS's SIMT fp32 GEMMs, and the H100 fixture's xmma template built for FFMA.
        for n in [
            "volta_sgemm_128x64_nn",
            "ampere_sgemm_64x32_sliced1x4_tn",
            "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel",
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>",
        ] {
            assert_eq!(tensor_core_hint(n), Some(TensorCores::NoFp32Simt), "{n}");
        }
        for n in [
            "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
            "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4",
            "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NNT",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
            "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>",
        ] {
            assert_eq!(tensor_core_hint(n), Some(TensorCores::Yes), "{n}");
        }
        for n in [
            "void at::native::vectorized_elementwise_kernel<4>",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            "Memcpy HtoD (Pageable -> Device)",
        ] {
            assert_eq!(tensor_core_hint(n), None, "{n}");
        }
    }
}
