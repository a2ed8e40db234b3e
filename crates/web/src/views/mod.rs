//! DOM views. One module per tab; `open` and `session_bar` frame them.

pub mod facts;
pub mod gpu;
pub mod kernels;
pub mod open;
pub mod operators;
pub mod overview;
pub mod session_bar;
