//! The palette as the views use it: the core's one palette ([`tracelight_core::view::palette`],
//! colours as data) for category names and slice kinds. Nothing here defines a colour.

use tracelight_core::model::SliceKind;
use tracelight_core::view::palette;
pub use tracelight_core::view::palette::SliceCat;

/// The colour of a category by any classification's name (`kernel`, `matmul`, `comm`, a step
/// part, a finer category…).
pub fn color_of(category: &str) -> &'static str {
    palette::color(category)
}

/// Colour of a Flight Recorder cell state (`completed`, `absent`, …).
pub fn fr_state_color(state: &str) -> &'static str {
    palette::fr_state_color(state)
}

/// Colour of a slice kind (compute kernels for `Kernel`).
pub fn kind_color(k: SliceKind) -> &'static str {
    SliceCat::of(k, false).color()
}
