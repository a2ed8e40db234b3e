//! A CI gate over a diff: `tracelight diff A B --fail-if 'step_time>+5%' --fail-if
//! 'peak_memory>+10%'` fails the job when B crossed a bound, with a verdict a reviewer can read
//! (docs/ci-gate.md).
//!
//! A bound is `NAME OP VALUE`: NAME one of [`super::figures`]' names (the keys of the JSON's
//! `figures` object), OP `>`, `>=`, `<`, `<=`, and VALUE
//! - a relative change when it ends in `%` (`+5%`: B more than 5 % above A),
//! - a change B − A when it is signed or in points (`+2ms`, `-512MiB`, `-5pp`),
//! - else a limit on B itself (`peak_memory>40GiB`, `gpu_utilization<0.5`).
//!
//! Times take `ns`, `us`/`µs`, `ms`, `s` (µs without one, as in the JSON); bytes `B`, `KB`, `MB`,
//! `GB`, `KiB`, `MiB`, `GiB`, `TiB`; ratios `pp` for points.
//!
//! Noise: a figure measured per step (step time, the step breakdown's parts) is compared as two
//! distributions ([`super::stats::shift`]: the Hodges–Lehmann shift and its 95 % interval). A
//! bound is **crossed** only when the shift is beyond it *and* the interval says B really moved
//! that way (it leaves out "no change"); **within** when the whole interval is inside the bound;
//! otherwise the runs are **too noisy to tell** — the interval straddles the bound. Too few steps
//! for any 95 % interval (3 against 3) are **too short to tell**. A one-value figure (peak memory,
//! utilization) has no spread: it is crossed when its change is beyond the bound. Runs that
//! cannot tell do not fail the gate unless asked (`--strict`).

use super::figures::{figures, Figure, Unit};
use super::stats::{shift, Shift};
use super::Diff;
use crate::report::num;
use serde_json::{json, Value};

/// The interval's confidence.
pub const LEVEL: f64 = 0.95;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Gt,
    Ge,
    Lt,
    Le,
}

impl Cmp {
    fn holds(self, x: f64, bound: f64) -> bool {
        match self {
            Cmp::Gt => x > bound,
            Cmp::Ge => x >= bound,
            Cmp::Lt => x < bound,
            Cmp::Le => x <= bound,
        }
    }

    fn upward(self) -> bool {
        matches!(self, Cmp::Gt | Cmp::Ge)
    }
}

/// What a bound's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// (B − A) ÷ A, a fraction.
    Relative,
    /// B − A in the figure's unit (ns for times).
    Change,
    /// B itself.
    Absolute,
}

/// One `--fail-if` bound, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// As written.
    pub text: String,
    pub name: String,
    pub cmp: Cmp,
    pub mode: Mode,
    /// A fraction ([`Mode::Relative`]) or a value in the figure's unit.
    pub value: f64,
}

fn scale(unit: Unit, suffix: &str) -> Option<f64> {
    let s = suffix.trim();
    Some(match unit {
        Unit::Time => match s {
            "" | "us" | "µs" => 1e3,
            "ns" => 1.0,
            "ms" => 1e6,
            "s" => 1e9,
            _ => return None,
        },
        Unit::Bytes => match s.to_ascii_lowercase().as_str() {
            "" | "b" => 1.0,
            "kb" => 1e3,
            "mb" => 1e6,
            "gb" => 1e9,
            "kib" => 1024.0,
            "mib" => 1024.0 * 1024.0,
            "gib" => 1024.0 * 1024.0 * 1024.0,
            "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
            _ => return None,
        },
        Unit::Ratio => match s {
            "" => 1.0,
            "pp" => 0.01,
            _ => return None,
        },
        Unit::Tflops | Unit::Flop => match s {
            "" => 1.0,
            _ => return None,
        },
    })
}

/// The units a figure's bound may be written in, for an error message.
fn units_of(unit: Unit) -> &'static str {
    match unit {
        Unit::Time => "%, ns, us, ms, s (none: us)",
        Unit::Bytes => "%, B, KB, MB, GB, KiB, MiB, GiB, TiB (none: bytes)",
        Unit::Ratio => "%, pp (points), or none for a ratio 0..1",
        Unit::Tflops => "% or none (TFLOPS)",
        Unit::Flop => "% or none (FLOP)",
    }
}

/// Parses `expr` against the diff's figures; the error says what is wrong and what would do.
pub fn parse(expr: &str, figs: &[Figure]) -> Result<Bound, String> {
    let text = expr.trim();
    let at = text
        .find(['>', '<'])
        .ok_or_else(|| format!("--fail-if {text:?}: no comparison (write NAME>VALUE or NAME<VALUE, e.g. 'step_time>+5%')"))?;
    let name = text[..at].trim();
    let rest = &text[at..];
    let (cmp, rest) = if let Some(r) = rest.strip_prefix(">=") {
        (Cmp::Ge, r)
    } else if let Some(r) = rest.strip_prefix("<=") {
        (Cmp::Le, r)
    } else if let Some(r) = rest.strip_prefix('>') {
        (Cmp::Gt, r)
    } else if let Some(r) = rest.strip_prefix('<') {
        (Cmp::Lt, r)
    } else {
        return Err(format!("--fail-if {text:?}: no comparison"));
    };
    let Some(fig) = figs.iter().find(|f| f.name == name) else {
        let names: Vec<&str> = figs.iter().map(|f| f.name.as_str()).collect();
        return Err(format!(
            "--fail-if {text:?}: no figure named {name:?}; the figures are {}",
            names.join(", ")
        ));
    };
    let v = rest.trim().replace('−', "-");
    let (signed, body) = match v.chars().next() {
        Some('+') | Some('-') => (true, v.as_str()),
        _ => (false, v.as_str()),
    };
    let num_end = body
        .char_indices()
        .find(|&(k, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || (k == 0 && (c == '+' || c == '-'))
                || ((c == 'e' || c == 'E')
                    && body[k + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-')))
        })
        .map_or(body.len(), |(k, _)| k);
    let number: f64 = body[..num_end]
        .parse()
        .map_err(|_| format!("--fail-if {text:?}: {:?} is not a number", &body[..num_end]))?;
    let suffix = body[num_end..].trim();
    let (mode, value) = if suffix == "%" {
        (Mode::Relative, number / 100.0)
    } else {
        let k = scale(fig.unit, suffix).ok_or_else(|| {
            format!(
                "--fail-if {text:?}: {name} takes {}, not {suffix:?}",
                units_of(fig.unit)
            )
        })?;
        let mode = if signed || suffix == "pp" {
            Mode::Change
        } else {
            Mode::Absolute
        };
        (mode, number * k)
    };
    Ok(Bound {
        text: text.to_owned(),
        name: name.to_owned(),
        cmp,
        mode,
        value,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Crossed,
    Within,
    TooShort,
    TooNoisy,
    NotComparable,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Crossed => "**crossed**",
            Verdict::Within => "within",
            Verdict::TooShort => "too short to tell",
            Verdict::TooNoisy => "too noisy to tell",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// One bound checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub bound: Bound,
    pub unit: Unit,
    pub verdict: Verdict,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// In the bound's terms: a fraction, a change or B's value.
    pub change: Option<f64>,
    /// The interval of the change in the same terms, with its level.
    pub interval: Option<(f64, f64, f64)>,
    /// Per-step samples on each side, for a per-step figure.
    pub steps: Option<(usize, usize)>,
    /// Why, in words, when it is not simply crossed or within.
    pub why: String,
}

/// Every bound checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub checks: Vec<Check>,
}

impl Gate {
    /// Whether any bound was crossed (the CLI exits 1).
    pub fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.verdict == Verdict::Crossed)
    }

    /// Whether any bound could not be told (too short, too noisy, not comparable).
    pub fn unsure(&self) -> bool {
        self.checks
            .iter()
            .any(|c| !matches!(c.verdict, Verdict::Crossed | Verdict::Within))
    }
}

/// The crossed / within / too noisy decision for a change `est` with interval `[lo, hi]` against
/// bound `x` (see the module doc): "crossed" needs the interval to leave out no change (or, for a
/// bound on the other side of zero, the bound itself) on the crossing side.
fn decide(cmp: Cmp, x: f64, est: f64, lo: f64, hi: f64) -> Verdict {
    if cmp.upward() {
        let r = if x >= 0.0 { 0.0 } else { x };
        if cmp.holds(est, x) && lo > r {
            Verdict::Crossed
        } else if !cmp.holds(hi, x) {
            Verdict::Within
        } else {
            Verdict::TooNoisy
        }
    } else {
        let r = if x <= 0.0 { 0.0 } else { x };
        if cmp.holds(est, x) && hi < r {
            Verdict::Crossed
        } else if !cmp.holds(lo, x) {
            Verdict::Within
        } else {
            Verdict::TooNoisy
        }
    }
}

fn check(bound: &Bound, g: &Figure) -> Check {
    let mut c = Check {
        bound: bound.clone(),
        unit: g.unit,
        verdict: Verdict::NotComparable,
        a: g.a,
        b: g.b,
        change: None,
        interval: None,
        steps: g
            .is_sampled()
            .then_some((g.a_samples.len(), g.b_samples.len())),
        why: String::new(),
    };
    if let Some(why) = &g.not_comparable {
        c.why = format!("{} not compared: {why}", g.name);
        return c;
    }
    let (Some(a), Some(b)) = (g.a, g.b) else {
        let side = if g.a.is_none() { "A" } else { "B" };
        c.why = format!("{side} has no {}: {}", g.name, g.what);
        return c;
    };
    let x = bound.value;
    if bound.mode == Mode::Absolute {
        c.change = Some(b);
        c.verdict = if bound.cmp.holds(b, x) {
            Verdict::Crossed
        } else {
            Verdict::Within
        };
        return c;
    }
    let per = if bound.mode == Mode::Relative {
        if a == 0.0 {
            c.why = format!("A's {} is 0: a relative change is undefined", g.name);
            return c;
        }
        a.abs()
    } else {
        1.0
    };
    c.change = Some((b - a) / per);
    if !g.is_sampled() {
        c.verdict = if bound.cmp.holds((b - a) / per, x) {
            Verdict::Crossed
        } else {
            Verdict::Within
        };
        c.why = "one value per run: no step-to-step spread to weigh it against".into();
        return c;
    }
    let Some(s): Option<Shift> = shift(&g.a_samples, &g.b_samples, LEVEL) else {
        c.verdict = Verdict::TooShort;
        c.why = format!(
            "{} step{} against {}: too few for a {} interval to tell a change from noise (4 against 4 at least)",
            g.a_samples.len(),
            if g.a_samples.len() == 1 { "" } else { "s" },
            g.b_samples.len(),
            num::share(LEVEL)
        );
        return c;
    };
    let (est, lo, hi) = (s.estimate / per, s.lo / per, s.hi / per);
    c.change = Some(est);
    c.interval = Some((lo, hi, s.level));
    c.verdict = decide(bound.cmp, x, est, lo, hi);
    if c.verdict == Verdict::TooNoisy {
        c.why = format!(
            "the {} interval of the change straddles the bound: more steps, or quieter runs, would tell",
            num::share(LEVEL)
        );
    }
    c
}

/// Checks `bounds` against the diff.
pub fn evaluate(d: &Diff, bounds: &[Bound]) -> Gate {
    let figs = figures(d);
    let checks = bounds
        .iter()
        .filter_map(|b| figs.iter().find(|f| f.name == b.name).map(|g| check(b, g)))
        .collect();
    Gate { checks }
}

/// Parses every bound, then checks them; the first unparsable bound is the error.
pub fn gate(d: &Diff, exprs: &[String]) -> Result<Gate, String> {
    let figs = figures(d);
    let bounds = exprs
        .iter()
        .map(|e| parse(e, &figs))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(evaluate(d, &bounds))
}

/// A change in a check's terms, as text.
fn change_text(c: &Check, v: f64) -> String {
    match c.bound.mode {
        Mode::Relative => num::signed_share(v),
        Mode::Change => c.unit.delta_text(v),
        Mode::Absolute => c.unit.text(v),
    }
}

/// The verdict a pull request shows: a headline, one row per bound, what "too noisy" means.
pub fn gate_markdown(g: &Gate) -> String {
    let crossed = g
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Crossed)
        .count();
    let unsure = g
        .checks
        .iter()
        .filter(|c| !matches!(c.verdict, Verdict::Crossed | Verdict::Within))
        .count();
    let n = g.checks.len();
    let head = if crossed > 0 {
        format!("❌ **failed**: {crossed} of {n} bound{} crossed", plural(n))
    } else if unsure > 0 {
        format!("⚠️ **passed, but {unsure} of {n} could not be told**")
    } else {
        format!("✅ **passed**: {n} bound{} within", plural(n))
    };
    let mut s = format!(
        "## Performance gate\n\n{head}\n\n| bound | A | B | change | {} interval | verdict |\n|---|---:|---:|---:|---:|---|\n",
        num::share(LEVEL)
    );
    for c in &g.checks {
        let val = |v: Option<f64>| v.map_or("—".to_owned(), |v| c.unit.text(v));
        let (a, b) = (val(c.a), val(c.b));
        let (a, b) = match c.steps {
            Some((na, nb)) => (
                format!("{a} (median of {na})"),
                format!("{b} (median of {nb})"),
            ),
            None => (a, b),
        };
        let change = c.change.map(|v| change_text(c, v)).unwrap_or_default();
        let interval = match c.interval {
            Some((lo, hi, _)) => format!("{} … {}", change_text(c, lo), change_text(c, hi)),
            None if c.steps.is_none() && c.change.is_some() => "one value per run".into(),
            None => String::new(),
        };
        s += &format!(
            "| `{}` | {a} | {b} | {change} | {interval} | {} |\n",
            c.bound.text.replace('|', "\\|"),
            c.verdict.label()
        );
    }
    let notes: Vec<String> = g
        .checks
        .iter()
        .filter(|c| !c.why.is_empty() && c.verdict != Verdict::Within)
        .map(|c| format!("- `{}`: {}.", c.bound.text, c.why))
        .collect();
    if !notes.is_empty() {
        s += &format!("\n{}\n", notes.join("\n"));
    }
    if g.checks.iter().any(|c| c.interval.is_some()) {
        s += "\nA per-step figure's change is the Hodges–Lehmann shift of B's steps against A's (the median of every pairwise difference), as a share of A's median for a % bound; its interval is distribution-free, so one slow step moves neither. A bound is crossed when the shift is beyond it and the interval leaves out no change.\n";
    }
    s
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The gate as JSON (`tracelight diff --json --fail-if …` adds it as `gate`): per bound its
/// verdict, both values, the change and its interval in the bound's terms (a fraction for a %
/// bound; the figure's JSON unit otherwise), and why.
pub fn gate_json(g: &Gate) -> Value {
    let checks: Vec<Value> = g
        .checks
        .iter()
        .map(|c| {
            let u = |v: f64| match c.bound.mode {
                Mode::Relative => v,
                _ => c.unit.to_json(v),
            };
            json!({
                "bound": c.bound.text,
                "figure": c.bound.name,
                "verdict": c.verdict,
                "a": c.a.map(|v| c.unit.to_json(v)),
                "b": c.b.map(|v| c.unit.to_json(v)),
                "change": c.change.map(u),
                "change_unit": if c.bound.mode == Mode::Relative { "fraction" } else { c.unit.json_label() },
                "interval": c.interval.map(|(lo, hi, level)| json!({"lo": u(lo), "hi": u(hi), "level": level})),
                "steps": c.steps.map(|(a, b)| json!({"a": a, "b": b})),
                "why": c.why,
            })
        })
        .collect();
    json!({"failed": g.failed(), "unsure": g.unsure(), "checks": checks})
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn figs() -> Vec<Figure> {
        let f = |name: &str, unit| Figure {
            name: name.into(),
            unit,
            a: Some(1.0),
            b: Some(1.0),
            a_samples: Vec::new(),
            b_samples: Vec::new(),
            not_comparable: None,
            what: "",
        };
        vec![
            f("step_time", Unit::Time),
            f("peak_memory", Unit::Bytes),
            f("gpu_utilization", Unit::Ratio),
        ]
    }

    #[test]
    fn bounds_parse_into_relative_change_and_absolute() {
        let p = |e: &str| parse(e, &figs()).unwrap();
        let b = p("step_time>+5%");
        assert_eq!((b.cmp, b.mode, b.value), (Cmp::Gt, Mode::Relative, 0.05));
        let b = p(" step_time >= +2ms");
        assert_eq!((b.cmp, b.mode, b.value), (Cmp::Ge, Mode::Change, 2e6));
        let b = p("peak_memory>40GiB");
        assert_eq!(
            (b.mode, b.value),
            (Mode::Absolute, 40.0 * (1u64 << 30) as f64)
        );
        let b = p("peak_memory>-512MiB");
        assert_eq!(
            (b.mode, b.value),
            (Mode::Change, -512.0 * (1u64 << 20) as f64)
        );
        let b = p("gpu_utilization<-5pp");
        assert_eq!(b.cmp, Cmp::Lt);
        assert_eq!(b.mode, Mode::Change);
        assert!((b.value + 0.05).abs() < 1e-12);
        let b = p("gpu_utilization<0.5");
        assert_eq!((b.mode, b.value), (Mode::Absolute, 0.5));
        let b = p("step_time>1.5e3");
        assert_eq!((b.mode, b.value), (Mode::Absolute, 1.5e6));
    }

    #[test]
    fn bad_bounds_say_what_is_wrong() {
        let e = |x: &str| parse(x, &figs()).unwrap_err();
        assert!(e("step_time=5%").contains("no comparison"));
        assert!(e("steptime>5%").contains("the figures are step_time, peak_memory"));
        assert!(e("step_time>+5GiB").contains("step_time takes %, ns, us, ms, s"));
        assert!(e("peak_memory>lots").contains("is not a number"));
        assert!(e("gpu_utilization<-5ms").contains("pp (points)"));
    }

    #[test]
    fn the_decision_weighs_the_interval() {
        // +8% with 6..10 beyond +5%: crossed. The same shift with -1..17: too noisy.
        assert_eq!(decide(Cmp::Gt, 0.05, 0.08, 0.06, 0.10), Verdict::Crossed);
        assert_eq!(decide(Cmp::Gt, 0.05, 0.08, 0.01, 0.10), Verdict::Crossed);
        assert_eq!(decide(Cmp::Gt, 0.05, 0.08, -0.01, 0.17), Verdict::TooNoisy);
        // +1% with -0.5..2.5: within; with -3..+7: could be above 5%, too noisy.
        assert_eq!(decide(Cmp::Gt, 0.05, 0.01, -0.005, 0.025), Verdict::Within);
        assert_eq!(decide(Cmp::Gt, 0.05, 0.01, -0.03, 0.07), Verdict::TooNoisy);
        // Downward: utilization fell 8 points, -10..-6 below -5pp: crossed.
        assert_eq!(
            decide(Cmp::Lt, -0.05, -0.08, -0.10, -0.06),
            Verdict::Crossed
        );
        assert_eq!(decide(Cmp::Lt, -0.05, -0.01, -0.02, 0.0), Verdict::Within);
        // A bound that asks for a speed-up (fail unless B is 5% faster): crossed only when the
        // whole interval is above -5%.
        assert_eq!(decide(Cmp::Gt, -0.05, 0.0, -0.02, 0.02), Verdict::Crossed);
        assert_eq!(decide(Cmp::Gt, -0.05, 0.0, -0.07, 0.02), Verdict::TooNoisy);
        assert_eq!(decide(Cmp::Gt, -0.05, -0.1, -0.12, -0.08), Verdict::Within);
    }
}
