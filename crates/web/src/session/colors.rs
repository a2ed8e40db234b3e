//! The colours of a trace's slices under the session's kernel rules ([`FineRules`]): one place,
//! so a rule edit on the Kernels tab recolours every view that draws slices (timeline, flame
//! graph, aligned ranks) the same way.

use super::{FineRules, SessionRef};
use leptos::prelude::*;
use std::sync::Arc;
use tracelight_core::analysis::kernels::FineRule;
use tracelight_core::view::slice_colors::SliceColors;

/// `file`'s slice colours under `rules` (the default colours when `file` is not a trace).
pub fn slice_colors(session: &SessionRef, file: usize, rules: &[FineRule]) -> Arc<SliceColors> {
    Arc::new(
        session
            .trace(file)
            .map(|f| SliceColors::new(&f.trace, rules))
            .unwrap_or_default(),
    )
}

/// [`slice_colors`] under the session's rules, recomputed when they change.
pub fn slice_colors_memo(session: &SessionRef, file: usize) -> Memo<Arc<SliceColors>> {
    let rules = FineRules::current().0;
    let session = session.clone();
    Memo::new(move |_| rules.with(|r| slice_colors(&session, file, r)))
}
