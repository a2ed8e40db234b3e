//! The Compare tab (issue 14): the open session is A, a second trace or run folder is B (picked
//! here, or `?url=A&compare=B`), and the page shows `tracelight diff A B`: per-step overview with
//! spreads, the verdict, the step breakdown and kernel categories side by side, and the op and
//! kernel diff tables (`tables`), and one step of each side's timeline, A above B (`timelines`), and the differential flame graph
//! (`flame`); two allocator snapshots get the snapshot diff instead (`snapshot`). Every figure comes from `tracelight_core::report::diff`, the
//! same struct the CLI prints. Uses `session`, `widgets` and `platform` only; `app.rs` adds the tab.

pub mod flame;
pub mod memory;
pub mod snapshot;
pub mod tables;
pub mod timelines;
pub mod view;
