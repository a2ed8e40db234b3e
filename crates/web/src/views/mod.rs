//! The analysis tabs (Overview, Operators, Kernels, GPU) and the frame around them (`open`, the
//! open bar; `session_bar`, the file list and tab bar). One module per tab; `facts`, `recs`,
//! `steps` and `ranks` are Overview / GPU panels. Shared pieces are in `crate::widgets`.

pub mod facts;
pub mod gpu;
pub mod graphs;
pub mod idle;
pub mod kernels;
pub mod modules;
pub mod open;
pub mod operators;
pub mod overview;
pub mod recs;
pub mod scope;
pub mod session_bar;
pub mod steps;
