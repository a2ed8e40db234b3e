//! Vertical layout of the timeline in `content_px` (0 = top of the first group, below the ruler):
//! groups (a process's CPU threads, a GPU device's streams, the counters), each a header row and,
//! unless collapsed, one row per track with one lane per nesting depth.

use super::counters::CounterTrack;
use super::lod::LodIndex;
use crate::model::{IdVal, Trace, TrackKind};

pub const GROUP_PX: f64 = 22.0;
pub const LANE_PX: f64 = 18.0;
/// Space above a track's first lane and below its last.
pub const ROW_PAD_PX: f64 = 3.0;
pub const COUNTER_PX: f64 = 40.0;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum GroupKey {
    Cpu(IdVal),
    Gpu(i64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum RowKind {
    Group(usize),
    Slices { track: usize, depths: usize },
    Counter(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub kind: RowKind,
    pub label: String,
    pub group: usize,
    pub y: f64,
    pub h: f64,
}

impl Row {
    /// Top of lane `depth` of a slice row.
    pub fn lane_y(&self, depth: usize) -> f64 {
        self.y + ROW_PAD_PX + depth as f64 * LANE_PX
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub label: String,
    pub tracks: Vec<usize>,
    pub counters: Vec<usize>,
}

/// Groups in display order: the model's track order decides which group comes first.
pub fn groups(t: &Trace, counters: &[CounterTrack]) -> Vec<Group> {
    let mut keys: Vec<GroupKey> = Vec::new();
    let mut out: Vec<Group> = Vec::new();
    for (i, tr) in t.tracks.iter().enumerate() {
        if tr.count == 0 {
            continue;
        }
        let key = match tr.kind {
            TrackKind::Cpu => GroupKey::Cpu(tr.pid),
            TrackKind::Gpu => GroupKey::Gpu(tr.device.unwrap_or(0)),
        };
        let g = match keys.iter().position(|k| *k == key) {
            Some(g) => g,
            None => {
                let label = match &key {
                    GroupKey::Cpu(pid) => {
                        format!("{} (pid {})", t.process_label(*pid), t.idval_text(*pid))
                    }
                    GroupKey::Gpu(d) => match t.meta.devices.iter().find(|p| p.id == *d) {
                        Some(p) if !p.name.is_empty() => format!("GPU {d} · {}", p.name),
                        _ => format!("GPU {d}"),
                    },
                };
                keys.push(key);
                out.push(Group {
                    label,
                    tracks: Vec::new(),
                    counters: Vec::new(),
                });
                out.len() - 1
            }
        };
        out[g].tracks.push(i);
    }
    if !counters.is_empty() {
        out.push(Group {
            label: "Counters".to_owned(),
            tracks: Vec::new(),
            counters: (0..counters.len()).collect(),
        });
    }
    out
}

/// Rows for `groups`; `collapsed[g]` hides group `g`'s tracks.
pub fn rows(
    t: &Trace,
    lod: &LodIndex,
    counters: &[CounterTrack],
    groups: &[Group],
    collapsed: &[bool],
) -> Vec<Row> {
    let mut y = 0.0;
    let mut out = Vec::new();
    for (g, grp) in groups.iter().enumerate() {
        out.push(Row {
            kind: RowKind::Group(g),
            label: grp.label.clone(),
            group: g,
            y,
            h: GROUP_PX,
        });
        y += GROUP_PX;
        if collapsed.get(g).copied().unwrap_or(false) {
            continue;
        }
        for &tr in &grp.tracks {
            let depths = lod.depths(tr).max(1);
            let h = depths as f64 * LANE_PX + 2.0 * ROW_PAD_PX;
            let label = t.track_label(tr);
            out.push(Row {
                kind: RowKind::Slices { track: tr, depths },
                label,
                group: g,
                y,
                h,
            });
            y += h;
        }
        for &c in &grp.counters {
            let label = counters.get(c).map(|c| c.label.clone()).unwrap_or_default();
            out.push(Row {
                kind: RowKind::Counter(c),
                label,
                group: g,
                y,
                h: COUNTER_PX,
            });
            y += COUNTER_PX;
        }
    }
    out
}

pub fn total_height(rows: &[Row]) -> f64 {
    rows.last().map_or(0.0, |r| r.y + r.h)
}

/// Index of the row at `content_px` y, by binary search.
pub fn row_at(rows: &[Row], y: f64) -> Option<usize> {
    let i = rows.partition_point(|r| r.y + r.h <= y);
    rows.get(i).filter(|r| r.y <= y).map(|_| i)
}

/// Rows overlapping `[y0, y1)`, as an index range (for painting only what is on screen).
pub fn visible(rows: &[Row], y0: f64, y1: f64) -> std::ops::Range<usize> {
    let a = rows.partition_point(|r| r.y + r.h <= y0);
    let b = rows.partition_point(|r| r.y < y1);
    a..b.max(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::counters::counter_tracks;
    use crate::view::testutil::trace_of;

    #[test]
    fn groups_by_process_and_device_with_lanes_per_depth() {
        let t = trace_of(&[
            ("ProfilerStep#1", "user_annotation", 1, 0.0, 100.0),
            ("aten::mm", "cpu_op", 1, 10.0, 20.0),
            ("aten::relu", "cpu_op", 2, 10.0, 20.0),
            ("sgemm", "kernel", 7, 40.0, 5.0),
        ]);
        let lod = LodIndex::build(&t);
        let c = counter_tracks(&t);
        let g = groups(&t, &c);
        assert_eq!(g.len(), 3, "{g:?}"); // CPU process, GPU 0, counters (utilization)
        let r = rows(&t, &lod, &c, &g, &[]);
        let thread1 = r
            .iter()
            .find(|r| matches!(r.kind, RowKind::Slices { depths: 2, .. }));
        assert!(thread1.is_some(), "thread 1 has two depths: {r:?}");
        assert_eq!(row_at(&r, 0.0), Some(0));
        assert_eq!(row_at(&r, -1.0), None);
        assert_eq!(row_at(&r, total_height(&r) + 1.0), None);
        let collapsed = rows(&t, &lod, &c, &g, &[true, false, false]);
        assert_eq!(collapsed.len(), r.len() - 2);
        let v = visible(&r, 0.0, GROUP_PX + 1.0);
        assert_eq!(v, 0..2);
    }
}
