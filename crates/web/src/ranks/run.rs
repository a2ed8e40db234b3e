//! The run behind the Ranks tab: the session's files laid out as ranks × artifacts by core's
//! `run::layout::recognise` (`session::run::layout`; the files the page left out by name go in as skipped), and for the traces of
//! the run's first cycle core's [`run_figures`] — the function `tracelight analyze DIR --json`
//! calls, with each rank's paired snapshot and memory-timeline peaks as the CLI pairs them. The
//! view only formats what this holds.

use super::memory::{lanes_of, RankLane};
use crate::session::memory::snapshot_summary;
use crate::session::run::{flight_recorder, FrRun};
use crate::session::{Content, Nav, SessionRef};
use std::sync::Arc;
use tracelight_core::analysis::collectives::{Collective, Part};
use tracelight_core::ingest::memory_timeline::peak as timeline_peak;
use tracelight_core::report::run::{run_figures, RankInput, RunFigures};
use tracelight_core::run::layout::{Artifact, RunLayout};

pub struct RunModel {
    pub layout: RunLayout,
    /// The cycle the figures are for (0 is what `analyze DIR --json`'s top-level fields hold;
    /// its `cycles[k]` holds the others).
    pub cycle: u32,
    pub figures: RunFigures,
    /// Session file index of each entry of `figures.ranks` (same order).
    pub files: Vec<usize>,
    /// Each rank's memory-file lane under its aligned timeline (same order).
    pub lanes: Vec<Option<RankLane>>,
    /// The run's Flight Recorder dumps read together, when it has some.
    pub fr: Option<Arc<FrRun>>,
}

impl RunModel {
    /// Lays out `session` plus the names it `skipped`, and computes `cycle`'s figures (a cycle
    /// the run lacks gives the first).
    pub fn of(session: &SessionRef, skipped: &[(String, String)], cycle: u32) -> RunModel {
        let layout = crate::session::run::layout(session, skipped);
        let cycle = if cycle < layout.cycles() { cycle } else { 0 };
        // A name may repeat (two folders' `rank-0.json`): each session file is used once.
        let mut used = vec![false; session.files.len()];
        let mut index_of = |name: &str, want: fn(&Content) -> bool| -> Option<usize> {
            let k = (0..session.files.len()).find(|&k| {
                !used[k] && session.files[k].name == name && want(&session.files[k].content)
            })?;
            used[k] = true;
            Some(k)
        };
        let mut picked = Vec::new();
        for u in layout.units.iter().filter(|u| u.cycle == cycle) {
            let Some(t) = u
                .file(Artifact::Trace)
                .and_then(|n| index_of(n, |c| matches!(c, Content::Trace(_))))
            else {
                continue;
            };
            let snap = u
                .file(Artifact::Snapshot)
                .and_then(|n| index_of(n, |c| matches!(c, Content::Snapshot(_))))
                .and_then(|k| {
                    // The Memory tab's cached summary: the same figures, computed once.
                    let sum = snapshot_summary(session, k)?;
                    let a = sum.devices.iter().map(|d| d.peak_active_bytes).max();
                    let r = sum.devices.iter().map(|d| d.peak_reserved_bytes).max();
                    a.zip(r)
                });
            let tl = u
                .file(Artifact::MemoryTimeline)
                .and_then(|n| index_of(n, |c| matches!(c, Content::MemoryTimeline(_))))
                .and_then(|k| match &session.files[k].content {
                    Content::MemoryTimeline(m) => Some(timeline_peak(m).peak_total_bytes),
                    _ => None,
                });
            picked.push((u.rank, t, snap, tl));
        }
        let inputs: Vec<RankInput> = picked
            .iter()
            .filter_map(|&(rank, t, snapshot_peak, timeline_peak)| {
                Some(RankInput {
                    rank,
                    analysis: session.trace(t)?.analysis(),
                    snapshot_peak,
                    timeline_peak,
                })
            })
            .collect();
        let figures = run_figures(&inputs);
        let files: Vec<usize> = picked.iter().map(|p| p.1).collect();
        let fr = flight_recorder(session, &layout, cycle).map(Arc::new);
        RunModel {
            layout,
            cycle,
            figures,
            lanes: lanes_of(session, &files),
            files,
            fr,
        }
    }

    /// Session file index of `rank`'s trace.
    pub fn file_of(&self, rank: i64) -> Option<usize> {
        let k = self.figures.ranks.iter().position(|r| r.rank == rank)?;
        self.files.get(k).copied()
    }

    /// Shows `rank`'s kernel of collective `c` in that rank's timeline (the collectives table and
    /// the heatmap cells both open it), labelled by `label` from that rank's part.
    pub fn reveal_call(
        &self,
        session: &SessionRef,
        nav: &Nav,
        c: &Collective,
        rank: i64,
        label: impl FnOnce(&Part) -> String,
    ) {
        let Some(part) = c.parts.iter().find(|p| p.rank == rank) else {
            return;
        };
        let Some(file) = self.file_of(rank) else {
            return;
        };
        let call = session
            .trace(file)
            .and_then(|t| t.analysis().collectives.get(part.call));
        if let Some(call) = call {
            nav.reveal(file, vec![call.slice], label(part));
        }
    }
}

/// What the view shows of the ranks' memory, in words: how many ranks have `[memory]` curves
/// (their trace's events) and how many a memory file lane, placed or not; or that none recorded
/// any, so an empty view is not read as "no memory used".
pub fn memory_text(m: &RunModel) -> String {
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
