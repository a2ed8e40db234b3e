//! The one palette: the colour of each category of work, as data, for every place that draws one
//! (timeline slices and legend, category bars, step breakdown, GPU time bars). One concept, one
//! colour: a compute kernel is the same green on the timeline as in the bars, red is always a
//! memory copy, brown always communication, whatever classification named it (slice kind, seed,
//! finer rules, HTA kernel type, step-breakdown part).

use crate::model::SliceKind;

/// Colour of anything no entry names.
pub const OTHER: &str = "#bab0ac";

/// `(names, colour)`: every name of a concept across the classifications, then its colour.
pub const COLORS: &[(&[&str], &str)] = &[
    // CPU side (slice kinds, step part `cpu_exec`).
    // Idle causes (analysis::idle) share the colour of what the host was doing.
    (&["cpu_op", "cpu_exec", "host_ops"], "#4e79a7"),
    (&["user_annotation"], "#9c755f"),
    (&["python_function", "python"], "#b07aa1"),
    (
        &["runtime", "cuda_runtime", "cuda_driver", "launch_bound"],
        "#f28e2b",
    ),
    (&["dataloader", "data_loading"], "#ff9da7"),
    (&["device_sync"], "#b6992d"),
    (&["queued"], "#79706e"),
    (&["other_stream"], "#d4a6c8"),
    // GPU compute: kernel kind, step part `kernel`, seed `matmul`, fine `gemm`, HTA `computation`.
    (
        &["kernel", "compute", "computation", "matmul", "gemm"],
        "#59a14f",
    ),
    // Finer kernel categories: shades apart from each other and from the kinds above.
    (&["attention"], "#8cd17d"),
    (&["convolution"], "#499894"),
    (&["triton"], "#86bcb6"),
    (&["elementwise"], "#f1ce63"),
    (&["reduction/norm/softmax", "reduction", "norm"], "#a0cbe8"),
    (&["optimizer"], "#ffbe7d"),
    // Communication: NCCL kernels (seed / fine `comm`, HTA and step part `communication`).
    (&["comm", "communication", "collective_wait"], "#8c564b"),
    // Memory copies: kind and fine `memcpy`, seed `memory`, HTA `memory`.
    (
        &["memcpy", "memory", "gpu_memcpy", "h2d_copy", "copy"],
        "#e15759",
    ),
    (&["memset", "gpu_memset"], "#d37295"),
    (&["gpu_user_annotation"], "#76b7b2"),
    // GPU time that is neither: HTA's non-compute, idle.
    (&["non-compute"], "#edc948"),
    (&["idle"], "#d0d7de"),
    (&["other"], OTHER),
];

/// Memory charts' colours: a separate concept space from the work categories above (an
/// allocation is not a kernel), so colours may repeat between the two tables but not within one.
/// Categories are torch's memory-timeline categories (`export_memory_timeline`), in its plot
/// order's colours.
pub const MEMORY: &[(&str, &str)] = &[
    ("parameter", "#4e79a7"),
    ("optimizer_state", "#f28e2c"),
    ("input", "#59a14f"),
    ("temporary", "#bab0ab"),
    ("activation", "#e15759"),
    ("gradient", "#76b7b2"),
    ("autograd_detail", "#af7aa1"),
    ("other", "#9c755f"),
];

/// Flight Recorder cells (the Ranks tab's ranks × sequence grid): what a rank did with one
/// collective. Its own concept space: finished is compute's green, running the yellow of work
/// not yet done, queued orange, never issued memory-copy red (the alarm), unknown greys.
pub const FR_STATES: &[(&str, &str)] = &[
    ("completed", "#59a14f"),
    ("started", "#edc948"),
    ("scheduled", "#f28e2b"),
    ("absent", "#e15759"),
    ("lost", "#d0d7de"),
    ("no dump", "#bab0ac"),
];

/// The colour of a Flight Recorder cell state ([`FR_STATES`]).
pub fn fr_state_color(state: &str) -> &'static str {
    FR_STATES
        .iter()
        .find(|(n, _)| *n == state)
        .map_or(OTHER, |(_, c)| c)
}

/// memory_viz's palette (Tableau 10) for individual allocations, so they look as they do there.
pub const ALLOCATIONS: [&str; 10] = [
    "#4e79a7", "#f28e2c", "#e15759", "#76b7b2", "#59a14f", "#edc949", "#af7aa1", "#ff9da7",
    "#9c755f", "#bab0ab",
];

/// Lines that stand for individual names (the trend's top kernels): the same Tableau 10, one
/// colour per name in order.
pub const SERIES: [&str; 10] = ALLOCATIONS;

/// Allocations folded into one band ("summarized" in memory_viz).
pub const SUMMARIZED: &str = "#c8ccd1";

/// The colour of memory category `name`; `other`'s when unknown.
pub fn memory_color(name: &str) -> &'static str {
    MEMORY
        .iter()
        .find(|(n, _)| *n == name)
        .or(MEMORY.last())
        .map_or(OTHER, |(_, c)| c)
}

/// The colour of category `name` (any classification's name for it); [`OTHER`] when unknown.
pub fn color(name: &str) -> &'static str {
    slot_color(slot(name))
}

/// The slot of category `name` in [`COLORS`]: painters batch rectangles by slot, one fill per
/// colour. A name no entry has gets the slot of `other`.
pub fn slot(name: &str) -> usize {
    COLORS
        .iter()
        .position(|(names, _)| names.contains(&name))
        .unwrap_or(OTHER_SLOT)
}

/// The slot of `other` (and of any name the palette does not know).
pub const OTHER_SLOT: usize = COLORS.len() - 1;

/// The colour of a [`slot`].
pub fn slot_color(slot: usize) -> &'static str {
    COLORS.get(slot).map_or(OTHER, |(_, c)| c)
}

/// The wait heatmap's scale (the ranks view): no wait is `idle`'s grey, the longest wait is
/// communication's brown (a rank waiting at a collective spends communication time), a linear
/// blend in between; `frac` is clamped to 0..=1. Returns `#rrggbb`.
pub fn wait_heat(frac: f64) -> String {
    let rgb = |hex: &str| -> [f64; 3] {
        let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
        [(v >> 16) & 255, (v >> 8) & 255, v & 255].map(f64::from)
    };
    let (lo, hi) = (rgb(color("idle")), rgb(color("comm")));
    let t = if frac.is_finite() {
        frac.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let c: Vec<u8> = (0..3)
        .map(|k| (lo[k] + (hi[k] - lo[k]) * t).round() as u8)
        .collect();
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// What a slice's colour says when nothing finer is known: its kind, with communication kernels
/// apart from compute kernels. The timeline colours kernels finer, by their category under the
/// session's rules ([`crate::view::slice_colors`]); the rest by this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceCat {
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

impl SliceCat {
    pub const ALL: [SliceCat; 10] = [
        SliceCat::CpuOp,
        SliceCat::Annotation,
        SliceCat::Python,
        SliceCat::Runtime,
        SliceCat::Kernel,
        SliceCat::Comm,
        SliceCat::Memcpy,
        SliceCat::Memset,
        SliceCat::GpuAnnotation,
        SliceCat::Other,
    ];

    pub fn of(kind: SliceKind, comm: bool) -> SliceCat {
        match kind {
            SliceKind::CpuOp => SliceCat::CpuOp,
            SliceKind::UserAnnotation => SliceCat::Annotation,
            SliceKind::PythonFunction => SliceCat::Python,
            SliceKind::Runtime | SliceKind::Driver => SliceCat::Runtime,
            SliceKind::Kernel if comm => SliceCat::Comm,
            SliceKind::Kernel => SliceCat::Kernel,
            SliceKind::Memcpy => SliceCat::Memcpy,
            SliceKind::Memset => SliceCat::Memset,
            SliceKind::GpuAnnotation => SliceCat::GpuAnnotation,
            SliceKind::Other => SliceCat::Other,
        }
    }

    /// Its name in [`COLORS`].
    pub fn palette_name(self) -> &'static str {
        match self {
            SliceCat::CpuOp => "cpu_op",
            SliceCat::Annotation => "user_annotation",
            SliceCat::Python => "python_function",
            SliceCat::Runtime => "runtime",
            SliceCat::Kernel => "kernel",
            SliceCat::Comm => "comm",
            SliceCat::Memcpy => "memcpy",
            SliceCat::Memset => "memset",
            SliceCat::GpuAnnotation => "gpu_user_annotation",
            SliceCat::Other => "other",
        }
    }

    pub fn slot(self) -> usize {
        slot(self.palette_name())
    }

    pub fn color(self) -> &'static str {
        slot_color(self.slot())
    }

    /// Its legend label.
    pub fn label(self) -> &'static str {
        match self {
            SliceCat::CpuOp => "CPU op",
            SliceCat::Annotation => "annotation",
            SliceCat::Python => "python",
            SliceCat::Runtime => "CUDA runtime",
            SliceCat::Kernel => "kernel",
            SliceCat::Comm => "NCCL kernel",
            SliceCat::Memcpy => "memcpy",
            SliceCat::Memset => "memset",
            SliceCat::GpuAnnotation => "GPU annotation",
            SliceCat::Other => "other",
        }
    }
}

/// The palette name of a slice kind; a kernel that is communication is `comm`.
pub fn kind_name(kind: SliceKind, comm: bool) -> &'static str {
    SliceCat::of(kind, comm).palette_name()
}

/// The colour of a slice of `kind` ([`kind_name`]).
pub fn kind_color(kind: SliceKind, comm: bool) -> &'static str {
    color(kind_name(kind, comm))
}

/// The differential flame graph's diverging scale (ColorBrewer RdBu, colour-blind safe): red for
/// time that grew in B, blue for time that shrank, grey for unchanged; a frame's saturation
/// is its relative change, full at ±100 % and beyond.
pub const DIFF_GREW: &str = "#b2182b";
pub const DIFF_SHRANK: &str = "#2166ac";
pub const DIFF_SAME: &str = "#d9d9d9";
/// Frames only B has: the deepest red, apart from any growth by its outline in the legend.
pub const DIFF_NEW: &str = "#67001f";

/// The colour of a change `rel` = (B − A) ÷ A: grey blended toward [`DIFF_GREW`] or
/// [`DIFF_SHRANK`] by |rel| (at least a fifth of the way, so a visible change is visibly
/// coloured), clamped at ±1. Returns `#rrggbb`.
pub fn diff_heat(rel: f64) -> String {
    let rgb = |hex: &str| -> [f64; 3] {
        let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
        [(v >> 16) & 255, (v >> 8) & 255, v & 255].map(f64::from)
    };
    if !rel.is_finite() || rel == 0.0 {
        return DIFF_SAME.to_owned();
    }
    let lo = rgb(DIFF_SAME);
    let hi = rgb(if rel > 0.0 { DIFF_GREW } else { DIFF_SHRANK });
    let t = 0.2 + 0.8 * rel.abs().min(1.0);
    let c: Vec<u8> = (0..3)
        .map(|k| (lo[k] + (hi[k] - lo[k]) * t).round() as u8)
        .collect();
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{kernels, steps};

    #[test]
    fn every_classification_has_its_colours_and_one_concept_one_colour() {
        // Each name of every classification is in the palette (none falls to the fallback).
        let seed = kernels::SEED_RULES.iter().map(|(c, _)| *c);
        let fine = kernels::FINE_RULES.iter().map(|(c, _)| *c);
        let hta = ["communication", "memory", "computation", "other"];
        let idle = crate::analysis::idle::Cause::ALL.map(|c| c.slug());
        let idle = idle.iter().copied().filter(|c| *c != "unknown");
        for name in seed
            .chain(fine)
            .chain(steps::CATEGORIES)
            .chain(hta)
            .chain(idle)
        {
            assert!(COLORS.iter().any(|(n, _)| n.contains(&name)), "{name}");
        }
        // No name twice, no colour twice.
        let names: Vec<&str> = COLORS.iter().flat_map(|(n, _)| n.iter().copied()).collect();
        let mut dedup = names.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(dedup.len(), names.len());
        let mut colours: Vec<&str> = COLORS.iter().map(|(_, c)| *c).collect();
        colours.sort_unstable();
        colours.dedup();
        assert_eq!(colours.len(), COLORS.len());
        // The same concept under its different names: a kernel, a copy, communication.
        assert_eq!(kind_color(SliceKind::Kernel, false), color("matmul"));
        assert_eq!(kind_color(SliceKind::Kernel, false), color("kernel"));
        assert_eq!(kind_color(SliceKind::Kernel, true), color("communication"));
        assert_eq!(kind_color(SliceKind::Memcpy, false), color("memory"));
        assert_eq!(kind_color(SliceKind::CpuOp, false), color("cpu_exec"));
        assert_ne!(color("comm"), color("memcpy"));
        assert_eq!(color("no such category"), OTHER);
        assert_eq!(slot("no such category"), slot("other"));
        assert_eq!(COLORS[OTHER_SLOT].0, &["other"]);
        // The memory table: every category the memory timeline names has its own colour.
        for c in 0..=u8::MAX {
            let name = crate::analysis::memory_chart::category_name(c);
            if name == "unknown" {
                break;
            }
            assert!(MEMORY.iter().any(|(n, _)| *n == name), "{name}");
        }
        let mut mem: Vec<&str> = MEMORY.iter().map(|(_, c)| *c).collect();
        mem.sort_unstable();
        mem.dedup();
        assert_eq!(mem.len(), MEMORY.len());
        assert_eq!(memory_color("no such"), memory_color("other"));
        // Every slice category has its own slot, and its colour is that slot's.
        let mut slots: Vec<usize> = SliceCat::ALL.iter().map(|c| c.slot()).collect();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), SliceCat::ALL.len());
        for c in SliceCat::ALL {
            assert_eq!(c.color(), color(c.palette_name()), "{c:?}");
        }
    }

    #[test]
    fn wait_heat_runs_from_idle_to_comm_and_darkens_monotonically() {
        assert_eq!(wait_heat(0.0), color("idle"));
        assert_eq!(wait_heat(1.0), color("comm"));
        assert_eq!(wait_heat(-3.0), color("idle"));
        assert_eq!(wait_heat(f64::NAN), color("idle"));
        assert_eq!(wait_heat(7.0), color("comm"));
        // idle #d0d7de -> comm #8c564b: halfway is (0xd0+0x8c)/2 = 0xae, (0xd7+0x56)/2 = 0x96.5,
        // (0xde+0x4b)/2 = 0x94.5, rounded half away from zero.
        assert_eq!(wait_heat(0.5), "#ae9795");
        let sum = |h: &str| {
            let v = u32::from_str_radix(&h[1..], 16).unwrap_or(0);
            (v >> 16) + ((v >> 8) & 255) + (v & 255)
        };
        let steps: Vec<u32> = (0..=10).map(|k| sum(&wait_heat(k as f64 / 10.0))).collect();
        assert!(steps.windows(2).all(|w| w[1] < w[0]), "{steps:?}");
    }

    #[test]
    fn diff_heat_diverges_from_grey_and_saturates_at_double() {
        assert_eq!(diff_heat(0.0), DIFF_SAME);
        assert_eq!(diff_heat(f64::NAN), DIFF_SAME);
        assert_eq!(diff_heat(1.0), DIFF_GREW);
        assert_eq!(diff_heat(5.0), DIFF_GREW);
        assert_eq!(diff_heat(-1.0), DIFF_SHRANK);
        // +50 %: 0.2 + 0.8 × 0.5 = 60 % of the way from #d9d9d9 to #b2182b: red 217 − 39 × 0.6 =
        // 193.6 → 0xc2, green 217 − 193 × 0.6 = 101.2 → 0x65, blue 217 − 174 × 0.6 = 112.6 → 0x71.
        assert_eq!(diff_heat(0.5), "#c26571");
        assert_ne!(diff_heat(0.3), diff_heat(0.6));
    }
}
