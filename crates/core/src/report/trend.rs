//! A trend over N runs (`tracelight trend DIR`): each run — a trace, or a run folder of one
//! trace per rank — read as one side of a diff ([`Side`]), in the order of its name (name runs by
//! date or by commit number, `2026-11-01`, `0042-abc123`), with its step time, step breakdown,
//! top kernels and peak memory per step; and the **change points**, where a run's steps moved
//! against the run before it beyond noise.
//!
//! A change point uses the CI gate's test ([`crate::report::diff::stats::shift`]): the
//! Hodges–Lehmann shift of this run's step times against the previous run's, with its 95 %
//! distribution-free interval; it is a change point when the interval leaves out 0 *and* the
//! shift is at least [`MIN_CHANGE`] of the previous median (a 0.3 % shift measured very exactly
//! is real but not worth a mark). Runs too short to tell (3 steps against 3) are never marked and
//! say so. Same figures, same definitions as `tracelight diff` (docs/compare.md).

use crate::analysis::steps::CATEGORIES;
use crate::report::diff::side::Side;
use crate::report::diff::stats::{median, shift};
use crate::report::diff::{fmt_delta_ns, fmt_ns, markdown::bytes};
use crate::report::num;
use serde_json::{json, Value};

/// The smallest relative shift of the median step marked as a change point.
pub const MIN_CHANGE: f64 = 0.02;
/// Kernels listed per run.
pub const TOP_KERNELS: usize = 5;

/// How one run's steps moved against the run before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The shift (ns) and its 95 % interval; `None` when too short to tell.
    pub shift: Option<(f64, f64, f64)>,
    /// Shift ÷ the previous run's median step.
    pub rel: Option<f64>,
    pub change_point: bool,
}

/// One run of the series.
#[derive(Debug, Clone)]
pub struct Run {
    pub name: String,
    pub side: Side,
    /// Against the previous run (`None` for the first).
    pub vs_prev: Option<Step>,
    /// (kernel, GPU ns per step), heaviest first.
    pub top_kernels: Vec<(String, f64)>,
}

/// The series, in name order.
#[derive(Debug, Clone)]
pub struct Trend {
    pub runs: Vec<Run>,
}

impl Trend {
    /// `runs` as (name, side), sorted here by name.
    pub fn of(mut runs: Vec<(String, Side)>) -> Trend {
        crate::sort::by(&mut runs, |a, b| a.0.cmp(&b.0));
        let mut out: Vec<Run> = Vec::with_capacity(runs.len());
        for (name, side) in runs {
            let vs_prev = out.last().map(|p| {
                let prev = &p.side.step_samples;
                let s = shift(prev, &side.step_samples, 0.95);
                let base = median(prev);
                let rel = s.and_then(|s| (base > 0.0).then(|| s.estimate / base));
                Step {
                    shift: s.map(|s| (s.estimate, s.lo, s.hi)),
                    rel,
                    change_point: s.is_some_and(|s| s.significant())
                        && rel.is_some_and(|r| r.abs() >= MIN_CHANGE),
                }
            });
            let per = side.rank_steps.max(1.0);
            let mut k: Vec<(String, f64)> = side
                .kernels
                .iter()
                .map(|s| (s.name.clone(), s.total_ns as f64 / per))
                .collect();
            crate::sort::by(&mut k, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            k.truncate(TOP_KERNELS);
            out.push(Run {
                name,
                side,
                vs_prev,
                top_kernels: k,
            });
        }
        Trend { runs: out }
    }

    /// The names of the runs marked as change points.
    pub fn change_points(&self) -> Vec<&str> {
        self.runs
            .iter()
            .filter(|r| r.vs_prev.as_ref().is_some_and(|s| s.change_point))
            .map(|r| r.name.as_str())
            .collect()
    }

    /// The change points in a sentence (the Markdown's and the page's line above the series).
    pub fn summary(&self) -> String {
        let cps = self.change_points();
        if cps.is_empty() {
            return "No change point: no run's steps moved against the run before beyond noise."
                .to_owned();
        }
        format!(
            "Change points (the step time moved against the run before, 95% interval clear of 0, at least {}): {}.",
            num::share(MIN_CHANGE),
            cps.iter()
                .map(|c| format!("**{c}**"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    /// The top kernels over the series (each in some run's [`TOP_KERNELS`]; the `max` with the
    /// most GPU time per step in any run first) with their GPU ns per step in every run
    /// (`None` where the run has no such kernel): the page's "top kernels" panel.
    pub fn kernel_series(&self, max: usize) -> Vec<(String, Vec<Option<f64>>)> {
        let mut names: Vec<(String, f64)> = Vec::new();
        for r in &self.runs {
            for (n, v) in &r.top_kernels {
                match names.iter_mut().find(|x| x.0 == *n) {
                    Some(x) => x.1 = x.1.max(*v),
                    None => names.push((n.clone(), *v)),
                }
            }
        }
        crate::sort::by(&mut names, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        names.truncate(max);
        names
            .into_iter()
            .map(|(n, _)| {
                let per_run = self
                    .runs
                    .iter()
                    .map(|r| {
                        let per = r.side.rank_steps.max(1.0);
                        r.side
                            .kernels
                            .iter()
                            .find(|k| k.name == n)
                            .map(|k| k.total_ns as f64 / per)
                    })
                    .collect();
                (n, per_run)
            })
            .collect()
    }

    /// `tracelight trend DIR --json`: per run its figures (µs per step, bytes), the change
    /// against the previous run, and the change points.
    pub fn json(&self) -> Value {
        let us = |v: f64| v / 1e3;
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|r| {
                let s = &r.side;
                let breakdown: serde_json::Map<String, Value> = CATEGORIES
                    .iter()
                    .zip(s.breakdown_ns)
                    .map(|(c, v)| ((*c).to_owned(), json!(us(v))))
                    .collect();
                let vs = r.vs_prev.as_ref().map(|v| {
                    json!({
                        "shift_us": v.shift.map(|x| us(x.0)),
                        "interval_us": v.shift.map(|x| [us(x.1), us(x.2)]),
                        "rel": v.rel,
                        "too_short": v.shift.is_none(),
                        "change_point": v.change_point,
                    })
                });
                json!({
                    "name": r.name,
                    "files": s.files,
                    "ranks": s.ranks.len(),
                    "steps": s.step_samples.len(),
                    "has_steps": s.has_steps,
                    "step_time": {"median_us": us(s.step_ns.median), "mean_us": us(s.step_ns.mean),
                        "stdev_us": us(s.step_ns.stdev), "min_us": us(s.step_ns.min), "max_us": us(s.step_ns.max)},
                    "breakdown_us": breakdown,
                    "gpu_utilization": s.utilization,
                    "peak_memory_bytes": s.peak_allocated_bytes,
                    "top_kernels": r.top_kernels.iter().map(|(n, v)| json!({"name": n, "us_per_step": us(*v)})).collect::<Vec<_>>(),
                    "vs_previous": vs,
                })
            })
            .collect();
        json!({"runs": runs, "change_points": self.change_points(), "min_change": MIN_CHANGE})
    }

    /// The series as a Markdown table, change points marked.
    pub fn markdown(&self) -> String {
        let mut s = format!("## Trend over {} runs\n\n", self.runs.len());
        s += &self.summary();
        s += "\n\n";
        s += "| run | steps | median step | vs previous (95% interval) | kernel | communication | cpu exec | other | peak memory | top kernel |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
        let part = |side: &Side, name: &str| {
            CATEGORIES
                .iter()
                .position(|c| *c == name)
                .map_or(String::new(), |k| fmt_ns(side.breakdown_ns[k]))
        };
        for r in &self.runs {
            let sd = &r.side;
            let vs = match &r.vs_prev {
                None => String::new(),
                Some(Step { shift: None, .. }) => "too short to tell".into(),
                Some(v) => {
                    let (e, lo, hi) = v.shift.unwrap_or_default();
                    let mark = match (v.change_point, e > 0.0) {
                        (true, true) => "▲ ",
                        (true, false) => "▼ ",
                        _ => "",
                    };
                    format!(
                        "{mark}{} ({}; {} … {})",
                        fmt_delta_ns(e),
                        v.rel.map_or(String::new(), num::signed_share),
                        fmt_delta_ns(lo),
                        fmt_delta_ns(hi)
                    )
                }
            };
            let name = if r.vs_prev.as_ref().is_some_and(|v| v.change_point) {
                format!("**{}**", r.name)
            } else {
                r.name.clone()
            };
            s += &format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                name.replace('|', "\\|"),
                sd.step_samples.len(),
                fmt_ns(sd.step_ns.median),
                vs,
                part(sd, "kernel"),
                part(sd, "communication"),
                part(sd, "cpu_exec"),
                part(sd, "other"),
                sd.peak_allocated_bytes
                    .map_or("—".into(), |b| bytes(b as f64)),
                r.top_kernels
                    .first()
                    .map_or(String::new(), |(n, v)| format!(
                        "`{}` {}",
                        n.chars().take(48).collect::<String>().replace('|', "\\|"),
                        fmt_ns(*v)
                    )),
            );
        }
        s
    }
}
