//! The Trend tab (issue 28): a folder of runs (traces, digests or run folders, named by date or
//! commit) as a series — step time, step breakdown, top kernels and peak memory per run as small
//! multiples, the change points marked, a click on a point (that run against the one before) or
//! between two runs (those two) opening the pair in Compare. Every figure is core's
//! `report::trend` (what `tracelight trend DIR --json` prints); the geometry is core's
//! `view::trend`. Uses `session`, `widgets` and `platform` only; `app.rs` adds the tab.

mod paint;
pub mod view;
