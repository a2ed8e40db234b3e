//! View-side logic of the timeline that needs no canvas: the viewport mapping, the level-of-detail
//! index, track layout, hit testing, area-selection aggregation, the flame graph, search, counter series, slice
//! details and deep-link encoding. Kept here (not in the web crate) so it is tested natively and
//! the browser only adapts it (STYLE 1).

pub mod aggregate;
pub mod aligned;
pub mod byte_axis;
pub mod counters;
pub mod details;
pub mod flame;
pub mod hit;
pub mod layout;
pub mod link;
pub mod lod;
pub mod palette;
pub mod parts;
pub mod pyramid;
pub mod roofline;
pub mod search;
pub mod slice_colors;
pub mod steps;
pub mod trend;
pub mod viewport;

#[cfg(test)]
pub(crate) mod testutil;
