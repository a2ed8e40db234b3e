//! Each rank's memory file as a lane under its aligned timeline: the rank's own allocator
//! snapshot or memory timeline, picked and placed by [`crate::session::lane::pick`] (the rule the
//! single-trace timeline's lane follows), drawn by the Memory tab's painter on the aligned clock.
//! A file that cannot be placed on its trace's clock keeps its row, with its peak and the reason,
//! never a chart at a made-up position. A rank whose only memory is the trace's own `[memory]`
//! events has no lane here: its memory-allocated counter row already shows them.

use crate::session::lane::{pick, LaneChart, LanePick};
use crate::session::SessionRef;
use std::sync::Arc;
use tracelight_core::analysis::memory_chart::MemoryChart;

/// One rank's memory lane.
pub struct RankLane {
    pub chart: Arc<MemoryChart>,
    /// What the row is called: the file and its device.
    pub label: String,
    /// Chart x = the rank's trace ns + this; `None` when the file cannot be placed.
    pub epoch_ns: Option<i64>,
    /// Why the file is not placed (with `epoch_ns` `None`).
    pub note: Option<String>,
}

impl RankLane {
    fn of(lane: LaneChart, epoch_ns: Option<i64>, note: Option<String>) -> RankLane {
        RankLane {
            chart: lane.chart,
            label: lane.label,
            epoch_ns,
            note,
        }
    }

    /// Peak of the file's total (active bytes for a snapshot, the categories' sum for a memory
    /// timeline): what the Memory tab marks as the peak of the same chart.
    pub fn peak(&self) -> u64 {
        self.chart.peak.1
    }
}

/// The lane of each of `files` (session trace indices, in the view's rank order).
pub fn lanes_of(session: &SessionRef, files: &[usize]) -> Vec<Option<RankLane>> {
    files
        .iter()
        .map(|&f| match pick(session, f) {
            LanePick::Aligned { lane, offset_ns } if lane.from_file() => {
                Some(RankLane::of(lane, Some(offset_ns), None))
            }
            LanePick::Unaligned {
                why,
                lane: Some(lane),
            } => Some(RankLane::of(lane, None, Some(why))),
            _ => None,
        })
        .collect()
}

/// The y scale every placed lane shares (so heights compare across ranks): the largest chart
/// maximum plus 5% headroom.
pub fn shared_y_max(lanes: &[Option<RankLane>]) -> u64 {
    let m = lanes
        .iter()
        .flatten()
        .filter(|l| l.epoch_ns.is_some())
        .map(|l| l.chart.y_max)
        .max()
        .unwrap_or(1);
    m + m / 20
}

/// Lanes as JSON for tests (`data-mem-lanes`): view rank index, label, peak bytes, whether placed.
pub fn lanes_json(lanes: &[Option<RankLane>]) -> String {
    let items: Vec<String> = lanes
        .iter()
        .enumerate()
        .filter_map(|(k, l)| {
            let l = l.as_ref()?;
            Some(format!(
                r#"{{"rank":{k},"label":{:?},"peak":{},"placed":{},"epoch_ns":{},"note":{:?}}}"#,
                l.label,
                l.peak(),
                l.epoch_ns.is_some(),
                l.epoch_ns.map_or("null".to_owned(), |e| e.to_string()),
                l.note.clone().unwrap_or_default()
            ))
        })
        .collect();
    format!("[{}]", items.join(","))
}
