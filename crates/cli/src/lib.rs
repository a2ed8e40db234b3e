//! The `tracelight` command's library half: argument handling and the reports of `summary`,
//! `analyze --json`, `table` and `diff`. A library so that the Python bindings (`crates/py`)
//! produce what the command prints by calling the very same functions, not a copy of them.

pub mod analyze;
pub mod commands;
pub mod diff;
pub mod digest;
pub mod et;
pub mod fr;
pub mod input;
pub mod mcp;
pub mod mcp_args;
pub mod mcp_slices;
pub mod mcp_tools;
pub mod memory;
pub mod run;
pub mod run_report;
pub mod snapshot_diff;
pub mod trend;
pub mod view;
