//! Which math unit an op's FLOPs ran on, and so which peak of the device table
//! ([`super::devices`]) it is held against — decided here and nowhere else. MFU, the roofline,
//! the headline blend, the Kernels tab's "tensor cores" column and the "no tensor cores"
//! recommendation all ask this module.
//!
//! The trace records no instruction mix, so the unit comes from names:
//! - **Kernel names** say the unit. cuBLAS / CUTLASS / cuDNN names carry the MMA instruction
//!   shape (`s1688`, `s16816`, `h884`, `h1688`, `i8816`), the MMA family (`hmma`, `imma`, `dmma`,
//!   `wmma`, `gmma`, `wgmma`, `tensorop`), Hopper's cuBLASLt kernels are `nvjet_*`, flash / fused
//!   attention runs on tensor cores; `ffma`, `simt`, `gemv` and a plain `sgemm`/`dgemm` without
//!   any of those marks are the SIMT (CUDA-core) units — `sm80_xmma_gemm_f32f32_f32f32_f32_…_ffma`
//!   is an xmma template instantiated for FFMA, not a tensor-core kernel.
//! - **Kernel names** often say the dtype too (`bf16`, `f16`/`fp16`/`h884`, `e4m3`, `tf32`,
//!   `s1688`/`tensorop_s`): autocast and TF32 show up only there.
//! - **The op's `Input type`** says the dtype otherwise; fp32 inputs on tensor cores are TF32.
//! - Without kernels (a CPU trace, kernels not linked), an op of a matrix family (GEMM,
//!   convolution, attention) with half-precision inputs is on tensor cores (cuBLAS and cuDNN
//!   use them for fp16/bf16 on every part that has them); with fp32 inputs it is held against the
//!   SIMT fp32 peak (torch leaves `allow_tf32` off for matmuls by default); every other family
//!   runs on the SIMT units.

use super::devices::Device;
use serde::Serialize;

/// A math unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Tensor cores (NVIDIA) / matrix cores (AMD).
    TensorCore,
    /// CUDA cores / vector ALUs.
    Simt,
}

impl Unit {
    pub fn label(self) -> &'static str {
        match self {
            Unit::TensorCore => "tensor cores",
            Unit::Simt => "SIMT",
        }
    }
}

/// The dtype class of an op's math.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    Fp64,
    Fp32,
    /// fp32 inputs on tensor cores.
    Tf32,
    Bf16,
    Fp16,
    Fp8,
    Int8,
}

impl Dtype {
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::Fp64 => "fp64",
            Dtype::Fp32 => "fp32",
            Dtype::Tf32 => "tf32",
            Dtype::Bf16 => "bf16",
            Dtype::Fp16 => "fp16",
            Dtype::Fp8 => "fp8",
            Dtype::Int8 => "int8",
        }
    }

    fn is_half(self) -> bool {
        matches!(self, Dtype::Bf16 | Dtype::Fp16 | Dtype::Fp8)
    }
}

/// The math an op ran: dtype and unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Math {
    pub dtype: Dtype,
    pub unit: Unit,
}

impl Math {
    /// `tf32 on tensor cores`.
    pub fn label(self) -> String {
        format!("{} on {}", self.dtype.as_str(), self.unit.label())
    }
}

/// What a kernel name says; either part may be silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KernelMath {
    pub unit: Option<Unit>,
    pub dtype: Option<Dtype>,
}

/// Names that are matrix-multiply / convolution / attention kernels (the only ones whose dtype
/// marks say anything about a math unit: an elementwise `…Half…` kernel is not fp16 MMA).
const MATMUL_KERNEL: &[&str] = &[
    "gemm",
    "gemv",
    "conv",
    "cutlass",
    "cublas",
    "cudnn",
    "nvjet",
    "xmma",
    "mma",
    "flash",
    "fmha",
    "attention",
    "sdpa",
    "wgrad",
    "dgrad",
    "winograd",
    "s1688",
    "s16816",
    "h884",
    "h1688",
    "h16816",
    "i8816",
];

/// Marks of the SIMT units in a matmul kernel's name.
const SIMT_MARKS: &[&str] = &["ffma", "simt", "gemv", "hfma", "dfma"];

/// Marks of tensor / matrix cores.
const TENSOR_MARKS: &[&str] = &[
    "tensorop",
    "hmma",
    "imma",
    "dmma",
    "wmma",
    "gmma",
    "s1688",
    "s16816",
    "h884",
    "h1688",
    "h16816",
    "i8816",
    "nvjet",
    "flash",
    "fmha",
    "tf32",
    "bf16",
    "fp16",
    "f16",
    "e4m3",
    "e5m2",
    "sm90_xmma",
    "sm100_xmma",
];

/// What a kernel's name says about its unit and dtype.
pub fn kernel_math(name: &str) -> KernelMath {
    let l = name.to_ascii_lowercase();
    let has = |subs: &[&str]| subs.iter().any(|s| l.contains(s));
    if !has(MATMUL_KERNEL) {
        return KernelMath::default();
    }
    let dtype = if has(&["bf16"]) {
        Some(Dtype::Bf16)
    } else if has(&["fp8", "e4m3", "e5m2"]) {
        Some(Dtype::Fp8)
    } else if has(&["fp16", "f16", "half", "h884", "h1688", "h16816", "hgemm"]) {
        Some(Dtype::Fp16)
    } else if has(&["tf32", "s1688", "s16816", "tensorop_s"]) {
        Some(Dtype::Tf32)
    } else if has(&["i8816", "imma", "int8"]) {
        Some(Dtype::Int8)
    } else if has(&["dgemm", "dmma", "f64"]) {
        Some(Dtype::Fp64)
    } else if has(&["sgemm"]) || l.contains("f32f32_f32f32_f32") {
        Some(Dtype::Fp32)
    } else {
        None
    };
    // A plain sgemm/dgemm is SIMT unless a tensor mark says otherwise; an explicit SIMT mark
    // (ffma, simt, gemv) wins over a template family name such as xmma.
    let unit = if has(SIMT_MARKS) {
        Some(Unit::Simt)
    } else if has(TENSOR_MARKS) {
        Some(Unit::TensorCore)
    } else if has(&["sgemm", "dgemm"]) {
        Some(Unit::Simt)
    } else {
        None
    };
    KernelMath {
        unit,
        dtype: if unit == Some(Unit::Simt) && dtype == Some(Dtype::Tf32) {
            Some(Dtype::Fp32)
        } else {
            dtype
        },
    }
}

/// A dtype class from torch's `Input type` text (`["float", "double", "float"]`): the first
/// tensor input decides; a `double` after it is a Python scalar operand (`x * 0.5`), not fp64
/// math. `None` when no input has a type.
pub fn input_dtype(input_type: &str) -> Option<Dtype> {
    let first = if input_type.starts_with('[') {
        input_type
            .split('"')
            .skip(1)
            .step_by(2)
            .find(|x| !x.is_empty() && !x.starts_with("Scalar") && *x != "TensorList")?
    } else if input_type.is_empty() {
        return None;
    } else {
        input_type
    };
    Some(if first.contains("BFloat16") {
        Dtype::Bf16
    } else if first.contains("Half") {
        Dtype::Fp16
    } else if first.contains("Float8") {
        Dtype::Fp8
    } else if first.contains("double") {
        Dtype::Fp64
    } else if first.contains("char") || first.contains("int8") {
        Dtype::Int8
    } else {
        Dtype::Fp32
    })
}

/// The math of an op: `matrix_family` for GEMM / convolution / attention ops, `input` from its
/// `Input type`, `kernel` from the kernels it launched (the longest matmul kernel's name), if any.
pub fn op_math(matrix_family: bool, input: Option<Dtype>, kernel: KernelMath) -> Math {
    let unit = match kernel.unit {
        Some(u) => u,
        None if matrix_family && input.is_some_and(Dtype::is_half) => Unit::TensorCore,
        None => Unit::Simt,
    };
    let dtype = match (unit, input, kernel.dtype) {
        // Half-precision inputs are what they are; kernels outrank fp32 inputs (autocast, TF32).
        (_, Some(d), _) if d.is_half() || d == Dtype::Fp64 => d,
        (_, _, Some(k)) => k,
        (Unit::TensorCore, _, None) => Dtype::Tf32,
        (Unit::Simt, Some(d), None) => d,
        (Unit::Simt, None, None) => Dtype::Fp32,
    };
    // TF32 is a tensor-core format; on SIMT it is plain fp32.
    let dtype = match (unit, dtype) {
        (Unit::Simt, Dtype::Tf32) => Dtype::Fp32,
        (Unit::TensorCore, Dtype::Fp32) => Dtype::Tf32,
        (_, d) => d,
    };
    Math { dtype, unit }
}

/// The dense peak (TFLOPS, for one device the runtime shows) of `m` on `dev`, and the math it
/// really is held against when the part lacks that unit (TF32 on a V100 falls back to the SIMT
/// fp32 peak; bf16 on a part without bf16 units likewise).
pub fn peak(dev: &Device, m: Math) -> (f64, Math) {
    let x = &dev.matrix;
    let simt = |d: Dtype| {
        let v = match d {
            Dtype::Fp64 => dev.vector.fp64.unwrap_or(dev.vector.fp32),
            _ => dev.vector.fp32,
        };
        (
            dev.per_device(v),
            Math {
                dtype: if d == Dtype::Fp64 {
                    Dtype::Fp64
                } else {
                    Dtype::Fp32
                },
                unit: Unit::Simt,
            },
        )
    };
    if m.unit == Unit::Simt {
        return simt(m.dtype);
    }
    let tc = match m.dtype {
        Dtype::Fp64 => x.fp64,
        Dtype::Fp32 | Dtype::Tf32 => x.tf32.or(x.fp32),
        Dtype::Bf16 => x.bf16,
        Dtype::Fp16 => x.fp16,
        Dtype::Fp8 => x.fp8,
        // Integer tensor-core peaks are TOPS; the fp8 figure equals int8's on every part listed.
        Dtype::Int8 => x.fp8.or(x.fp16),
    };
    match tc {
        Some(v) => (dev.per_device(v), m),
        None => simt(m.dtype),
    }
}

#[cfg(test)]
mod tests {
    use super::super::devices::device_for;
    use super::*;

    fn km(n: &str) -> (Option<Unit>, Option<&'static str>) {
        let k = kernel_math(n);
        (k.unit, k.dtype.map(Dtype::as_str))
    }

    #[test]
    fn kernel_names_say_unit_and_dtype() {
        use Unit::*;
        let tf32 = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>";
        assert_eq!(km(tf32), (Some(TensorCore), Some("tf32")));
        assert_eq!(
            km("sm80_xmma_gemm_f32f32_tf32f32_f32_nn"),
            (Some(TensorCore), Some("tf32"))
        );
        assert_eq!(
            km("ampere_bf16_s16816gemm_bf16_128x128"),
            (Some(TensorCore), Some("bf16"))
        );
        assert_eq!(
            km("ampere_fp16_s16816gemm_fp16_64x64"),
            (Some(TensorCore), Some("fp16"))
        );
        assert_eq!(
            km("volta_h884gemm_64x64_nn"),
            (Some(TensorCore), Some("fp16"))
        );
        assert_eq!(
            km("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"),
            (Some(TensorCore), Some("bf16"))
        );
        assert_eq!(
            km("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT"),
            (Some(TensorCore), None)
        );
        assert_eq!(
            km("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26"),
            (Some(TensorCore), Some("fp16"))
        );
        // SIMT: plain sgemm, CUTLASS simt, and the xmma template built for FFMA (H100 fixture).
        assert_eq!(km("volta_sgemm_128x64_nn"), (Some(Simt), Some("fp32")));
        assert_eq!(
            km("ampere_sgemm_64x32_sliced1x4_tn"),
            (Some(Simt), Some("fp32"))
        );
        assert_eq!(
            km("void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>"),
            (Some(Simt), Some("fp32"))
        );
        assert_eq!(
            km("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel"),
            (Some(Simt), Some("fp32"))
        );
        // Not matmul kernels: their dtype marks say nothing about MMA.
        assert_eq!(
            km("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>>"),
            (None, None)
        );
        assert_eq!(km("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"), (None, None));
    }

    #[test]
    fn inputs_and_kernels_decide_the_math() {
        use Dtype::*;
        use Unit::*;
        let tc = |d| KernelMath {
            unit: Some(TensorCore),
            dtype: d,
        };
        let m = |d, u| Math { dtype: d, unit: u };
        // fp32 inputs on a TF32 kernel; autocast to bf16; bf16 inputs win over a silent kernel.
        assert_eq!(
            op_math(true, Some(Fp32), tc(Some(Tf32))),
            m(Tf32, TensorCore)
        );
        assert_eq!(
            op_math(true, Some(Fp32), tc(Some(Bf16))),
            m(Bf16, TensorCore)
        );
        assert_eq!(op_math(true, Some(Bf16), tc(None)), m(Bf16, TensorCore));
        assert_eq!(op_math(true, Some(Fp32), tc(None)), m(Tf32, TensorCore));
        // No kernels: half on tensor cores, fp32 on SIMT, non-matrix families on SIMT.
        let none = KernelMath::default();
        assert_eq!(op_math(true, Some(Bf16), none), m(Bf16, TensorCore));
        assert_eq!(op_math(true, Some(Fp32), none), m(Fp32, Simt));
        assert_eq!(op_math(false, Some(Bf16), none), m(Bf16, Simt));
        assert_eq!(op_math(true, None, none), m(Fp32, Simt));
        assert_eq!(
            input_dtype("[\"float\", \"double\", \"float\"]"),
            Some(Fp32)
        );
        assert_eq!(input_dtype("[\"\", \"c10::BFloat16\"]"), Some(Bf16));
        assert_eq!(input_dtype("[\"Scalar\", \"c10::Half\"]"), Some(Fp16));
        assert_eq!(input_dtype("[\"double\", \"double\"]"), Some(Fp64));
        assert_eq!(input_dtype("[]"), None);
        assert_eq!(input_dtype(""), None);
    }

    #[test]
    fn peaks_follow_the_unit_and_fall_back_where_the_part_lacks_it() {
        use Dtype::*;
        use Unit::*;
        let m = |d, u| Math { dtype: d, unit: u };
        let Some(a100) = device_for("NVIDIA A100-SXM4-80GB") else {
            panic!("A100 is in the table")
        };
        assert_eq!(peak(a100, m(Tf32, TensorCore)).0, 156.0);
        assert_eq!(peak(a100, m(Fp32, Simt)).0, 19.5);
        assert_eq!(peak(a100, m(Bf16, TensorCore)).0, 312.0);
        assert_eq!(peak(a100, m(Fp64, TensorCore)).0, 19.5);
        assert_eq!(peak(a100, m(Fp64, Simt)).0, 9.7);
        let Some(v100) = device_for("Tesla V100-SXM2-32GB") else {
            panic!("V100 is in the table")
        };
        assert_eq!(peak(v100, m(Tf32, TensorCore)), (15.7, m(Fp32, Simt)));
        assert_eq!(peak(v100, m(Fp16, TensorCore)).0, 125.0);
        // MI250X: two GCDs per datasheet part, fp32 on the matrix cores.
        let Some(mi) = device_for("AMD Instinct MI250X") else {
            panic!("MI250X is in the table")
        };
        assert_eq!(peak(mi, m(Tf32, TensorCore)).0, 95.7 / 2.0);
        assert_eq!(mi.bandwidth_gbs(), 3276.8 / 2.0);
    }
}
