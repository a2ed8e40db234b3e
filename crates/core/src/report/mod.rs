//! Text and JSON renderings of what was loaded, shared by the CLI and the page.

pub mod analysis;
pub mod analysis_wire;
pub mod diff;
pub mod et;
pub mod facts;
pub mod flight_recorder;
pub mod json;
pub mod memory;
pub mod modules;
pub mod num;
pub mod oom_run;
pub mod run;
pub mod run_json;
pub mod run_steps;
pub mod scoped;
pub mod snapshot_diff;
pub mod snapshot_flame_wire;
pub mod snapshot_wire;
pub mod straggler;
pub mod summary;
pub mod table;
pub mod trend;
pub mod trend_runs;
pub mod why;
