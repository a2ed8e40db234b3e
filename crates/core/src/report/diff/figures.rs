//! The diff's figures under the names a CI gate bounds them by: `tracelight diff --json` writes
//! them as its `figures` object (`"step_time": {"unit": "us", "a": …, "b": …}`), and
//! `--fail-if 'step_time>+5%'` ([`super::gate`]) reads the same names. One list, so a name that
//! works in the gate is one the JSON shows.
//!
//! A figure measured once per step (step time, each part of the step breakdown) keeps every
//! rank-step's value, so the gate compares distributions ([`super::stats`]); its `a` and `b` are
//! then the *medians* per step (not the means the overview tables show: a gate should not move
//! with one slow warm-up step). The others are one value per side.

use super::{side::Side, Diff};
use crate::analysis::steps::CATEGORIES;
use crate::report::num;

/// What a figure's numbers are (and what a bound on it may be written in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// ns inside; µs in JSON.
    Time,
    Bytes,
    /// 0..1 (utilization, MFU).
    Ratio,
    Tflops,
    Flop,
}

impl Unit {
    /// The unit the JSON writes the figure in.
    pub fn json_label(self) -> &'static str {
        match self {
            Unit::Time => "us",
            Unit::Bytes => "bytes",
            Unit::Ratio => "ratio",
            Unit::Tflops => "tflops",
            Unit::Flop => "flop",
        }
    }

    /// A value in this unit (ns for times) in the JSON's unit.
    pub fn to_json(self, v: f64) -> f64 {
        match self {
            Unit::Time => v / 1e3,
            _ => v,
        }
    }

    /// A value as text, in the words the diff's tables use.
    pub fn text(self, v: f64) -> String {
        match self {
            Unit::Time => super::fmt_ns(v),
            Unit::Bytes => super::markdown::bytes(v),
            Unit::Ratio => num::share(v),
            Unit::Tflops => num::tflops(v),
            Unit::Flop => num::flop(v),
        }
    }

    /// A change B − A as signed text.
    pub fn delta_text(self, d: f64) -> String {
        match self {
            Unit::Time => super::fmt_delta_ns(d),
            Unit::Bytes if d >= 0.0 => format!("+{}", super::markdown::bytes(d)),
            Unit::Bytes => super::markdown::bytes(d),
            Unit::Ratio => num::points(d),
            Unit::Tflops | Unit::Flop => {
                let t = self.text(d);
                if d >= 0.0 {
                    format!("+{t}")
                } else {
                    t
                }
            }
        }
    }
}

/// One named figure on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub name: String,
    pub unit: Unit,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// Per-step values (empty for a one-value figure).
    pub a_samples: Vec<f64>,
    pub b_samples: Vec<f64>,
    /// Why the two values measure different things (FLOP rates of unequal coverage).
    pub not_comparable: Option<String>,
    /// What the figure is, in words (docs/ci-gate.md lists the same).
    pub what: &'static str,
}

impl Figure {
    fn one(name: &str, unit: Unit, a: Option<f64>, b: Option<f64>, what: &'static str) -> Self {
        Figure {
            name: name.to_owned(),
            unit,
            a,
            b,
            a_samples: Vec::new(),
            b_samples: Vec::new(),
            not_comparable: None,
            what,
        }
    }

    fn sampled(name: &str, a: Vec<f64>, b: Vec<f64>, what: &'static str) -> Self {
        let med = |v: &[f64]| (!v.is_empty()).then(|| super::stats::median(v));
        Figure {
            a: med(&a),
            b: med(&b),
            a_samples: a,
            b_samples: b,
            ..Figure::one(name, Unit::Time, None, None, what)
        }
    }

    /// Whether the figure has per-step values on both sides.
    pub fn is_sampled(&self) -> bool {
        !self.a_samples.is_empty() && !self.b_samples.is_empty()
    }
}

fn parts(s: &Side, c: usize) -> Vec<f64> {
    s.part_samples.iter().map(|p| p[c]).collect()
}

/// Every figure of the diff, in the order the JSON lists them.
pub fn figures(d: &Diff) -> Vec<Figure> {
    let (a, b) = (&d.a, &d.b);
    let mut v = vec![
        Figure::sampled(
            "step_time",
            a.step_samples.clone(),
            b.step_samples.clone(),
            "median step time (each rank-step one sample; the trace window when there are no ProfilerStep#N)",
        ),
        Figure::one(
            "step_time_mean",
            Unit::Time,
            Some(a.step_ns.mean),
            Some(b.step_ns.mean),
            "mean step time",
        ),
    ];
    if a.has_steps && b.has_steps {
        for (c, name) in CATEGORIES.iter().enumerate() {
            v.push(Figure::sampled(
                &format!("breakdown.{name}"),
                parts(a, c),
                parts(b, c),
                "median per step of one part of the step breakdown (TensorBoard priorities)",
            ));
        }
    }
    let fig = |n: &str| d.figure(n).map(|l| (l.a, l.b)).unwrap_or((None, None));
    let (ua, ub) = fig("gpu_utilization");
    v.push(Figure::one(
        "gpu_utilization",
        Unit::Ratio,
        ua,
        ub,
        "GPU utilization (kernel time ÷ step window)",
    ));
    v.push(Figure::one(
        "comm_time",
        Unit::Time,
        Some(a.comm_ns),
        Some(b.comm_ns),
        "communication kernel time per step",
    ));
    v.push(Figure::one(
        "exposed_comm_time",
        Unit::Time,
        Some(a.exposed_comm_ns),
        Some(b.exposed_comm_ns),
        "communication not overlapped by compute, per step",
    ));
    let f = |x: Option<i64>| x.map(|v| v as f64);
    v.push(Figure::one(
        "peak_memory",
        Unit::Bytes,
        f(a.peak_allocated_bytes),
        f(b.peak_allocated_bytes),
        "peak allocated device memory (from [memory] events: profile_memory=True; the largest rank)",
    ));
    v.push(Figure::one(
        "peak_reserved_memory",
        Unit::Bytes,
        f(a.peak_reserved_bytes),
        f(b.peak_reserved_bytes),
        "peak reserved device memory (from [memory] events: profile_memory=True; the largest rank)",
    ));
    v.push(Figure::one(
        "flops_per_step",
        Unit::Flop,
        Some(a.coverage.flops_per_step),
        Some(b.coverage.flops_per_step),
        "FLOPs counted per step",
    ));
    for (name, key, unit, what) in [
        (
            "tflops",
            "tflops",
            Unit::Tflops,
            "achieved TFLOPS over the step window",
        ),
        (
            "tflops_busy",
            "tflops_busy",
            Unit::Tflops,
            "achieved TFLOPS while the counted ops' kernels run",
        ),
        ("mfu", "mfu", Unit::Ratio, "model FLOPs utilization"),
    ] {
        let (x, y) = fig(key);
        let mut g = Figure::one(name, unit, x, y, what);
        if !d.rates.comparable {
            g.not_comparable = Some(d.rates.reasons.join("; "));
        }
        v.push(g);
    }
    for (c, _) in a.fine_ns.iter().chain(&b.fine_ns) {
        let name = format!("category.{c}");
        if v.iter().any(|g| g.name == name) {
            continue;
        }
        let get = |s: &Side| s.fine_ns.iter().find(|x| &x.0 == c).map_or(0.0, |x| x.1);
        v.push(Figure::one(
            &name,
            Unit::Time,
            Some(get(a)),
            Some(get(b)),
            "GPU time per step of one fine kernel category",
        ));
    }
    v
}

/// The JSON object of [`figures`]: `{name: {unit, a, b, delta, delta_pct, samples}}`, times in µs.
pub fn figures_json(d: &Diff) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for g in figures(d) {
        let j = |x: Option<f64>| x.map(|v| g.unit.to_json(v));
        let delta = match (g.a, g.b) {
            (Some(x), Some(y)) => Some(y - x),
            _ => None,
        };
        let pct = match (g.a, g.b) {
            (Some(x), Some(y)) if x != 0.0 => Some(100.0 * (y - x) / x),
            _ => None,
        };
        let samples = g
            .is_sampled()
            .then(|| serde_json::json!({"a": g.a_samples.len(), "b": g.b_samples.len()}));
        m.insert(
            g.name.clone(),
            serde_json::json!({"unit": g.unit.json_label(), "a": j(g.a), "b": j(g.b),
                "delta": j(delta), "delta_pct": pct, "steps": samples,
                "not_comparable": g.not_comparable, "what": g.what}),
        );
    }
    serde_json::Value::Object(m)
}
