//! Two timelines shown together (Compare: one step of A above the same step of B): what they
//! share. Each side keeps its own session and trace; the window is shared *relative to each
//! side's origin* (its step's start), so both scroll and zoom together on one relative axis.
//! Here, not in a feature, because the compare view owns these signals and the timeline follows
//! them (features never import each other; `app.rs` hands the timeline to the compare view).

use crate::session::SessionRef;
use leptos::prelude::*;
use std::sync::Arc;

/// Draws one side: its session, its trace file, the pair (`app.rs` passes the timeline).
pub type PairedFn = fn(SessionRef, usize, Pair) -> AnyView;

/// Occurrences to show on one side: slice indices of that side's trace, and their label.
pub type PairReveal = Option<(Arc<Vec<u32>>, String)>;

#[derive(Clone, Copy)]
pub struct Pair {
    /// "A" or "B", on the view (`data-side`) for tests and styles.
    pub side: &'static str,
    /// This side's time 0 in its trace's ns (the chosen step's start).
    pub origin_ns: i64,
    /// The chosen step's length: a revealed row jumps to an occurrence inside `[0, step_ns)`.
    pub step_ns: i64,
    /// The shown window relative to the origin, shared by both sides.
    pub rel: RwSignal<(i64, i64)>,
    pub reveal: RwSignal<PairReveal>,
}

impl Pair {
    pub fn window(&self) -> (i64, i64) {
        let (a, b) = self.rel.get_untracked();
        (
            self.origin_ns.saturating_add(a),
            self.origin_ns.saturating_add(b),
        )
    }
}
