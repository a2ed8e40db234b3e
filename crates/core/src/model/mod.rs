//! The columnar trace model: parallel `Vec`s indexed by `u32`, strings interned once, time in `i64` ns.

pub mod arg_keys;
pub mod args;
pub mod exec_trace;
pub mod ids;
pub mod steps;
pub mod strings;
pub mod time;
mod trace;
pub mod wire;

pub use ids::Ids;
pub use strings::{Interner, StrId};
pub use time::Ns;
pub use trace::*;
