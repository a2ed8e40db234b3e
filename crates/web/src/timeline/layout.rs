//! Canvas geometry around the core's row layout: the ruler on top, the label gutter on the left.

pub use tracelight_core::view::layout::*;

/// Height of the time ruler (ticks on top, step markers below).
pub const RULER_PX: f64 = 38.0;
/// Height of the step-marker band at the bottom of the ruler.
pub const STEP_BAND_PX: f64 = 14.0;
pub use crate::widgets::geometry::GUTTER_PX;
