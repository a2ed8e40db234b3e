//! Vertical layout: one row per non-empty track, one lane per nesting depth.

use tracelight_core::model::{Trace, TrackKind};

pub const RULER_PX: f64 = 24.0;
pub const HEADER_PX: f64 = 16.0;
pub const LANE_PX: f64 = 16.0;
pub const GUTTER_PX: f64 = 170.0;

#[derive(Clone, Debug)]
pub struct Row {
    pub track: usize,
    pub label: String,
    pub kind: TrackKind,
    pub y: f64,
    pub lanes: u16,
}

impl Row {
    pub fn height(&self) -> f64 {
        HEADER_PX + f64::from(self.lanes) * LANE_PX + 4.0
    }
}

/// Rows for every track that has slices, in the model's display order.
pub fn rows(t: &Trace) -> Vec<Row> {
    let mut y = RULER_PX;
    let mut out = Vec::new();
    for (i, tr) in t.tracks.iter().enumerate() {
        if tr.count == 0 {
            continue;
        }
        let label = format!("{} · {}", t.process_label(tr.pid), t.str(tr.name));
        let row = Row {
            track: i,
            label,
            kind: tr.kind,
            y,
            lanes: tr.max_depth.saturating_add(1).min(40),
        };
        y += row.height();
        out.push(row);
    }
    out
}

pub fn total_height(rows: &[Row]) -> f64 {
    rows.last().map_or(RULER_PX + 40.0, |r| r.y + r.height())
}
