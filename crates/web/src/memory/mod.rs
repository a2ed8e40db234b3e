//! Memory views: CUDA snapshots, memory timelines and a trace's `[memory]` events (memory issue).

pub mod lane;
pub mod view;
