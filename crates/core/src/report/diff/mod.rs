//! The A/B diff (docs/compare.md): did a change help, and where did the time go?
//!
//! Each side ([`side::Side`]) is one trace or the ranks of a run, reduced to per-step figures so
//! runs of different step counts (or rank counts) compare as means. [`Diff::of`] sets them side by
//! side: step time with its spread, the TensorBoard step breakdown, kernel categories (seed and
//! fine), GPU utilization, exposed communication, peak memory, TFLOPS / MFU, a plain-words verdict,
//! and the op and kernel rows ([`rows`]) with each row's share of the step-time change. The CLI
//! (`tracelight diff`) and the page render the same struct; [`markdown`] and [`json`] are the two
//! texts.
//!
//! ```
//! use tracelight_core::ingest::{load_bytes, Loaded};
//! use tracelight_core::report::{diff::{side::Side, Diff}, json::Analysis};
//! let trace = |k: f64| format!(r#"{{"traceEvents":[
//!   {{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100}},
//!   {{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":{k}}}]}}"#);
//! let side = |k: f64| {
//!     let Ok(Loaded::Trace(t)) = load_bytes("t.json", trace(k).as_bytes()) else { panic!() };
//!     let a = Analysis::of("t.json", &t);
//!     Side::of("t.json", &[(&t, &a)], false)
//! };
//! let d = Diff::of(side(10.0), side(30.0));
//! assert_eq!(d.ops[0].name, "aten::mm");
//! assert_eq!(d.ops[0].delta_step_ns, 20_000.0);
//! ```

pub mod family;
pub mod figures;
pub mod flame;
pub mod gate;
pub mod json;
pub mod markdown;
pub mod matching;
pub mod memory;
pub mod rows;
pub mod side;
pub mod stats;

use crate::report::num;
use rows::{diff_rows, DiffRow, MatchOptions};
use serde::Serialize;
use side::Side;

/// One figure on both sides (ns per step, bytes, a ratio…).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Line {
    pub name: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
}

impl Line {
    fn new(name: &str, a: Option<f64>, b: Option<f64>) -> Line {
        Line {
            name: name.to_owned(),
            a,
            b,
        }
    }

    /// B − A, when both sides have the figure (a side without it counts 0 for time figures,
    /// which are always present).
    pub fn delta(&self) -> Option<f64> {
        Some(self.b? - self.a?)
    }
}

/// What an op row's time is: device time when both sides ran GPU work, else CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    Device,
    Cpu,
}

/// Step time of one rank on both sides (rank-by-rank comparison of runs).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RankLine {
    pub rank: i64,
    pub a_step_ns: Option<f64>,
    pub b_step_ns: Option<f64>,
}

/// Whether the two sides' FLOP rates (TFLOPS, MFU) measure the same work (docs/compare.md):
/// both sides counted FLOPs, for as many op calls per step (within [`COVERAGE_TOLERANCE`] of the
/// larger) covering as much of their GPU time (within the same tolerance, in points). Otherwise
/// the rates are shown greyed, with `reasons`: a torch.compile'd side hides most of its FLOPs
/// in fused kernels no formula counts, so its TFLOPS reads low whatever its speed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RateCheck {
    pub comparable: bool,
    /// Why not, in words (empty when comparable).
    pub reasons: Vec<String>,
}

/// How far two sides' FLOP coverage may differ and still be called the same: 10% of the larger
/// op count per step, 10 points of GPU-time share.
pub const COVERAGE_TOLERANCE: f64 = 0.10;

impl RateCheck {
    pub fn of(a: &Side, b: &Side) -> RateCheck {
        let (ca, cb) = (&a.coverage, &b.coverage);
        let mut reasons = Vec::new();
        for (s, c) in [("A", ca), ("B", cb)] {
            if c.flops_per_step <= 0.0 {
                reasons.push(format!(
                    "{s} counts no FLOPs (no matmul, convolution or attention shapes)"
                ));
            }
        }
        if reasons.is_empty() {
            let hi = ca.ops_per_step.max(cb.ops_per_step);
            if (ca.ops_per_step - cb.ops_per_step).abs() > COVERAGE_TOLERANCE * hi {
                reasons.push(format!(
                    "FLOPs were counted for {} op calls per step in A, {} in B",
                    num::count(ca.ops_per_step),
                    num::count(cb.ops_per_step)
                ));
            }
            if let (Some(x), Some(y)) = (ca.device_share, cb.device_share) {
                if (x - y).abs() > COVERAGE_TOLERANCE {
                    reasons.push(format!(
                        "those ops ran {} of A's GPU time, {} of B's",
                        num::share(x),
                        num::share(y)
                    ));
                }
            }
            if !reasons.is_empty() {
                reasons.push(format!(
                    "{} per step counted in A, {} in B",
                    num::flop(ca.flops_per_step),
                    num::flop(cb.flops_per_step)
                ));
            }
        }
        RateCheck {
            comparable: reasons.is_empty(),
            reasons,
        }
    }
}

/// What differs in how A and B were run (device, world size, torch.compile, CUDA graphs), one
/// line each; empty when nothing does. A comparison across these is valid but not like for like.
pub fn setup_notes(a: &Side, b: &Side) -> Vec<String> {
    let (x, y) = (&a.setup, &b.setup);
    let mut v = Vec::new();
    if x.device != y.device {
        let d = |s: &Option<String>| s.clone().unwrap_or_else(|| "no device named".into());
        v.push(format!("device: A {}, B {}", d(&x.device), d(&y.device)));
    }
    if x.world_size != y.world_size {
        let w = |s: Option<i64>| s.map_or("unknown".into(), |w| w.to_string());
        v.push(format!(
            "world size: A {}, B {}",
            w(x.world_size),
            w(y.world_size)
        ));
    }
    match (&x.compiled, &y.compiled) {
        (None, Some(n)) => v.push(format!("B runs torch.compile ({n}), A eager")),
        (Some(n), None) => v.push(format!("A runs torch.compile ({n}), B eager")),
        _ => {}
    }
    match (x.cuda_graphs, y.cuda_graphs) {
        (false, true) => v.push("B replays CUDA graphs (cudaGraphLaunch), A does not".into()),
        (true, false) => v.push("A replays CUDA graphs (cudaGraphLaunch), B does not".into()),
        _ => {}
    }
    v
}

#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub a: Side,
    pub b: Side,
    /// Mean step time B − A, in ns.
    pub step_delta_ns: f64,
    /// The same as % of A's mean step; `None` when A's is 0.
    pub step_delta_pct: Option<f64>,
    /// Whether |Δ| is within the larger of the two sides' step standard deviations.
    pub within_noise: bool,
    /// The step breakdown per step, in the TensorBoard plugin's order.
    pub breakdown: Vec<Line>,
    pub seed_categories: Vec<Line>,
    pub fine_categories: Vec<Line>,
    /// Utilization, communication, exposed communication, peak memory, FLOPs per step, TFLOPS
    /// (window and while busy), MFU and its peak.
    pub figures: Vec<Line>,
    /// Whether the FLOP rates compare (else the page greys them, the text says why).
    pub rates: RateCheck,
    /// What differs in how the sides were run ([`setup_notes`]).
    pub setup_notes: Vec<String>,
    /// Whether renamed ops and kernels were matched ([`MatchOptions::renames`]).
    pub renames: bool,
    pub measure: Measure,
    pub ops: Vec<DiffRow>,
    pub kernels: Vec<DiffRow>,
    /// Per rank, when either side has more than one.
    pub ranks: Vec<RankLine>,
    pub verdict: String,
}

fn lines(a: &[(String, f64)], b: &[(String, f64)]) -> Vec<Line> {
    let mut names: Vec<&str> = a.iter().chain(b).map(|x| x.0.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let get = |v: &[(String, f64)], n: &str| v.iter().find(|x| x.0 == n).map_or(0.0, |x| x.1);
    let mut out: Vec<Line> = names
        .into_iter()
        .map(|n| Line::new(n, Some(get(a, n)), Some(get(b, n))))
        .collect();
    crate::sort::by(&mut out, |x, y| {
        let m = |l: &Line| l.a.unwrap_or(0.0).max(l.b.unwrap_or(0.0));
        m(y).total_cmp(&m(x)).then_with(|| x.name.cmp(&y.name))
    });
    out
}

/// Whether a figure of [`Diff::figures`] is a FLOP rate, compared only under [`RateCheck`].
pub fn is_rate(name: &str) -> bool {
    matches!(name, "tflops" | "tflops_busy" | "mfu")
}

impl Diff {
    /// The diff with renamed ops and kernels matched within their family.
    pub fn of(a: Side, b: Side) -> Diff {
        Diff::with(a, b, MatchOptions::default())
    }

    pub fn with(a: Side, b: Side, opts: MatchOptions) -> Diff {
        let step_delta_ns = b.step_ns.mean - a.step_ns.mean;
        let step_delta_pct = (a.step_ns.mean > 0.0).then(|| 100.0 * step_delta_ns / a.step_ns.mean);
        let noise = a.step_ns.stdev.max(b.step_ns.stdev);
        let breakdown = if a.has_steps || b.has_steps {
            Side::breakdown_labels()
                .iter()
                .enumerate()
                .map(|(k, n)| Line::new(n, Some(a.breakdown_ns[k]), Some(b.breakdown_ns[k])))
                .collect()
        } else {
            Vec::new()
        };
        let f = |x: Option<i64>| x.map(|v| v as f64);
        let figures = vec![
            Line::new("gpu_utilization", a.utilization, b.utilization),
            Line::new("comm_ns", Some(a.comm_ns), Some(b.comm_ns)),
            Line::new(
                "exposed_comm_ns",
                Some(a.exposed_comm_ns),
                Some(b.exposed_comm_ns),
            ),
            Line::new(
                "peak_allocated_bytes",
                f(a.peak_allocated_bytes),
                f(b.peak_allocated_bytes),
            ),
            Line::new(
                "peak_reserved_bytes",
                f(a.peak_reserved_bytes),
                f(b.peak_reserved_bytes),
            ),
            Line::new(
                "flops_per_step",
                Some(a.coverage.flops_per_step),
                Some(b.coverage.flops_per_step),
            ),
            Line::new(
                "flop_ops_per_step",
                Some(a.coverage.ops_per_step),
                Some(b.coverage.ops_per_step),
            ),
            Line::new(
                "flop_device_share",
                a.coverage.device_share,
                b.coverage.device_share,
            ),
            Line::new("tflops", a.tflops, b.tflops),
            Line::new("tflops_busy", a.tflops_busy, b.tflops_busy),
            Line::new("mfu", a.mfu, b.mfu),
            Line::new("peak_tflops", a.peak_tflops, b.peak_tflops),
        ];
        let rates = RateCheck::of(&a, &b);
        let setup_notes = setup_notes(&a, &b);
        let measure = if a.has_gpu && b.has_gpu {
            Measure::Device
        } else {
            Measure::Cpu
        };
        let ops = diff_rows(
            &a.ops,
            &b.ops,
            &a,
            &b,
            false,
            measure == Measure::Device,
            step_delta_ns,
            opts,
        );
        let kernels = diff_rows(
            &a.kernels,
            &b.kernels,
            &a,
            &b,
            true,
            true,
            step_delta_ns,
            opts,
        );
        let mut ranks = Vec::new();
        if a.ranks.len() > 1 || b.ranks.len() > 1 {
            let mut ids: Vec<i64> = a.ranks.iter().chain(&b.ranks).map(|r| r.0).collect();
            ids.sort_unstable();
            ids.dedup();
            let get = |s: &Side, r: i64| s.ranks.iter().find(|x| x.0 == r).map(|x| x.1.mean);
            ranks = ids
                .into_iter()
                .map(|r| RankLine {
                    rank: r,
                    a_step_ns: get(&a, r),
                    b_step_ns: get(&b, r),
                })
                .collect();
        }
        let mut d = Diff {
            seed_categories: lines(&a.seed_ns, &b.seed_ns),
            fine_categories: lines(&a.fine_ns, &b.fine_ns),
            a,
            b,
            step_delta_ns,
            step_delta_pct,
            within_noise: step_delta_ns.abs() <= noise,
            breakdown,
            figures,
            rates,
            setup_notes,
            renames: opts.renames,
            measure,
            ops,
            kernels,
            ranks,
            verdict: String::new(),
        };
        d.verdict = verdict(&d);
        d
    }

    /// A figure by its name in [`Diff::figures`].
    pub fn figure(&self, name: &str) -> Option<&Line> {
        self.figures.iter().find(|l| l.name == name)
    }
}

/// Said under a table of per-step times whose shares of the step-time change do not add up to
/// it (kernel categories: 164% on HTA's trace_diff pair): why they need not. `None` when the
/// shares sum to 100% within 5 points, or the step did not change.
pub fn share_note(lines: &[Line], step_delta_ns: f64) -> Option<String> {
    if step_delta_ns == 0.0 {
        return None;
    }
    let sum: f64 = lines.iter().filter_map(Line::delta).sum::<f64>() / step_delta_ns;
    ((sum - 1.0).abs() > 0.05).then(|| {
        format!(
            "These shares sum to {} of the step-time change: GPU time is summed over streams that run at once, and a step also holds idle and host time, so the parts need not add up to the step's change.",
            num::share(sum)
        )
    })
}

/// A duration in ns (a float: per-step means) as short text: `812 ns`, `41.3 µs`, `18.25 ms`.
pub fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    let sign = if ns < 0.0 { "−" } else { "" };
    if a < 1e3 {
        format!("{sign}{a:.0} ns")
    } else if a < 1e6 {
        format!("{sign}{:.1} µs", a / 1e3)
    } else if a < 1e9 {
        format!("{sign}{:.2} ms", a / 1e6)
    } else {
        format!("{sign}{:.2} s", a / 1e9)
    }
}

/// A signed change: `+4.0 ms`, `−18.25 ms`.
pub fn fmt_delta_ns(ns: f64) -> String {
    if ns >= 0.0 {
        format!("+{}", fmt_ns(ns))
    } else {
        fmt_ns(ns)
    }
}

/// "B is 12% faster per step (75.9 ms → 66.8 ms): −18 ms in gemm kernels, +4 ms exposed
/// communication". The contributors are the three largest per-step changes among the fine
/// kernel categories, exposed communication and the host-side parts of the step breakdown
/// (runtime, data loading, CPU exec), each at least 1% of A's step.
pub fn verdict(d: &Diff) -> String {
    let (a, b) = (d.a.step_ns.mean, d.b.step_ns.mean);
    let Some(pct) = d.step_delta_pct else {
        return format!("A has no step time; B's step is {}.", fmt_ns(b));
    };
    let what = if d.a.has_steps || d.b.has_steps {
        "per step"
    } else {
        "over the trace window"
    };
    let mut s = if pct.abs() < 0.05 {
        format!("B takes the same time {what} as A ({})", fmt_ns(a))
    } else {
        format!(
            "B is {:.1}% {} {what} ({} → {})",
            pct.abs(),
            if pct < 0.0 { "faster" } else { "slower" },
            fmt_ns(a),
            fmt_ns(b)
        )
    };
    let mut cands: Vec<(String, f64)> = Vec::new();
    for l in &d.fine_categories {
        let label = match l.name.as_str() {
            "memcpy" | "memset" => l.name.clone(),
            "comm" => "communication kernels".to_owned(),
            n => format!("{n} kernels"),
        };
        cands.push((label, l.delta().unwrap_or(0.0)));
    }
    if let Some(e) = d.figure("exposed_comm_ns") {
        cands.push(("exposed communication".into(), e.delta().unwrap_or(0.0)));
    }
    for (k, label) in [(4, "CUDA runtime"), (5, "data loading"), (6, "CPU exec")] {
        if let Some(l) = d.breakdown.get(k) {
            cands.push((label.into(), l.delta().unwrap_or(0.0)));
        }
    }
    cands.retain(|c| c.1.abs() >= 0.01 * a.max(1.0));
    crate::sort::by(&mut cands, |x, y| {
        y.1.abs().total_cmp(&x.1.abs()).then_with(|| x.0.cmp(&y.0))
    });
    if !cands.is_empty() {
        s += ": ";
        s += &cands
            .iter()
            .take(3)
            .map(|(n, v)| format!("{} in {n}", fmt_delta_ns(*v)))
            .collect::<Vec<_>>()
            .join(", ");
    }
    if d.within_noise && pct.abs() >= 0.05 {
        s += &format!(
            " — within the step-to-step spread (σ A {}, B {}), so not a clear change",
            fmt_ns(d.a.step_ns.stdev),
            fmt_ns(d.b.step_ns.stdev)
        );
    }
    s.push('.');
    s
}
