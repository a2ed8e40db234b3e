//! The compare view (issue 14): two traces (before / after a change) diffed by operator, kernel
//! and step. Empty until that view lands; it uses `session`, `widgets` and `platform` only, and
//! `app.rs` adds its tab.
