//! The palette as the views use it: the core's one palette ([`tracelight_core::view::palette`],
//! colours as data) for category names, and the timeline's slice categories ([`Cat`]).

use tracelight_core::model::SliceKind;
use tracelight_core::view::palette;

/// The colour of a category by any classification's name (`kernel`, `matmul`, `comm`, a step
/// part, a finer category…).
pub fn color_of(category: &str) -> &'static str {
    palette::color(category)
}

/// What a slice's colour says: its kind, with communication kernels apart from compute kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cat {
    CpuOp,
    Annotation,
    Python,
    Runtime,
    Kernel,
    Comm,
    Memcpy,
    Memset,
    GpuAnnotation,
    Other,
}

impl Cat {
    pub const ALL: [Cat; 10] = [
        Cat::CpuOp,
        Cat::Annotation,
        Cat::Python,
        Cat::Runtime,
        Cat::Kernel,
        Cat::Comm,
        Cat::Memcpy,
        Cat::Memset,
        Cat::GpuAnnotation,
        Cat::Other,
    ];

    pub fn of(kind: SliceKind, comm: bool) -> Cat {
        match kind {
            SliceKind::CpuOp => Cat::CpuOp,
            SliceKind::UserAnnotation => Cat::Annotation,
            SliceKind::PythonFunction => Cat::Python,
            SliceKind::Runtime | SliceKind::Driver => Cat::Runtime,
            SliceKind::Kernel if comm => Cat::Comm,
            SliceKind::Kernel => Cat::Kernel,
            SliceKind::Memcpy => Cat::Memcpy,
            SliceKind::Memset => Cat::Memset,
            SliceKind::GpuAnnotation => Cat::GpuAnnotation,
            SliceKind::Other => Cat::Other,
        }
    }

    /// Its name in the core palette ([`tracelight_core::view::palette`]).
    pub fn palette_name(self) -> &'static str {
        match self {
            Cat::CpuOp => "cpu_op",
            Cat::Annotation => "user_annotation",
            Cat::Python => "python_function",
            Cat::Runtime => "runtime",
            Cat::Kernel => "kernel",
            Cat::Comm => "comm",
            Cat::Memcpy => "memcpy",
            Cat::Memset => "memset",
            Cat::GpuAnnotation => "gpu_user_annotation",
            Cat::Other => "other",
        }
    }

    pub fn color(self) -> &'static str {
        palette::color(self.palette_name())
    }

    pub fn label(self) -> &'static str {
        match self {
            Cat::CpuOp => "CPU op",
            Cat::Annotation => "annotation",
            Cat::Python => "python",
            Cat::Runtime => "CUDA runtime",
            Cat::Kernel => "kernel",
            Cat::Comm => "NCCL kernel",
            Cat::Memcpy => "memcpy",
            Cat::Memset => "memset",
            Cat::GpuAnnotation => "GPU annotation",
            Cat::Other => "other",
        }
    }
}

/// Colour of a slice kind (compute kernels for `Kernel`).
pub fn kind_color(k: SliceKind) -> &'static str {
    Cat::of(k, false).color()
}
