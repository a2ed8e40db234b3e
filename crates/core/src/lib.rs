//! Tracelight's core: PyTorch profiler formats in, a columnar model and analyses out.
//!
//! Pure Rust with no wasm, DOM or terminal dependencies, so the same code serves the browser (through
//! `tracelight-web`) and CI pipelines (through the `tracelight` CLI), and is tested natively.
//!
//! ```
//! use tracelight_core::ingest::{load_bytes, Loaded};
//! let json = br#"{"traceEvents": [
//!   {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10.5, "dur": 2.25}
//! ]}"#;
//! let Ok(Loaded::Trace(t)) = load_bytes("t.json", json) else { panic!() };
//! assert_eq!(t.slices.len(), 1);
//! assert_eq!(t.slices.start[0], 10_500); // ns, exactly
//! assert_eq!(t.str(t.slices.name[0]), "aten::mm");
//! ```

pub mod analysis;
pub mod digest;
pub mod error;
pub mod ingest;
pub mod model;
pub mod par;
pub mod parquet;
pub mod report;
pub mod run;
pub mod sort;
pub mod view;
pub mod warnings;

pub use error::{Error, ErrorKind, Result};
