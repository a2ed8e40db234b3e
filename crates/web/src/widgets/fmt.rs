//! Number formatting for the analysis views: times with units, shares and rates with three
//! significant figures (core's [`tracelight_core::report::num`], which the CLI uses too), bytes.
//! One place so every table and card reads the same.

use tracelight_core::model::time::format_duration;
use tracelight_core::report::memory::signed_bytes;
use tracelight_core::report::num;

/// A duration in ns, with its unit (`12.345 ms`).
pub fn dur(ns: i64) -> String {
    format_duration(ns)
}

/// A fractional duration in ns (averages).
pub fn dur_f(ns: f64) -> String {
    format_duration(ns.round() as i64)
}

/// `part / whole` as a percentage, three significant figures; `–` when the whole is empty.
pub fn pct(part: i64, whole: i64) -> String {
    num::share_of(part as f64, whole as f64)
}

/// A fraction (0..1) as a percentage, three significant figures (`0.053%`, `37.2%`).
pub fn frac(f: f64) -> String {
    num::share(f)
}

/// Bytes in binary units as `torch.cuda.memory_summary` and memory_viz print them (`1.5GiB`):
/// one convention on every tab (the Memory tab and the reports use the same core function). Only
/// the copied `key_averages` table keeps torch's table units.
pub fn bytes(n: i64) -> String {
    signed_bytes(n)
}

/// A FLOP count in the unit that fits (`2.07 TFLOP`); `–` for none.
pub fn flops(f: f64) -> String {
    if f <= 0.0 {
        "–".into()
    } else {
        num::flop(f)
    }
}

/// Microseconds with three decimals, for CSV and data attributes tests read.
pub fn us(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e3)
}

/// A FLOP rate given in TFLOPS, in the unit that fits (`22.6 GFLOPS`).
pub fn tflops(t: f64) -> String {
    num::tflops(t)
}

/// A per-step distribution in one cell: a sparkline of the steps, then median and max (and the
/// step of the max when it stands out: over 1.5 × the median).
pub fn per_step(d: &tracelight_core::analysis::per_step::StepDist, steps: &[String]) -> String {
    let spark = tracelight_core::analysis::per_step::sparkline(&d.per_step_ns, 12);
    let mut s = format!("{spark} med {} · max {}", dur(d.median_ns), dur(d.max_ns));
    if d.max_ns as f64 > 1.5 * d.median_ns as f64 {
        if let Some(name) = steps.get(d.max_step) {
            s += &format!(" ({})", name.trim_start_matches("ProfilerStep"));
        }
    }
    s
}

/// Appends `s` to `out` as HTML text or a quoted attribute value (`&`, `<`, `>`, `"`, `'`
/// escaped): for markup built as one string, where names from a trace must stay text.
pub fn html_text(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}
