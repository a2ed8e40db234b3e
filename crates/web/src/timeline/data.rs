//! What the timeline precomputes for a trace (LOD index, counter series, groups, step markers),
//! built once per trace file and cached, so switching tabs does not rebuild it.

use crate::state::{Session, SessionRef};
use std::cell::RefCell;
use std::sync::{Arc, Weak};
use tracelight_core::analysis::gpu::{hta_kernel_type, HtaKernelType};
use tracelight_core::model::{SliceKind, Trace};
use tracelight_core::view::counters::{counter_tracks, CounterTrack};
use tracelight_core::view::layout::{groups, Group};
use tracelight_core::view::lod::LodIndex;
use tracelight_core::view::steps::{step_marks, StepMark};

pub struct TimelineData {
    pub lod: LodIndex,
    pub counters: Vec<CounterTrack>,
    pub groups: Vec<Group>,
    pub steps: Vec<StepMark>,
    /// First and last instant of the trace; the ruler's zero is `bounds.0`.
    pub bounds: (i64, i64),
    /// Per interned string: a communication (NCCL) kernel name, drawn in its own colour.
    pub comm_name: Vec<bool>,
}

impl TimelineData {
    pub fn build(t: &Trace) -> TimelineData {
        let lod = LodIndex::build(t);
        let counters = counter_tracks(t);
        let groups = groups(t, &counters);
        let mut comm_name = vec![false; t.strings.len()];
        for i in 0..t.slices.len() {
            if t.slices.kind[i] == SliceKind::Kernel {
                let n = t.slices.name[i];
                if let Some(c) = comm_name.get_mut(n.index()) {
                    *c = hta_kernel_type(t.str(n)) == HtaKernelType::Communication;
                }
            }
        }
        TimelineData {
            lod,
            counters,
            groups,
            steps: step_marks(t),
            bounds: t.time_bounds().unwrap_or((0, 1)),
            comm_name,
        }
    }
}

type Entry = (Weak<Session>, usize, Arc<TimelineData>);

thread_local! {
    static CACHE: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// The data of trace `file` of `session`, built on first use; entries of closed sessions are dropped.
pub fn cached(session: &SessionRef, file: usize) -> Option<Arc<TimelineData>> {
    let tf = session.trace(file)?;
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        c.retain(|(w, _, _)| w.strong_count() > 0);
        if let Some((_, _, d)) = c
            .iter()
            .find(|(w, f, _)| *f == file && std::ptr::eq(w.as_ptr(), Arc::as_ptr(session)))
        {
            return Some(d.clone());
        }
        let d = Arc::new(TimelineData::build(&tf.trace));
        c.push((Arc::downgrade(session), file, d.clone()));
        Some(d)
    })
}
