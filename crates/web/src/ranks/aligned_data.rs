//! What the aligned timelines read from the run and the session: the ranks as core's
//! [`RankTimeline`]s, the picked collective's kernels, the collective under a clicked kernel, and
//! the texts and test attributes the view shows.

use super::aligned_paint::FlowPart;
use super::run::RunModel;
use crate::session::SessionRef;
use crate::widgets::fmt;
use tracelight_core::report::run::{AlignMethod, Alignment};
use tracelight_core::view::aligned::{RankRow, RankTimeline};
use tracelight_core::view::layout::RowKind;

/// Calls `f` with the run's ranks as core's [`RankTimeline`]s (borrowed from the session, so
/// built per use; it is a handful of references per rank).
pub fn with_ranks<R>(
    session: &SessionRef,
    m: &RunModel,
    f: impl FnOnce(&[RankTimeline]) -> R,
) -> R {
    let data: Vec<_> = m
        .files
        .iter()
        .map(|&k| session.trace(k).map(|t| (t, t.timeline().clone())))
        .collect();
    let ranks: Vec<RankTimeline> = data
        .iter()
        .zip(&m.figures.ranks)
        .zip(&m.figures.alignment.offsets_ns)
        .enumerate()
        .filter_map(|(k, ((d, r), &off))| {
            let (t, tl) = d.as_ref()?;
            let mut coll: Vec<usize> = t
                .analysis()
                .collectives
                .iter()
                .filter_map(|c| t.trace.slices.track.get(c.slice as usize))
                .map(|&tr| tr as usize)
                .collect();
            coll.sort_unstable();
            coll.dedup();
            Some(RankTimeline {
                t: &t.trace,
                lod: &tl.lod,
                counters: &tl.counters,
                groups: &tl.groups,
                steps: &tl.steps,
                // Short enough for the gutter whatever the file is called (the ranks table
                // above names each rank's file), with room for the folded streams' count.
                label: format!("rank {}", r.rank),
                offset_ns: off,
                memory: m
                    .lanes
                    .get(k)
                    .and_then(|l| l.as_ref())
                    .map(|l| l.label.clone()),
                collective_tracks: coll,
            })
        })
        .collect();
    f(&ranks)
}

/// The kernels of collective `focus` (index into `figures.collectives`), rank by rank in the
/// view's order.
pub fn flow_parts(session: &SessionRef, m: &RunModel, focus: Option<usize>) -> Vec<FlowPart> {
    let Some(c) = focus.and_then(|c| m.figures.collectives.get(c)) else {
        return Vec::new();
    };
    let mut v: Vec<FlowPart> = c
        .parts
        .iter()
        .filter_map(|p| {
            let k = m.figures.ranks.iter().position(|r| r.rank == p.rank)?;
            let file = *m.files.get(k)?;
            let call = session.trace(file)?.analysis().collectives.get(p.call)?;
            Some(FlowPart {
                rank: k,
                slice: call.slice,
            })
        })
        .collect();
    tracelight_core::sort::by_key(&mut v, |p| p.rank);
    v
}

/// The matched collective whose kernel on the view's rank `k` is `slice`, if any.
pub fn collective_of(session: &SessionRef, m: &RunModel, k: usize, slice: u32) -> Option<usize> {
    let rank = m.figures.ranks.get(k)?.rank;
    let calls = &session.trace(*m.files.get(k)?)?.analysis().collectives;
    m.figures.collectives.iter().position(|c| {
        c.parts
            .iter()
            .any(|p| p.rank == rank && calls.get(p.call).is_some_and(|x| x.slice == slice))
    })
}

/// The picked collective, as the bar names it.
pub fn focus_label(m: &RunModel, focus: Option<usize>) -> String {
    match focus.and_then(|c| m.figures.collectives.get(c)) {
        Some(c) => format!(
            "{} #{} · skew {} · latest rank {} · latency {}",
            c.name,
            c.seq,
            fmt::dur(c.skew_ns),
            c.latest_rank,
            fmt::dur(c.latency_ns)
        ),
        None if m.figures.collectives.is_empty() => {
            "no collective matched across ranks: no flow to draw".to_owned()
        }
        None => "no collective picked (click a heatmap cell, or use the buttons)".to_owned(),
    }
}

/// How the ranks' clocks were aligned, in words.
pub fn method_text(a: &Alignment) -> String {
    match a.method {
        AlignMethod::Collectives => "aligned on the ends of matched collectives".to_owned(),
        AlignMethod::Steps => format!(
            "aligned on the start of {}",
            a.step.clone().unwrap_or_default()
        ),
        AlignMethod::None => {
            "not aligned: no common step and no matched collective (clocks as written)".to_owned()
        }
    }
}

/// Rows as JSON for tests (`data-rows`): rank index, kind, y, h and label.
pub fn rows_json(rows: &[RankRow]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            let kind = match r.row.kind {
                RowKind::Group(_) => "group",
                RowKind::Slices { .. } => "slices",
                RowKind::Counter(_) => "counter",
                RowKind::Idle(_) => "idle",
                RowKind::Memory(_) => "memory",
            };
            format!(
                r#"{{"rank":{},"kind":"{kind}","y":{},"h":{},"label":{:?}}}"#,
                r.rank, r.row.y, r.row.h, r.row.label
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}
