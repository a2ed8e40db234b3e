//! Analyses: pure functions from a loaded [`crate::model::Trace`] to small serde structs, one file
//! per analysis. Each file names the definition it implements (docs/definitions.md) and the
//! reference it is checked against (torch `key_averages`, HTA, the TensorBoard plugin).

pub mod autograd;
pub mod collectives;
pub mod comm_calls;
pub mod devices;
pub mod et;
pub mod et_link;
pub mod flight_recorder;
pub mod flops;
pub mod gaps;
pub mod gpu;
pub mod graphs;
pub mod idle;
pub mod intervals;
pub mod kernels;
pub mod launch;
pub mod math_unit;
pub mod memory;
pub mod memory_chart;
pub mod memory_ops;
pub mod mfu;
pub mod modules;
pub mod op_cost;
pub mod ops;
pub mod per_step;
pub mod recommend;
pub mod roofline;
pub mod scope;
pub mod snapshot;
pub mod snapshot_diff;
pub mod snapshot_dump;
pub mod snapshot_flame;
pub mod snapshot_frames;
pub mod snapshot_ranks;
pub mod snapshot_replay;
pub mod snapshot_state;
pub mod source;
pub mod steps;
pub mod tensor_cores;
