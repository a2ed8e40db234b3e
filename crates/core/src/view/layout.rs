//! Vertical layout of the timeline in `content_px` (0 = top of the first group, below the ruler):
//! groups (a process's CPU threads, a GPU device's streams, the counters), each a header row and,
//! unless collapsed, one row per track with one lane per nesting depth.
//!
//! The first screen must show where the step goes, so the order is not the file's: the process of
//! the busiest CPU thread (the main thread) comes first with that thread on top, the GPU devices
//! right under it, other processes after. Threads that are nearly idle (under 1% of the main
//! thread's busy time: pin-memory, dataloader and watchdog threads) sit behind one "N idle
//! threads" row, closed until clicked. With a window, a track gets only the lanes that hold a
//! slice in that window, so a deep Python stack elsewhere does not push the GPU off screen.

use super::counters::CounterTrack;
use super::lod::LodIndex;
use crate::model::{IdVal, StrId, Trace, TrackKind};

pub const GROUP_PX: f64 = 22.0;
pub const LANE_PX: f64 = 18.0;
/// Space above a track's first lane and below its last.
pub const ROW_PAD_PX: f64 = 3.0;
pub const COUNTER_PX: f64 = 40.0;
/// Height of a memory-file lane ([`RowKind::Memory`]).
pub const MEMORY_PX: f64 = 56.0;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum GroupKey {
    Cpu(IdVal),
    Gpu(i64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum RowKind {
    Group(usize),
    Slices {
        track: usize,
        depths: usize,
    },
    Counter(usize),
    /// The toggle row of a group's idle tracks.
    Idle(usize),
    /// A memory file's chart (allocator snapshot, memory timeline) under group `usize`'s tracks:
    /// the aligned ranks view puts each rank's own there; its data is not in the trace, so the
    /// caller draws it.
    Memory(usize),
}

/// Height of the "N idle threads" toggle row.
pub const IDLE_PX: f64 = 18.0;
/// A CPU thread busy for less than this share of the main thread's busy time is idle.
pub const IDLE_SHARE: f64 = 0.01;

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
    /// Nearly idle tracks, shown only when the group's idle row is opened.
    pub idle: Vec<usize>,
    pub counters: Vec<usize>,
}

impl Group {
    pub fn holds(&self, track: usize) -> bool {
        self.tracks.contains(&track) || self.idle.contains(&track)
    }
}

/// Time covered by a track's top-level slices (they do not overlap: deeper ones nest in them).
pub fn busy_ns(t: &Trace, track: usize) -> i64 {
    let Some(tr) = t.tracks.get(track) else {
        return 0;
    };
    let (a, n) = (tr.first as usize, tr.count as usize);
    let end = (a + n).min(t.slices.len());
    (a.min(end)..end)
        .filter(|&i| t.slices.depth[i] == 0)
        .fold(0i64, |s, i| s.saturating_add(t.slices.dur[i].max(0)))
}

/// The main thread: the CPU track holding the most step slices (`model::steps`), then the most
/// top-level busy time (the first on a tie). Steps first, because Kineto's own "PyTorch Profiler"
/// span (pid `Spans` / `Traces`) covers the whole trace and would win on busy time alone.
pub fn main_track(t: &Trace) -> Option<usize> {
    let step_names: Vec<bool> = (0..t.strings.len())
        .map(|k| t.step_rule().is_step(t.str(StrId(k as u32))))
        .collect();
    let mut best: Option<(usize, (usize, i64))> = None;
    for (i, tr) in t.tracks.iter().enumerate() {
        if tr.kind != TrackKind::Cpu || tr.count == 0 {
            continue;
        }
        let (a, n) = (tr.first as usize, tr.count as usize);
        let end = (a + n).min(t.slices.len());
        let steps = t.slices.name[a.min(end)..end]
            .iter()
            .filter(|s| step_names.get(s.index()).copied().unwrap_or(false))
            .count();
        let key = (steps, busy_ns(t, i));
        if best.is_none_or(|(_, x)| key > x) {
            best = Some((i, key));
        }
    }
    best.map(|(i, _)| i)
}

/// Groups in display order (see the module doc): the main thread's process, the GPUs, the other
/// processes in the model's order, the counters.
pub fn groups(t: &Trace, counters: &[CounterTrack]) -> Vec<Group> {
    let main = main_track(t);
    let main_busy = main.map_or(0, |m| busy_ns(t, m));
    let main_pid = main.and_then(|m| t.tracks.get(m)).map(|tr| tr.pid);
    // Main thread first, then the model's order.
    let order = main
        .into_iter()
        .chain((0..t.tracks.len()).filter(|&i| Some(i) != main));
    let mut keys: Vec<GroupKey> = Vec::new();
    let mut out: Vec<Group> = Vec::new();
    for i in order {
        let tr = &t.tracks[i];
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
                    idle: Vec::new(),
                    counters: Vec::new(),
                });
                out.len() - 1
            }
        };
        let idle = tr.kind == TrackKind::Cpu
            && Some(i) != main
            && (busy_ns(t, i) as f64) < IDLE_SHARE * main_busy as f64;
        if idle {
            out[g].idle.push(i);
        } else {
            out[g].tracks.push(i);
        }
    }
    // The main process, then GPUs, then the rest (a stable sort keeps the model's order within).
    let rank = |k: &GroupKey| match k {
        GroupKey::Cpu(pid) if Some(*pid) == main_pid => 0,
        GroupKey::Gpu(_) => 1,
        GroupKey::Cpu(_) => 2,
    };
    let mut keyed: Vec<(GroupKey, Group)> = keys.into_iter().zip(out).collect();
    crate::sort::by_key(&mut keyed, |(k, _)| rank(k));
    let mut out: Vec<Group> = keyed.into_iter().map(|(_, g)| g).collect();
    if !counters.is_empty() {
        out.push(Group {
            label: "Counters".to_owned(),
            tracks: Vec::new(),
            idle: Vec::new(),
            counters: (0..counters.len()).collect(),
        });
    }
    out
}

/// What `rows` lays out besides the groups: which groups are collapsed, which have their idle
/// tracks open, and the time window whose slices decide each track's lane count (`None`: all).
#[derive(Clone, Copy, Debug, Default)]
pub struct RowsOf<'a> {
    pub collapsed: &'a [bool],
    pub idle_open: &'a [bool],
    pub window: Option<(i64, i64)>,
}

/// Rows for `groups` (see [`RowsOf`]).
pub fn rows(
    t: &Trace,
    lod: &LodIndex,
    counters: &[CounterTrack],
    groups: &[Group],
    of: RowsOf,
) -> Vec<Row> {
    let mut y = 0.0;
    let mut out = Vec::new();
    let flag = |v: &[bool], g: usize| v.get(g).copied().unwrap_or(false);
    for (g, grp) in groups.iter().enumerate() {
        out.push(Row {
            kind: RowKind::Group(g),
            label: grp.label.clone(),
            group: g,
            y,
            h: GROUP_PX,
        });
        y += GROUP_PX;
        if flag(of.collapsed, g) {
            continue;
        }
        let track_row = |tr: usize, y: &mut f64, out: &mut Vec<Row>| {
            let depths = match of.window {
                Some(w) => lod.depths_in(t, tr, w),
                None => lod.depths(tr),
            }
            .max(1);
            let h = depths as f64 * LANE_PX + 2.0 * ROW_PAD_PX;
            out.push(Row {
                kind: RowKind::Slices { track: tr, depths },
                label: t.track_label(tr),
                group: g,
                y: *y,
                h,
            });
            *y += h;
        };
        for &tr in &grp.tracks {
            track_row(tr, &mut y, &mut out);
        }
        if !grp.idle.is_empty() {
            let open = flag(of.idle_open, g);
            let n = grp.idle.len();
            let label = format!(
                "{} {n} idle thread{}",
                if open { "▾" } else { "▸" },
                if n == 1 { "" } else { "s" }
            );
            out.push(Row {
                kind: RowKind::Idle(g),
                label,
                group: g,
                y,
                h: IDLE_PX,
            });
            y += IDLE_PX;
            if open {
                for &tr in &grp.idle {
                    track_row(tr, &mut y, &mut out);
                }
            }
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
        let r = rows(&t, &lod, &c, &g, RowsOf::default());
        let thread1 = r
            .iter()
            .find(|r| matches!(r.kind, RowKind::Slices { depths: 2, .. }));
        assert!(thread1.is_some(), "thread 1 has two depths: {r:?}");
        assert_eq!(row_at(&r, 0.0), Some(0));
        assert_eq!(row_at(&r, -1.0), None);
        assert_eq!(row_at(&r, total_height(&r) + 1.0), None);
        let collapsed = rows(
            &t,
            &lod,
            &c,
            &g,
            RowsOf {
                collapsed: &[true, false, false],
                ..RowsOf::default()
            },
        );
        assert_eq!(collapsed.len(), r.len() - 2);
        let v = visible(&r, 0.0, GROUP_PX + 1.0);
        assert_eq!(v, 0..2);
    }

    /// Hand-built: another process first in the file, an idle pin-memory thread, a deep stack late
    /// in the step. By construction: main process, then the GPU, then the other process; the idle
    /// thread behind its row; the main thread two lanes deep early in the step, four at its end.
    #[test]
    fn main_thread_then_gpu_then_the_rest_idle_threads_folded_lanes_from_the_window() {
        let x = |name: &str, cat: &str, pid: i64, tid: i64, ts: f64, dur: f64| {
            format!(
                r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur}}}"#
            )
        };
        let ev = [
            x("other", "cpu_op", 2, 9, 0.0, 50.0),
            r#"{"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans","tid":"PyTorch Profiler","ts":0,"dur":2000}"#.to_owned(),
            x("pin", "cpu_op", 1, 5, 0.0, 0.5),
            x("ProfilerStep#1", "user_annotation", 1, 1, 0.0, 1000.0),
            x("aten::mm", "cpu_op", 1, 1, 10.0, 10.0),
            x("a", "cpu_op", 1, 1, 900.0, 50.0),
            x("b", "cpu_op", 1, 1, 901.0, 40.0),
            x("c", "cpu_op", 1, 1, 902.0, 30.0),
            r#"{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":20,"dur":5,"args":{"device":0,"stream":7}}"#.to_owned(),
        ];
        let t = crate::view::testutil::trace_json(&ev.join(","));
        let track = |pid: i64, tid: i64| {
            t.tracks.iter().position(|tr| {
                t.idval_text(tr.pid) == pid.to_string() && t.idval_text(tr.tid) == tid.to_string()
            })
        };
        let (Some(main), Some(pin), Some(other)) = (track(1, 1), track(1, 5), track(2, 9)) else {
            panic!("the hand-built trace's tracks");
        };
        assert_eq!(main_track(&t), Some(main));
        let c = counter_tracks(&t);
        let g = groups(&t, &c);
        assert_eq!(g[0].tracks, vec![main], "{g:?}");
        assert_eq!(g[0].idle, vec![pin]);
        assert!(g[1].label.starts_with("GPU 0"), "{g:?}");
        assert_eq!(g[2].tracks, vec![other]);
        assert!(
            g[3].label.starts_with("Spans"),
            "Kineto's whole-trace span does not lead: {g:?}"
        );
        let lod = LodIndex::build(&t);
        let depth_of = |r: &[Row], tr: usize| {
            r.iter().find_map(|r| match r.kind {
                RowKind::Slices { track, depths } if track == tr => Some(depths),
                _ => None,
            })
        };
        let all = rows(&t, &lod, &c, &g, RowsOf::default());
        assert_eq!(depth_of(&all, main), Some(4));
        assert_eq!(depth_of(&all, pin), None, "idle threads start folded");
        assert!(all
            .iter()
            .any(|r| r.kind == RowKind::Idle(0) && r.label.contains("1 idle thread")));
        let early = RowsOf {
            window: Some((0, 500_000)),
            ..RowsOf::default()
        };
        assert_eq!(depth_of(&rows(&t, &lod, &c, &g, early), main), Some(2));
        let late = RowsOf {
            window: Some((905_000, 906_000)),
            ..RowsOf::default()
        };
        assert_eq!(depth_of(&rows(&t, &lod, &c, &g, late), main), Some(4));
        let open = RowsOf {
            idle_open: &[true],
            ..RowsOf::default()
        };
        assert_eq!(depth_of(&rows(&t, &lod, &c, &g, open), pin), Some(1));
    }
}
