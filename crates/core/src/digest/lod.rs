//! The digest's level-of-detail timeline: enough of each track for the Ranks tab's aligned
//! timelines, a few percent of the slices.
//!
//! **What is kept.** Per track (host thread or GPU stream) the slices at depth ≤ [`MAX_DEPTH`]
//! (on a host thread the `ProfilerStep#N` and the ops right under it; on a stream the kernels,
//! copies and sets, and GPU annotations with what they hold), plus every collective call and
//! step at any depth (the collective flow and the step marks point at them).
//!
//! **Resolution.** The aligned view opens on the whole run, about 1,000–2,000 px wide, and a
//! zoom of 4× still fits: so a slice narrower than 1/[`BUCKETS`] of the trace's span is below
//! the view's pixel at every zoom a straggler hunt starts from. Runs of such slices on one
//! track and depth (same parent, gaps under the resolution) are merged into one row that spans
//! them, named after its longest member, with `count` = how many it stands for (Perfetto's
//! merged rects). Slices at least one resolution wide, collectives and steps are kept exactly.
//! Rows per track are then bounded by about 2 × [`BUCKETS`] per depth, whatever the trace.

use super::{LodInfo, TrackInfo};
use crate::model::{IdVal, Trace, TrackKind, NONE};
use crate::parquet::{Column as C, Strings, Table, Values as V};
use crate::report::analysis::Analysis;

/// Depth kept on every track (0 = top level).
pub const MAX_DEPTH: u16 = 1;
/// The trace's span is cut into this many resolution steps.
pub const BUCKETS: i64 = 4000;

/// One row before it becomes columns.
#[derive(Clone, Copy)]
struct Row {
    track: u32,
    depth: u16,
    start: i64,
    end: i64,
    /// The longest member (its name and category name the row).
    longest: u32,
    count: u32,
}

fn id_text(t: &Trace, v: IdVal) -> String {
    match v {
        IdVal::Int(i) => i.to_string(),
        IdVal::Str(s) => t.str(s).to_owned(),
    }
}

/// The timeline table, its tracks and its parameters.
pub fn timeline(t: &Trace, a: &Analysis) -> (Table, Vec<TrackInfo>, LodInfo) {
    let s = &t.slices;
    let n = s.len();
    let lo = s.start.iter().copied().min().unwrap_or(0);
    let hi = (0..n).map(|i| s.end(i)).max().unwrap_or(0);
    let res = ((hi - lo) / BUCKETS).max(1);
    let mut keep = vec![false; n];
    for i in a
        .collectives
        .iter()
        .map(|c| c.slice)
        .chain(a.steps.iter().map(|x| x.slice))
    {
        if let Some(k) = keep.get_mut(i as usize) {
            *k = true;
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut considered = 0u64;
    // The open merge group per depth (depths above MAX_DEPTH only hold kept slices).
    let mut open: Vec<Option<Row>> = vec![None; usize::from(MAX_DEPTH) + 1];
    let mut used_tracks = vec![false; t.tracks.len()];
    for (ti, tr) in t.tracks.iter().enumerate() {
        let range = tr.first as usize..(tr.first + tr.count) as usize;
        for i in range {
            let d = s.depth[i];
            if d > MAX_DEPTH && !keep[i] {
                continue;
            }
            considered += 1;
            used_tracks[ti] = true;
            let (start, end) = (s.start[i], s.end(i));
            let one = Row {
                track: ti as u32,
                depth: d,
                start,
                end,
                longest: i as u32,
                count: 1,
            };
            let Some(slot) = open.get_mut(usize::from(d)) else {
                rows.push(one);
                continue;
            };
            if keep[i] || end - start >= res {
                rows.extend(slot.take());
                rows.push(one);
                continue;
            }
            match slot {
                Some(g) if start - g.end < res && s.parent[g.longest as usize] == s.parent[i] => {
                    g.end = g.end.max(end);
                    g.count += 1;
                    if s.dur[i] > s.dur[g.longest as usize] {
                        g.longest = i as u32;
                    }
                }
                _ => {
                    rows.extend(slot.take());
                    *slot = Some(one);
                }
            }
        }
        for slot in &mut open {
            rows.extend(slot.take());
        }
    }
    crate::sort::by_key(&mut rows, |r| {
        (r.track, r.start, std::cmp::Reverse(r.end), r.depth)
    });
    // Tracks that have rows, renumbered densely.
    let mut new_id = vec![NONE; t.tracks.len()];
    let mut tracks = Vec::new();
    for (ti, tr) in t.tracks.iter().enumerate().filter(|(k, _)| used_tracks[*k]) {
        new_id[ti] = tracks.len() as u32;
        tracks.push(TrackInfo {
            pid: id_text(t, tr.pid),
            tid: id_text(t, tr.tid),
            process: t.process_label(tr.pid),
            name: t.track_label(ti),
            gpu: tr.kind == TrackKind::Gpu,
            device: tr.device,
            stream: tr.stream,
            sort_index: tr.sort_index,
        });
    }
    let names: Strings = rows
        .iter()
        .map(|r| t.str(s.name[r.longest as usize]))
        .collect();
    let cats: Strings = rows
        .iter()
        .map(|r| t.str(s.cat[r.longest as usize]))
        .collect();
    let table = Table::new(vec![
        C::new(
            "track",
            V::I32(
                rows.iter()
                    .map(|r| new_id[r.track as usize] as i32)
                    .collect(),
            ),
        ),
        C::new(
            "depth",
            V::I32(rows.iter().map(|r| i32::from(r.depth)).collect()),
        ),
        C::new("start_ns", V::I64(rows.iter().map(|r| r.start).collect())),
        C::new(
            "dur_ns",
            V::I64(rows.iter().map(|r| r.end - r.start).collect()),
        ),
        C::new("name", V::Str(names)),
        C::new("cat", V::Str(cats)),
        C::new(
            "count",
            V::I32(rows.iter().map(|r| r.count as i32).collect()),
        ),
    ])
    // Every column is built from `rows`: lengths agree by construction.
    .unwrap_or_default();
    let info = LodInfo {
        resolution_ns: res,
        max_depth: MAX_DEPTH,
        slices: considered,
        rows: rows.len() as u64,
    };
    (table, tracks, info)
}
