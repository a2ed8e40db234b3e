//! The straggler (docs/definitions.md): **the rank the others wait for**, one verdict that
//! `analyze --json`, the Markdown summary and the Ranks tab all show.
//!
//! In a synchronous job every rank's step takes the same time (the collectives equalize them),
//! so "the slowest step" names nobody, or names a rank that merely waited. Where collectives were
//! matched across ranks, the time each collective costs the group (the sum over ranks of
//! latest start − own start) is charged to the rank that arrived last; the straggler is the rank
//! charged the most, when it **stands out**:
//!
//! - its share of all the waiting is at least halfway between chance and all of it,
//!   `(1 + 1/n) / 2` for `n` ranks (75 % of 2 ranks, 56 % of 8): a latest arrival that rotates
//!   among ranks gives each about `1/n`;
//! - and the time it costs each other rank per step is above the step-to-step noise: the median
//!   over ranks of the standard deviation of their step times, and never less than 1 % of the
//!   median step (one step per rank has no deviation to measure).
//!
//! Without a matched collective, the slowest mean step is used instead, with the same noise
//! floor: it stands out when it exceeds the median rank's step by more than the noise. Otherwise
//! the verdict is "no straggler" with the figures that say why.
//!
//! The reasons are produced here once, structured and in order ([`Reason`]); each output renders
//! them with its own number format through [`Reason::sentence`], so the page gives every reason
//! the CLI gives, in the same order.

use crate::analysis::collectives::{Collective, RankWait};
use crate::model::Ns;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
/// One op or kernel where a rank spends more per step than the median of the other ranks.
pub struct OpDelta {
    pub name: String,
    /// `kernel` (device time) or `cpu_op` (self CPU time).
    pub kind: &'static str,
    pub category: String,
    pub straggler_ns: f64,
    pub median_ns: f64,
    pub delta_ns: f64,
}

/// The median (the mean of the middle two for an even count; 0 for none).
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    crate::sort::by(&mut v, f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// What the verdict needs of one rank (`report::run`'s per-rank figures).
#[derive(Debug, Clone, Copy)]
pub struct RankTiming<'a> {
    pub rank: i64,
    /// Mean step (the window when there are no steps).
    pub step_time_ns: Ns,
    pub steps_ns: &'a [Ns],
    pub wait: &'a RankWait,
    /// Start of its first step on the aligned clock, after the earliest rank's.
    pub first_step_start_ns: Option<Ns>,
}

/// How the straggler was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StragglerMethod {
    /// It arrived last at the matched collectives.
    CollectiveArrival,
    /// No collective was matched: its mean step is the longest.
    StepTime,
}

impl StragglerMethod {
    pub fn label(self) -> &'static str {
        match self {
            StragglerMethod::CollectiveArrival => "collective arrival",
            StragglerMethod::StepTime => "step time",
        }
    }
}

/// One reason the straggler is the straggler, in the order the outputs list them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// It arrived last at `arrived_last` of its `collectives` matched collectives.
    ArrivedLast {
        arrived_last: u32,
        collectives: u32,
        pct: f64,
        /// Median over its collectives of its start − the collective's median start.
        median_lateness_ns: Ns,
        /// The other ranks' summed wait at the collectives it arrived last at.
        others_wait_ns: Ns,
        /// Its share of all the waiting at matched collectives.
        share: f64,
    },
    /// It entered its first step this long after the earliest rank (aligned clocks): the delay
    /// began before the profiled window.
    LateStart { after_ns: Ns },
    /// Its mean step is the longest.
    SlowestStep {
        step_time_ns: Ns,
        median_step_time_ns: f64,
        vs_median: f64,
    },
    /// Ops and kernels where it spends more per step than the median of the other ranks (the
    /// evidence table lists them).
    SlowerOps {
        count: usize,
        /// Summed excess per step of the listed rows.
        excess_per_step_ns: f64,
        top: String,
        top_kind: &'static str,
        top_delta_ns: f64,
    },
    /// Nothing in the profiled window explains it: no late start and no op slower than the
    /// others'.
    Unexplained,
}

impl Reason {
    /// The reason in words. `dur` formats a duration given in ns: the CLI passes its ms, the page
    /// its shared formatter, so both say the same thing in their own number format.
    pub fn sentence(&self, dur: &dyn Fn(f64) -> String) -> String {
        match self {
            Reason::ArrivedLast {
                arrived_last,
                collectives,
                pct,
                median_lateness_ns,
                others_wait_ns,
                share,
            } => format!(
                "Arrived last at {arrived_last} of its {collectives} matched collectives ({pct:.0}%), a median {} after the collective's median rank; the other ranks waited {} in all for it there, {:.0}% of all the waiting at collectives.",
                dur(*median_lateness_ns as f64),
                dur(*others_wait_ns as f64),
                share * 100.0
            ),
            Reason::LateStart { after_ns } => format!(
                "It entered its first step {} after the earliest rank (aligned clocks): delay that began before the profiled window.",
                dur(*after_ns as f64)
            ),
            Reason::SlowestStep {
                step_time_ns,
                median_step_time_ns,
                vs_median,
            } => format!(
                "Its mean step is the longest: {}, {vs_median:.3}× the median {} (+{}).",
                dur(*step_time_ns as f64),
                dur(*median_step_time_ns),
                dur(*step_time_ns as f64 - median_step_time_ns)
            ),
            Reason::SlowerOps {
                count,
                excess_per_step_ns,
                top,
                top_kind,
                top_delta_ns,
            } => format!(
                "{count} op(s) and kernel(s) take longer per step on it than the other ranks' median, +{} per step together; the largest is the {} `{}`, +{} per step.",
                dur(*excess_per_step_ns),
                top_kind.replace('_', " "),
                short(top),
                dur(*top_delta_ns)
            ),
            Reason::Unexplained => "No op in the profiled window is slower on it than on the other ranks and it did not start late: the time goes outside the profiled ops (data loading, the host, another process).".to_owned(),
        }
    }
}

fn short(name: &str) -> String {
    if name.chars().count() <= 80 {
        return name.to_owned();
    }
    let mut s: String = name.chars().take(79).collect();
    s.push('…');
    s
}

/// The rank the others wait for, with the figures and reasons that name it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Straggler {
    pub rank: i64,
    pub method: StragglerMethod,
    /// Matched collectives it took part in, and at how many it arrived last.
    pub collectives: u32,
    pub arrived_last: u32,
    pub arrived_last_pct: f64,
    pub median_lateness_ns: Ns,
    pub others_wait_ns: Ns,
    /// Its share of all the waiting at matched collectives (0 for [`StragglerMethod::StepTime`]).
    pub wait_share: f64,
    /// What it costs each other rank per step: `others_wait / steps / (ranks − 1)`.
    pub lost_per_step_ns: f64,
    pub step_time_ns: Ns,
    /// Median over all ranks of the mean step.
    pub median_step_time_ns: f64,
    pub vs_median: f64,
    /// The step-to-step noise it was compared with (module doc).
    pub noise_ns: f64,
    pub reasons: Vec<Reason>,
    /// Per op and kernel, this rank's time per step against the other ranks' median.
    pub ops: Vec<OpDelta>,
}

/// Why no rank is named.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoStraggler {
    /// Fewer than two ranks with steps, and no collective matched across ranks.
    NothingToCompare,
    /// The rank charged the most waiting (or with the slowest step) does not stand out.
    WithinNoise {
        method: StragglerMethod,
        rank: i64,
        /// Its share of all the waiting (collective arrival).
        share: f64,
        /// The share it would need.
        share_needed: f64,
        /// What it costs each other rank per step (collective arrival), or its step's excess
        /// over the median (step time).
        excess_ns: f64,
        noise_ns: f64,
    },
}

impl NoStraggler {
    pub fn sentence(&self, dur: &dyn Fn(f64) -> String) -> String {
        match self {
            NoStraggler::NothingToCompare => "No straggler: fewer than two ranks with steps, and no collective matched across ranks.".to_owned(),
            NoStraggler::WithinNoise {
                method: StragglerMethod::CollectiveArrival,
                rank,
                share,
                share_needed,
                excess_ns,
                noise_ns,
            } => {
                let mut s = format!(
                    "No straggler: no rank stands out at the collectives. Rank {rank} caused the most waiting, {:.0}% of it",
                    share * 100.0
                );
                if share < share_needed {
                    s += &format!(
                        " (a straggler would cause at least {:.0}%: the latest arrival rotates among ranks)",
                        share_needed * 100.0
                    );
                }
                s += &format!(
                    ", costing each other rank {} per step",
                    dur(*excess_ns)
                );
                if excess_ns <= noise_ns {
                    s += &format!(", within the step-to-step noise of {}", dur(*noise_ns));
                }
                s + "."
            }
            NoStraggler::WithinNoise {
                rank,
                excess_ns,
                noise_ns,
                ..
            } => format!(
                "No straggler: no collective was matched, and the slowest mean step (rank {rank}) exceeds the median by {}, within the step-to-step noise of {}.",
                dur(*excess_ns),
                dur(*noise_ns)
            ),
        }
    }
}

/// One verdict: a straggler, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum StragglerVerdict {
    Straggler(Box<Straggler>),
    None(NoStraggler),
}

impl StragglerVerdict {
    pub fn straggler(&self) -> Option<&Straggler> {
        match self {
            StragglerVerdict::Straggler(s) => Some(s),
            StragglerVerdict::None(_) => None,
        }
    }

    pub fn none(&self) -> Option<&NoStraggler> {
        match self {
            StragglerVerdict::Straggler(_) => None,
            StragglerVerdict::None(n) => Some(n),
        }
    }
}

fn std_dev(v: &[Ns]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let mean = v.iter().sum::<Ns>() as f64 / v.len() as f64;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    var.sqrt()
}

/// The step-to-step noise (module doc).
pub fn noise_ns(ranks: &[RankTiming]) -> f64 {
    let med_step = median(ranks.iter().map(|r| r.step_time_ns as f64).collect());
    let sigma = median(ranks.iter().map(|r| std_dev(r.steps_ns)).collect());
    sigma.max(0.01 * med_step)
}

/// The verdict for `ranks` (input order) and their matched `collectives`; `evidence(k)` gives
/// the op rows of rank index `k` (called only for the rank named).
pub fn verdict(
    ranks: &[RankTiming],
    collectives: &[Collective],
    evidence: &dyn Fn(usize) -> Vec<OpDelta>,
) -> StragglerVerdict {
    let n = ranks.len();
    let med_step = median(ranks.iter().map(|r| r.step_time_ns as f64).collect());
    let noise = noise_ns(ranks);
    let slowest = (0..n).max_by(|&a, &b| {
        ranks[a]
            .step_time_ns
            .cmp(&ranks[b].step_time_ns)
            .then(ranks[b].rank.cmp(&ranks[a].rank))
    });
    let step_excess = |k: usize| ranks[k].step_time_ns as f64 - med_step;
    let slowest_step = |k: usize| Reason::SlowestStep {
        step_time_ns: ranks[k].step_time_ns,
        median_step_time_ns: med_step,
        vs_median: if med_step > 0.0 {
            ranks[k].step_time_ns as f64 / med_step
        } else {
            0.0
        },
    };
    let base = |k: usize, method| Straggler {
        rank: ranks[k].rank,
        method,
        collectives: ranks[k].wait.collectives,
        arrived_last: ranks[k].wait.arrived_last,
        arrived_last_pct: ranks[k].wait.arrived_last_pct,
        median_lateness_ns: 0,
        others_wait_ns: 0,
        wait_share: 0.0,
        lost_per_step_ns: 0.0,
        step_time_ns: ranks[k].step_time_ns,
        median_step_time_ns: med_step,
        vs_median: if med_step > 0.0 {
            ranks[k].step_time_ns as f64 / med_step
        } else {
            0.0
        },
        noise_ns: noise,
        reasons: Vec::new(),
        ops: Vec::new(),
    };
    let explain = |s: &mut Straggler, k: usize| {
        s.ops = evidence(k);
        if let Some(top) = s.ops.first() {
            s.reasons.push(Reason::SlowerOps {
                count: s.ops.len(),
                excess_per_step_ns: s.ops.iter().map(|o| o.delta_ns).sum(),
                top: top.name.clone(),
                top_kind: top.kind,
                top_delta_ns: top.delta_ns,
            });
        } else if !s
            .reasons
            .iter()
            .any(|r| matches!(r, Reason::LateStart { .. }))
        {
            s.reasons.push(Reason::Unexplained);
        }
    };

    // What each rank's late arrivals cost the group.
    let mut blame = vec![0 as Ns; n];
    for c in collectives {
        if let Some(k) = ranks.iter().position(|r| r.rank == c.latest_rank) {
            blame[k] += c.parts.iter().map(|p| p.wait_ns).sum::<Ns>();
        }
    }
    let total: Ns = blame.iter().sum();
    if !collectives.is_empty() && n > 1 {
        let Some(k) = (0..n).max_by(|&a, &b| {
            blame[a]
                .cmp(&blame[b])
                .then(ranks[a].wait.arrived_last.cmp(&ranks[b].wait.arrived_last))
                .then(ranks[b].rank.cmp(&ranks[a].rank))
        }) else {
            return StragglerVerdict::None(NoStraggler::NothingToCompare);
        };
        let share = if total > 0 {
            blame[k] as f64 / total as f64
        } else {
            0.0
        };
        let needed = (1.0 + 1.0 / n as f64) / 2.0;
        let steps = ranks[k].steps_ns.len().max(1) as f64;
        let lost = blame[k] as f64 / steps / (n - 1) as f64;
        if total == 0 || share < needed || lost <= noise {
            return StragglerVerdict::None(NoStraggler::WithinNoise {
                method: StragglerMethod::CollectiveArrival,
                rank: ranks[k].rank,
                share,
                share_needed: needed,
                excess_ns: lost,
                noise_ns: noise,
            });
        }
        let rank = ranks[k].rank;
        let lateness: Vec<f64> = collectives
            .iter()
            .filter_map(|c| {
                let me = c.parts.iter().find(|p| p.rank == rank)?;
                let m = median(c.parts.iter().map(|p| p.start_ns as f64).collect());
                Some(me.start_ns as f64 - m)
            })
            .collect();
        let mut s = base(k, StragglerMethod::CollectiveArrival);
        s.median_lateness_ns = median(lateness) as Ns;
        s.others_wait_ns = blame[k];
        s.wait_share = share;
        s.lost_per_step_ns = lost;
        s.reasons.push(Reason::ArrivedLast {
            arrived_last: s.arrived_last,
            collectives: s.collectives,
            pct: s.arrived_last_pct,
            median_lateness_ns: s.median_lateness_ns,
            others_wait_ns: s.others_wait_ns,
            share,
        });
        if let Some(after) = ranks[k].first_step_start_ns.filter(|&a| a as f64 > noise) {
            s.reasons.push(Reason::LateStart { after_ns: after });
        }
        if slowest == Some(k) && step_excess(k) > noise {
            s.reasons.push(slowest_step(k));
        }
        explain(&mut s, k);
        return StragglerVerdict::Straggler(Box::new(s));
    }
    let with_steps = ranks.iter().filter(|r| r.step_time_ns > 0).count();
    let Some(k) = slowest.filter(|_| with_steps > 1 && med_step > 0.0) else {
        return StragglerVerdict::None(NoStraggler::NothingToCompare);
    };
    if step_excess(k) <= noise {
        return StragglerVerdict::None(NoStraggler::WithinNoise {
            method: StragglerMethod::StepTime,
            rank: ranks[k].rank,
            share: 0.0,
            share_needed: 0.0,
            excess_ns: step_excess(k),
            noise_ns: noise,
        });
    }
    let mut s = base(k, StragglerMethod::StepTime);
    s.reasons.push(slowest_step(k));
    explain(&mut s, k);
    StragglerVerdict::Straggler(Box::new(s))
}
