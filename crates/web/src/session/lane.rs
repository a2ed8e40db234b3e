//! Which memory chart goes under a trace's timeline, and where on its clock: one definition for
//! the lane under the single-trace timeline (`memory/lane.rs`) and the lane under each rank of the
//! Ranks tab's aligned timelines, so a rank never shows another rank's snapshot and both views
//! give the same reason when a file cannot be placed.
//!
//! Clocks: snapshot `time_us` and memory-timeline times are epoch µs; the trace's epoch offset comes
//! from [`trace_epoch_offset_ns`] (0 for old traces whose `ts` are epoch µs, `baseTimeNanoseconds`
//! for new ones), so the lane draws chart time = trace ns + offset. When no memory file aligns (no
//! `time_us`, no epoch clock, or ranges that do not overlap) the pick says why instead of drawing a
//! misleading chart; with no memory file at all it is the trace's own `[memory]` events (same
//! clock, nothing to align).

use super::memory::{chart, sources_of, Source, SourceKind};
use super::run::{layout, units_of_files};
use super::{Content, Session, SessionRef};
use std::sync::Arc;
use tracelight_core::analysis::memory_chart::{overlaps, trace_epoch_offset_ns, MemoryChart};

/// A chart that can go under a trace: its source, the chart, and the label the lane shows.
pub struct LaneChart {
    pub source: Source,
    pub chart: Arc<MemoryChart>,
    pub label: String,
}

impl LaneChart {
    /// The chart came from a memory file (snapshot, memory timeline), not the trace itself.
    pub fn from_file(&self) -> bool {
        !matches!(self.source.kind, SourceKind::Trace { .. })
    }
}

/// The chart to draw and the offset from trace ns to its x, or why there is none.
pub enum LanePick {
    Aligned {
        lane: LaneChart,
        offset_ns: i64,
    },
    /// Memory files go with this trace but none can be placed on its clock: why (one reason per
    /// file), and the first such file's chart (its peak still holds, its x does not).
    Unaligned {
        why: String,
        lane: Option<LaneChart>,
    },
    Nothing,
}

fn is_memory_file(c: &Content) -> bool {
    matches!(c, Content::Snapshot(_) | Content::MemoryTimeline(_))
}

/// The session's memory files that belong under trace `file`, in file order: core's
/// [`RunLayout::memory_units_for`](tracelight_core::run::layout::RunLayout::memory_units_for) of
/// the trace's run unit (its own rank and cycle's files, else files no trace claims). Another
/// rank's file is never a candidate.
pub fn candidates(session: &Session, file: usize) -> Vec<usize> {
    let lay = layout(session, &[]);
    let units = units_of_files(session, &lay);
    let allowed = match units.get(file).copied().flatten() {
        Some((rank, cycle)) => lay.memory_units_for(rank, cycle),
        None => Vec::new(),
    };
    (0..session.files.len())
        .filter(|&k| is_memory_file(&session.files[k].content))
        .filter(|&k| units[k].is_some_and(|u| allowed.contains(&u)))
        .collect()
}

/// The lane under trace `file` (see the module doc).
pub fn pick(session: &SessionRef, file: usize) -> LanePick {
    let Some(tf) = session.trace(file) else {
        return LanePick::Nothing;
    };
    let offset = trace_epoch_offset_ns(&tf.trace);
    let bounds = tf.trace.time_bounds().unwrap_or((0, 1));
    let mut why = Vec::new();
    let mut first = None;
    for i in candidates(session, file) {
        let Some(src) = sources_of(session, i).into_iter().next() else {
            continue;
        };
        let Some(c) = chart(session, &src) else {
            continue;
        };
        let name = &session.files[i].name;
        let lane = LaneChart {
            label: format!("{name} · {}", src.device_label()),
            source: src,
            chart: c,
        };
        let reason = if !lane.chart.epoch {
            format!("{name} has no time_us, so it cannot be placed on the trace's clock")
        } else if let Some(off) = offset {
            if overlaps((bounds.0 + off, bounds.1 + off), lane.chart.x_range) {
                return LanePick::Aligned {
                    lane,
                    offset_ns: off,
                };
            }
            format!("{name} was recorded outside this trace's time range (another run?)")
        } else {
            format!("the trace has neither epoch timestamps nor baseTimeNanoseconds, so {name} cannot be aligned")
        };
        why.push(reason);
        first.get_or_insert(lane);
    }
    if !why.is_empty() {
        return LanePick::Unaligned {
            why: why.join("; "),
            lane: first,
        };
    }
    if let Some(src) = sources_of(session, file).into_iter().next() {
        // A curve that never leaves 0 (totals not recorded) is not shown as data.
        if let Some(c) = chart(session, &src).filter(|c| c.peak.1 > 0) {
            return LanePick::Aligned {
                lane: LaneChart {
                    label: format!("[memory] {}", src.device_label()),
                    source: src,
                    chart: c,
                },
                offset_ns: 0,
            };
        }
    }
    LanePick::Nothing
}
