//! The Roofline tab: every op (by name and shapes) of a known family on log-log axes of
//! arithmetic intensity and achieved TFLOPS, against the memory roof and the compute roofs of
//! the math units the ops ran on (core's `analysis::roofline`, laid out by `view::roofline`).

mod paint;
mod view;

pub use view::RooflineView;
