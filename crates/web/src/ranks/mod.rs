//! The ranks view (issue 13): several rank files of one distributed run side by side (per-rank
//! step time, compute, communication, idle, the straggler). Empty until that view lands; it uses
//! `session`, `widgets` and `platform` only, and `app.rs` adds its tab.
