//! Number formatting for the analysis views: times with units, percentages with one decimal,
//! bytes, FLOP rates. One place so every table and card reads the same.

use tracelight_core::model::time::format_duration;
use tracelight_core::report::memory::signed_bytes;

/// A duration in ns, with its unit (`12.345 ms`).
pub fn dur(ns: i64) -> String {
    format_duration(ns)
}

/// A fractional duration in ns (averages).
pub fn dur_f(ns: f64) -> String {
    format_duration(ns.round() as i64)
}

/// `part / whole` as a percentage with one decimal; `–` when the whole is empty.
pub fn pct(part: i64, whole: i64) -> String {
    if whole <= 0 {
        "–".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// A fraction (0..1) as a percentage with one decimal.
pub fn frac(f: f64) -> String {
    format!("{:.1}%", 100.0 * f)
}

/// Bytes in binary units as `torch.cuda.memory_summary` and memory_viz print them (`1.5GiB`):
/// one convention on every tab (the Memory tab and the reports use the same core function). Only
/// the copied `key_averages` table keeps torch's table units.
pub fn bytes(n: i64) -> String {
    signed_bytes(n)
}

/// FLOPs scaled to G/T/P.
pub fn flops(f: f64) -> String {
    if f <= 0.0 {
        "–".into()
    } else if f >= 1e15 {
        format!("{:.2} PFLOP", f / 1e15)
    } else if f >= 1e12 {
        format!("{:.2} TFLOP", f / 1e12)
    } else if f >= 1e9 {
        format!("{:.2} GFLOP", f / 1e9)
    } else {
        format!("{:.2} MFLOP", f / 1e6)
    }
}

/// Microseconds with three decimals, for CSV and data attributes tests read.
pub fn us(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e3)
}

/// A FLOP rate given in TFLOPS, scaled down to GFLOPS / MFLOPS for small traces.
pub fn tflops(t: f64) -> String {
    if t >= 1.0 {
        format!("{t:.2} TFLOPS")
    } else if t >= 1e-3 {
        format!("{:.2} GFLOPS", t * 1e3)
    } else {
        format!("{:.2} MFLOPS", t * 1e6)
    }
}
