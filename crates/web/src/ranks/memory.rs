//! Each rank's memory file as a lane under its aligned timeline: the rank's own allocator
//! snapshot or memory timeline, picked and placed by [`crate::session::lane::pick`] (the rule the
//! single-trace timeline's lane follows), drawn by the Memory tab's painter on the aligned clock.
//! A file that cannot be placed on its trace's clock keeps its row, with its peak and the reason,
//! never a chart at a made-up position. A rank whose only memory is the trace's own `[memory]`
//! events has no lane here: its memory-allocated counter row already shows them.

use super::aligned_paint::AScene;
use crate::session::lane::{pick, LaneChart, LanePick};
use crate::session::SessionRef;
use crate::widgets::memory_paint::{paint_data, Frame as MFrame, Overlay};
use crate::widgets::text::{TextCache, FONT};
use std::sync::Arc;
use tracelight_core::analysis::memory_chart::MemoryChart;
use tracelight_core::report::memory::format_bytes;
use tracelight_core::view::aligned::RankTimeline;
use web_sys::CanvasRenderingContext2d;

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

/// What the view shows of the ranks' memory, in words: how many ranks have `[memory]` curves
/// (their trace's events) and how many a memory file lane, placed or not; or that none recorded
/// any, so an empty view is not read as "no memory used".
pub fn memory_text(m: &super::run::RunModel) -> String {
    let curves = m
        .figures
        .ranks
        .iter()
        .filter(|r| r.peak_allocated_bytes > 0)
        .count();
    let files = m.lanes.iter().flatten().count();
    let placed = m
        .lanes
        .iter()
        .flatten()
        .filter(|l| l.epoch_ns.is_some())
        .count();
    if curves == 0 && files == 0 {
        return "Memory: no rank recorded any (no [memory] events, allocator snapshot or memory timeline), so no memory rows.".to_owned();
    }
    let mut s = format!("Memory: {curves} rank(s) with [memory] curves from the trace");
    if files > 0 {
        s += &format!(
            ", {files} with a lane from its own snapshot or memory timeline ({placed} placed on its trace's clock"
        );
        if files > placed {
            s += &format!(", {} not placed: its row says why", files - placed);
        }
        s += ")";
    }
    s + "."
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

/// Paints rank `r`'s lane in the row at canvas `y` of height `h`; returns the polygons drawn.
pub fn paint_lane(
    ctx: &CanvasRenderingContext2d,
    sc: &AScene,
    r: &RankTimeline,
    lane: &RankLane,
    y: f64,
    h: f64,
) -> u32 {
    let f = sc.frame;
    let mf = MFrame {
        left: f.left,
        top: y + 4.0,
        width: (f.width - f.left).max(1.0),
        height: h - 8.0,
    };
    let Some(epoch) = lane.epoch_ns else {
        ctx.set_fill_style_str(&sc.theme.muted);
        let note = lane.note.as_deref().unwrap_or("");
        let _ = ctx.fill_text(&format!("not placed: {note}"), f.left + 8.0, y + h / 2.0);
        return 0;
    };
    // Shown ns -> the rank's trace ns (+ offset) -> the file's epoch ns (+ epoch).
    let shift = r.offset_ns.saturating_add(epoch);
    let view = (
        f.vp.start_ns.saturating_add(shift),
        f.vp.end_ns
            .saturating_add(shift)
            .max(f.vp.start_ns.saturating_add(shift) + 1),
    );
    let none = Overlay {
        highlight: None,
        pinned: None,
        brush: None,
    };
    paint_data(ctx, &lane.chart, view, &mf, sc.lane_y_max, &none)
}

/// The gutter of a lane row: its label, and the file's peak under it.
pub fn gutter_lane(
    ctx: &CanvasRenderingContext2d,
    sc: &AScene,
    lane: &RankLane,
    label: &str,
    y: f64,
    cache: &mut TextCache,
) {
    use crate::widgets::geometry::GUTTER_PX;
    ctx.set_fill_style_str(&sc.theme.fg);
    if let Some(t) = cache.fit(ctx, label, GUTTER_PX - 24.0) {
        let _ = ctx.fill_text(&t, 16.0, y + 12.0);
    }
    ctx.set_fill_style_str(&sc.theme.muted);
    ctx.set_font(FONT);
    let _ = ctx.fill_text(
        &format!("peak {}", format_bytes(lane.peak())),
        16.0,
        y + 27.0,
    );
    if lane.epoch_ns.is_some() {
        let _ = ctx.fill_text(
            &format!("axis 0–{}", format_bytes(sc.lane_y_max)),
            16.0,
            y + 42.0,
        );
    }
}
