//! A series of runs (the Trend tab, issue 28): each run of a folder opened as a trend is a
//! session of its own (its traces or digests), summed up as one side of a diff
//! ([`side_of`], the function Compare's A and B go through), and the series is core's
//! [`Trend`] of those sides — the struct `tracelight trend DIR --json` prints. Here, not in a
//! feature, because Compare and the trend both read it.

use crate::session::SessionRef;
use std::sync::Arc;
use tracelight_core::model::Trace;
use tracelight_core::report::diff::side::Side;
use tracelight_core::report::json::Analysis;
use tracelight_core::report::trend::Trend;

/// A session's traces as one side (its ranks, in rank order); ops keyed by name, or by name and
/// input shapes.
pub fn side_of(s: &SessionRef, by_shapes: bool) -> Option<Side> {
    let idx = s.trace_indices();
    let first = s.files.get(*idx.first()?)?.name.clone();
    let pairs: Vec<(&Trace, &Analysis)> = idx
        .iter()
        .filter_map(|&i| s.trace(i))
        .map(|tf| (&tf.trace, tf.analysis()))
        .collect();
    let label = if idx.len() > 1 {
        format!("{first} … ({} ranks)", idx.len())
    } else {
        first
    };
    Some(Side::of(&label, &pairs, by_shapes))
}

/// The runs of a trend and core's figures over them, in name order (`trend.runs[i]` is
/// `runs[i]`).
pub struct Series {
    /// Each run's name (its file or folder, less the format's suffixes) and its session.
    pub runs: Vec<(String, SessionRef)>,
    pub trend: Trend,
}

impl Series {
    /// The series of `runs` (any order); runs holding no Kineto trace are left out, named in
    /// the second value.
    pub fn of(mut runs: Vec<(String, SessionRef)>) -> (Series, Vec<String>) {
        tracelight_core::sort::by(&mut runs, |a, b| a.0.cmp(&b.0));
        let mut kept = Vec::with_capacity(runs.len());
        let mut sides = Vec::with_capacity(runs.len());
        let mut empty = Vec::new();
        for (name, s) in runs {
            match side_of(&s, false) {
                Some(mut side) => {
                    side.label.clone_from(&name);
                    sides.push((name.clone(), side));
                    kept.push((name, s));
                }
                None => empty.push(name),
            }
        }
        (
            Series {
                runs: kept,
                trend: Trend::of(sides),
            },
            empty,
        )
    }
}

pub type SeriesRef = Arc<Series>;
