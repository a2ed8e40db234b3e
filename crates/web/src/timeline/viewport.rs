//! The viewport lives in the core (tested natively); re-exported for the painters.

pub use tracelight_core::view::viewport::*;
