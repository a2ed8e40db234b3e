//! Sizes that canvases drawn one under another share so they line up.

/// Width of the timeline's sticky track-label gutter; lanes drawn under the timeline (the memory
/// lane) leave the same width for their labels so their time axes match.
pub const GUTTER_PX: f64 = 210.0;
