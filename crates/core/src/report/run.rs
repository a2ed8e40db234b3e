//! One run's multi-rank figures (docs/definitions.md): the ranks' clocks aligned, collectives
//! matched ([`crate::analysis::collectives`]), per-rank step times, time split, waits and memory,
//! and the straggler with the ops that explain it.
//!
//! **Alignment.** Clocks of different hosts are not comparable, so raw timestamps are never
//! compared across ranks: every rank is shifted so that matched collectives end together
//! (`collectives`: a collective releases every rank at once, so its end is the one moment the
//! ranks share; the median over collectives is taken); without a matched collective, so that the
//! first `ProfilerStep#N` all ranks hold starts together (`steps`); with neither, clocks are used
//! as they are (`none`) and said so. Collectives come first because step starts do not coincide:
//! on the 8-rank DLRM run (one host, so its raw clocks are comparable) the ranks' collectives end
//! within 3 µs of each other while their `ProfilerStep#10` starts spread over 7.5 ms; aligning on
//! step starts there would name the rank that waited longest as the one that arrived last.
//!
//! **Straggler**: the rank the others wait for, one verdict ([`super::straggler`]). Its
//! evidence, per kernel (device time) and per CPU op (self CPU time): the rank's time per step
//! against the median of the other ranks' time per step, largest excess first.

use super::analysis::Analysis;
pub(crate) use super::straggler::median;
pub use super::straggler::OpDelta;
use super::straggler::{verdict, RankTiming, StragglerVerdict};
use crate::analysis::collectives::{
    match_collectives, offsets_from_collectives, Collective, RankCalls, RankWait,
};
use crate::analysis::memory::headline_peak;
use crate::model::Ns;
use serde::Serialize;

use std::collections::BTreeMap;

/// One rank of a run (one cycle of it, when the profiler wrote several).
#[derive(Debug, Clone, Copy)]
pub struct RankInput<'a> {
    pub rank: i64,
    pub analysis: &'a Analysis,
    /// (peak active, peak reserved) bytes of this rank's allocator snapshot, when the run has one.
    pub snapshot_peak: Option<(u64, u64)>,
    /// Peak total bytes of this rank's `export_memory_timeline`, when the run has one.
    pub timeline_peak: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AlignMethod {
    Steps,
    Collectives,
    None,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alignment {
    pub method: AlignMethod,
    /// The step the ranks were aligned on (`ProfilerStep#12`).
    pub step: Option<String>,
    /// Per rank (input order): its clock minus the first rank's, ns.
    pub offsets_ns: Vec<Ns>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankFigures {
    pub rank: i64,
    pub file: String,
    pub step_time_ns: Ns,
    pub steps_ns: Vec<Ns>,
    /// `ProfilerStep#N` of each of `steps_ns`.
    pub step_names: Vec<String>,
    pub compute_ns: Ns,
    pub comm_ns: Ns,
    pub exposed_comm_ns: Ns,
    pub idle_ns: Ns,
    pub wait: RankWait,
    /// Wait per step of this rank (by where the collective started), for the heatmap.
    pub wait_per_step_ns: Vec<Ns>,
    pub peak_allocated_bytes: i64,
    pub peak_reserved_bytes: i64,
    pub snapshot_peak: Option<(u64, u64)>,
    pub timeline_peak: Option<i64>,
    /// Start of its first step on the aligned clock, relative to the earliest rank's.
    pub first_step_start_ns: Option<Ns>,
}

pub const EVIDENCE_ROWS: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunFigures {
    pub alignment: Alignment,
    /// In input order.
    pub ranks: Vec<RankFigures>,
    pub straggler: StragglerVerdict,
    pub collectives: Vec<Collective>,
    /// Calls no other rank matched.
    pub unmatched_calls: u64,
}

/// Aligns on matched collectives, else on the first step every rank holds.
fn align(inputs: &[RankInput]) -> Alignment {
    let rc: Vec<RankCalls> = inputs
        .iter()
        .map(|r| RankCalls {
            rank: r.rank,
            calls: &r.analysis.collectives,
            offset_ns: 0,
        })
        .collect();
    if !crate::analysis::collectives::group_calls(&rc).is_empty() {
        return Alignment {
            method: AlignMethod::Collectives,
            step: None,
            offsets_ns: offsets_from_collectives(&rc),
        };
    }
    let common = inputs.first().and_then(|first| {
        first.analysis.steps.iter().find(|s| {
            inputs
                .iter()
                .all(|r| r.analysis.steps.iter().any(|x| x.name == s.name))
        })
    });
    let Some(step) = common else {
        return Alignment {
            method: AlignMethod::None,
            step: None,
            offsets_ns: vec![0; inputs.len()],
        };
    };
    let start = |a: &Analysis| {
        a.steps
            .iter()
            .find(|x| x.name == step.name)
            .map_or(0, |x| x.start_ns)
    };
    Alignment {
        method: AlignMethod::Steps,
        step: Some(step.name.clone()),
        offsets_ns: inputs
            .iter()
            .map(|r| start(r.analysis) - step.start_ns)
            .collect(),
    }
}

/// Per-step time of every kernel name (device) and CPU op name (self CPU) of one rank.
fn per_step_times(a: &Analysis) -> BTreeMap<(&'static str, &str), (f64, &str)> {
    let steps = a.steps.len().max(1) as f64;
    let mut m = BTreeMap::new();
    for k in &a.kernels.rows {
        m.insert(
            ("kernel", k.name.as_str()),
            (k.total_ns as f64 / steps, k.fine_category.as_str()),
        );
    }
    for o in a.ops.rows.iter().filter(|o| !o.on_device) {
        if crate::model::steps::is_merged(&o.name) || o.name.starts_with("ProfilerStep") {
            continue;
        }
        m.insert(
            ("cpu_op", o.name.as_str()),
            (o.self_cpu_ns as f64 / steps, "cpu"),
        );
    }
    m
}

fn evidence(inputs: &[RankInput], slow: usize) -> Vec<OpDelta> {
    let all: Vec<_> = inputs.iter().map(|r| per_step_times(r.analysis)).collect();
    let mut keys: Vec<(&'static str, &str)> = all.iter().flat_map(|m| m.keys().copied()).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut rows: Vec<OpDelta> = keys
        .into_iter()
        .filter_map(|key| {
            let (mine, cat) = all[slow].get(&key).copied().unwrap_or((0.0, ""));
            let others: Vec<f64> = all
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != slow)
                .map(|(_, m)| m.get(&key).map_or(0.0, |v| v.0))
                .collect();
            let cat = if cat.is_empty() {
                all.iter().find_map(|m| m.get(&key)).map_or("", |v| v.1)
            } else {
                cat
            };
            let med = median(others);
            (mine > med).then(|| OpDelta {
                name: key.1.to_owned(),
                kind: key.0,
                category: cat.to_owned(),
                straggler_ns: mine,
                median_ns: med,
                delta_ns: mine - med,
            })
        })
        .collect();
    crate::sort::by(&mut rows, |a, b| {
        b.delta_ns.total_cmp(&a.delta_ns).then(a.name.cmp(&b.name))
    });
    rows.truncate(EVIDENCE_ROWS);
    rows
}

/// Everything multi-rank about `inputs` (ranks of one cycle).
pub fn run_figures(inputs: &[RankInput]) -> RunFigures {
    let alignment = align(inputs);
    let rc: Vec<RankCalls> = inputs
        .iter()
        .zip(&alignment.offsets_ns)
        .map(|(r, &o)| RankCalls {
            rank: r.rank,
            calls: &r.analysis.collectives,
            offset_ns: o,
        })
        .collect();
    let (collectives, waits) = match_collectives(&rc);
    let matched: u64 = collectives.iter().map(|c| c.parts.len() as u64).sum();
    let total: u64 = inputs
        .iter()
        .map(|r| r.analysis.collectives.len() as u64)
        .sum();
    let mut ranks: Vec<RankFigures> = inputs
        .iter()
        .zip(waits)
        .map(|(r, wait)| {
            let a = r.analysis;
            let mut per_step = vec![0; a.steps.len()];
            for c in &collectives {
                for p in c.parts.iter().filter(|p| p.rank == r.rank) {
                    let at = a.collectives[p.call].start_ns;
                    if let Some(s) = a
                        .steps
                        .iter()
                        .position(|s| s.start_ns <= at && at < s.start_ns + s.dur_ns)
                    {
                        per_step[s] += p.wait_ns;
                    }
                }
            }
            let (pa, pr) = headline_peak(&a.memory);
            RankFigures {
                rank: r.rank,
                file: a.path.clone(),
                step_time_ns: a.step_time_ns(),
                steps_ns: a.steps.iter().map(|s| s.dur_ns).collect(),
                step_names: a.steps.iter().map(|s| s.name.clone()).collect(),
                compute_ns: a.gpu.temporal.compute_ns,
                comm_ns: a.gpu.overlap.comm_ns,
                exposed_comm_ns: a.gpu.overlap.exposed_comm_ns,
                idle_ns: a.gpu.temporal.idle_ns,
                wait,
                wait_per_step_ns: per_step,
                peak_allocated_bytes: pa,
                peak_reserved_bytes: pr,
                snapshot_peak: r.snapshot_peak,
                timeline_peak: r.timeline_peak,
                first_step_start_ns: None,
            }
        })
        .collect();
    let starts: Vec<Option<Ns>> = inputs
        .iter()
        .zip(&alignment.offsets_ns)
        .map(|(r, o)| r.analysis.steps.first().map(|s| s.start_ns - o))
        .collect();
    let earliest = starts.iter().flatten().min().copied().unwrap_or(0);
    for (r, s) in ranks.iter_mut().zip(starts) {
        r.first_step_start_ns = s.map(|s| s - earliest);
    }
    let timing: Vec<RankTiming> = ranks
        .iter()
        .map(|r| RankTiming {
            rank: r.rank,
            step_time_ns: r.step_time_ns,
            steps_ns: &r.steps_ns,
            wait: &r.wait,
            first_step_start_ns: r.first_step_start_ns,
        })
        .collect();
    let straggler = verdict(&timing, &collectives, &|k| evidence(inputs, k));
    RunFigures {
        alignment,
        ranks,
        straggler,
        collectives,
        unmatched_calls: total - matched,
    }
}
