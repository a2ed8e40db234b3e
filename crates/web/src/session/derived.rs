//! What the timeline precomputes for a trace (LOD index, counter series, groups, step markers),
//! built once per trace file right after it loads ([`TimelineData::build_yielding`], called by the
//! loader), so the first view of the timeline is instant and switching tabs never rebuilds it.

use crate::platform::clock::{now_ms, yield_now};
use crate::session::SessionRef;
use std::sync::Arc;
use tracelight_core::analysis::gpu::{kernel_devices, kernel_runs};
use tracelight_core::analysis::scope::annotation_names;
use tracelight_core::model::Trace;
use tracelight_core::view::counters::{
    memory_tracks, plain_counters, utilization_track, BusySeries, CounterTrack,
};
use tracelight_core::view::layout::{groups, Group};
use tracelight_core::view::lod::{LodIndex, LodSort};
use tracelight_core::view::parts::TimelineParts;
use tracelight_core::view::steps::{step_marks, StepMark};

pub struct TimelineData {
    pub lod: LodIndex,
    pub counters: Vec<CounterTrack>,
    pub groups: Vec<Group>,
    pub steps: Vec<StepMark>,
    /// The scope picker's annotation names (`analysis::scope::annotation_names`: name, count,
    /// total ns), taken here with the other passes over the slices rather than at the Overview's
    /// first render.
    pub annotations: Vec<(String, u32, i64)>,
    /// First and last instant of the trace; the ruler's zero is `bounds.0`.
    pub bounds: (i64, i64),
}

impl TimelineData {
    pub fn build(t: &Trace) -> TimelineData {
        TimelineData::from_parts(LodIndex::build(t), TimelineParts::of(t))
    }

    pub fn from_parts(lod: LodIndex, p: TimelineParts) -> TimelineData {
        TimelineData {
            lod,
            counters: p.counters,
            groups: p.groups,
            steps: p.steps,
            annotations: p.annotations,
            bounds: p.bounds,
        }
    }

    /// [`TimelineData::build`] that yields to the browser between LOD steps whenever
    /// [`BUDGET_MS`] of work has run, and between the pieces after them (each a pass over the
    /// slices: together 155 ms of one task on a 1 GB trace), so the page keeps painting while the
    /// index is built.
    pub async fn build_yielding(t: &Trace) -> TimelineData {
        let lod = TimelineData::lod_yielding(t).await;
        TimelineData::from_parts(lod, TimelineData::parts_yielding(t).await)
    }

    /// The LOD index, a step at a time ([`TimelineData::build_yielding`]'s first part).
    pub async fn lod_yielding(t: &Trace) -> LodIndex {
        yield_now().await;
        let mut last = now_ms();
        let mut sort = LodSort::new(t);
        while sort.step(t, LOD_STEP_SPANS) {
            if now_ms() - last >= BUDGET_MS {
                yield_now().await;
                last = now_ms();
            }
        }
        let mut b = sort.done();
        // A step goes over at most LOD_STEP_SPANS spans, inside a lane where it is longer: a lane
        // a step was a task of 150-300 ms on a 10 GB trace.
        while b.step_within(t, LOD_STEP_SPANS) {
            if now_ms() - last >= BUDGET_MS {
                yield_now().await;
                last = now_ms();
            }
        }
        yield_now().await;
        b.finish()
    }

    /// [`TimelineParts::of`], a pass per task: what the page computes itself when no reader
    /// worker handed the parts over (`view::parts`).
    pub async fn parts_yielding(t: &Trace) -> TimelineParts {
        // `counter_tracks`, a piece per task.
        let mut counters = memory_tracks(t);
        yield_now().await;
        // A device's utilization in two passes over its kernels, a task each.
        for d in kernel_devices(t) {
            yield_now().await;
            let runs = kernel_runs(t, d);
            let n = BusySeries::union_len(&runs);
            yield_now().await;
            counters.push(utilization_track(
                d,
                BusySeries::from_counted_runs(&runs, n),
            ));
        }
        yield_now().await;
        counters.extend(plain_counters(t));
        yield_now().await;
        let groups = groups(t, &counters);
        yield_now().await;
        let steps = step_marks(t);
        yield_now().await;
        let annotations = annotation_names(t);
        yield_now().await;
        TimelineParts {
            counters,
            groups,
            steps,
            annotations,
            bounds: t.time_bounds().unwrap_or((0, 1)),
        }
    }
}

/// Work between two yields of [`TimelineData::build_yielding`].
const BUDGET_MS: f64 = 30.0;

/// Spans a step of the LOD index goes over (slices, while they are sorted into lanes): a 1 GB
/// trace's index (2.1 M slices) takes 36 such steps, the longest 4 ms natively on one core.
const LOD_STEP_SPANS: usize = 1 << 18;

/// The data of trace `file` of `session`: the one the loader built, or built now for a trace
/// that did not come through the loader (tests).
pub fn cached(session: &SessionRef, file: usize) -> Option<Arc<TimelineData>> {
    Some(session.trace(file)?.timeline().clone())
}
