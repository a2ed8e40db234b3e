//! Memory views: CUDA snapshots, memory timelines and a trace's `[memory]` events (memory issue).
//! Charts are built once per source by the core (`analysis::memory_chart`) and cached; this module
//! only lays out, paints and handles input.

pub mod chart;
pub mod detail;
pub mod dump;
pub mod flame;
pub mod lane;
pub mod ops;
pub mod segments;
pub mod tables;
pub mod view;
