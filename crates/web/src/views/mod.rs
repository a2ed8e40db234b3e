//! DOM views. One module per tab; `open` and `session_bar` frame them; `table`, `bars`, `fmt`,
//! `export` and `reveal` are the pieces the analysis views share.

pub mod bars;
pub mod export;
pub mod facts;
pub mod fmt;
pub mod gpu;
pub mod kernels;
pub mod open;
pub mod operators;
pub mod overview;
pub mod ranks;
pub mod recs;
pub mod reveal;
pub mod session_bar;
pub mod steps;
pub mod table;
