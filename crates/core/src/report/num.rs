//! Rates, shares and counts as text: one formatter for the page and the CLI, so a figure reads
//! the same wherever it is shown.
//!
//! The rule is **three significant figures, small values kept**: `0.053%` stays `0.053%` (a fixed
//! one decimal printed MFU 0.053% as `0.1%`), `43.022365246629555` becomes `43`, `988.78`
//! becomes `989`. Integer digits are never rounded away (`1234` stays `1234`); trailing zeros
//! after the point are dropped (`4.50` → `4.5`). Negative values take a real minus sign (`−`).
//! FLOP counts and rates pick the unit that leaves 1–3 integer digits (`22.6 GFLOPS`, never
//! `0.0226 TFLOPS`). Durations and bytes have their own formatters
//! ([`crate::model::time::format_duration`], [`super::memory::signed_bytes`]).
//!
//! ```
//! use tracelight_core::report::num::{share, sig3, tflops};
//! assert_eq!(share(0.00053), "0.053%");
//! assert_eq!(sig3(43.022365246629555), "43");
//! assert_eq!(tflops(0.02264), "22.6 GFLOPS");
//! ```

/// `x` with three significant figures (see the module doc); `–` for a non-finite value.
pub fn sig3(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    let a = x.abs();
    let sign = if x < 0.0 { "−" } else { "" };
    if a == 0.0 {
        return "0".into();
    }
    // Decimals for three significant figures, from the magnitude after rounding.
    let mut decimals = (2 - a.log10().floor() as i32).max(0) as usize;
    let rounded: f64 = format!("{a:.decimals$}").parse().unwrap_or(a);
    if rounded >= 10f64.powi(3 - decimals as i32) && decimals > 0 {
        decimals -= 1;
    }
    let mut s = format!("{a:.decimals$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_owned();
    }
    if s == "0" {
        return "0".into();
    }
    format!("{sign}{s}")
}

/// A signed [`sig3`]: `+4.5`, `−0.21`, `0`.
pub fn signed_sig3(x: f64) -> String {
    if x > 0.0 {
        format!("+{}", sig3(x))
    } else {
        sig3(x)
    }
}

/// A fraction (0..1, or beyond) as a percentage: `0.372` → `37.2%`, `0.00053` → `0.053%`.
pub fn share(f: f64) -> String {
    if !f.is_finite() {
        return "–".into();
    }
    format!("{}%", sig3(100.0 * f))
}

/// A signed percentage: `+12.3%`, `−95.3%`.
pub fn signed_share(f: f64) -> String {
    if !f.is_finite() {
        return "–".into();
    }
    format!("{}%", signed_sig3(100.0 * f))
}

/// A change of a share, in percentage points: `−2.4 pt`.
pub fn points(delta: f64) -> String {
    format!("{} pt", signed_sig3(100.0 * delta))
}

/// `part ÷ whole` as a [`share`]; `–` when the whole is empty.
pub fn share_of(part: f64, whole: f64) -> String {
    if whole <= 0.0 {
        "–".into()
    } else {
        share(part / whole)
    }
}

/// B's change over A as a signed share (`+12.3%`); empty when A is 0.
pub fn change(a: f64, b: f64) -> String {
    if a == 0.0 {
        String::new()
    } else {
        signed_share((b - a) / a)
    }
}

/// A count that may be a mean (calls per step): `12`, `12.5`, `1234`.
pub fn count(x: f64) -> String {
    sig3(x)
}

/// Scales `x` to the unit prefix that leaves 1–3 integer digits, from `units` (value, prefix)
/// largest first; the last one is used for anything smaller.
fn scaled(x: f64, unit: &str) -> String {
    const PREFIXES: [(f64, &str); 6] = [
        (1e18, "E"),
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
    ];
    let a = x.abs();
    if a == 0.0 || !a.is_finite() {
        return format!("{} {unit}", sig3(x));
    }
    for (v, p) in PREFIXES {
        // Rounded to three figures first, so 999.7 G reads 1 T, not 1000 G.
        if a >= v * 0.9995 {
            return format!("{} {p}{unit}", sig3(x / v));
        }
    }
    format!("{} {unit}", sig3(x))
}

/// A FLOP count: `2.07 TFLOP`, `156 GFLOP`.
pub fn flop(f: f64) -> String {
    scaled(f, "FLOP")
}

/// A FLOP rate given in FLOP/s: `22.6 GFLOPS`, `4.45 TFLOPS`.
pub fn flops_rate(f: f64) -> String {
    scaled(f, "FLOPS")
}

/// A FLOP rate given in TFLOPS (how the analyses carry it), in the unit that fits.
pub fn tflops(t: f64) -> String {
    flops_rate(t * 1e12)
}

/// The unit [`tflops`] picks for `t` (`GFLOPS`), for a title that must name it.
pub fn tflops_unit(t: f64) -> &'static str {
    let s = tflops(t);
    match s.rsplit(' ').next().unwrap_or("") {
        "EFLOPS" => "EFLOPS",
        "PFLOPS" => "PFLOPS",
        "TFLOPS" => "TFLOPS",
        "GFLOPS" => "GFLOPS",
        "MFLOPS" => "MFLOPS",
        "kFLOPS" => "kFLOPS",
        _ => "FLOPS",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_significant_figures_keep_small_values_and_integer_digits() {
        assert_eq!(sig3(0.053), "0.053");
        assert_eq!(sig3(0.05349), "0.0535");
        assert_eq!(sig3(43.022365246629555), "43");
        assert_eq!(sig3(988.7817177523916), "989");
        assert_eq!(sig3(999.6), "1000");
        assert_eq!(sig3(9.996), "10");
        assert_eq!(sig3(1234.4), "1234");
        assert_eq!(sig3(4.45), "4.45");
        assert_eq!(sig3(0.0), "0");
        assert_eq!(sig3(-0.21), "−0.21");
        assert_eq!(sig3(f64::NAN), "–");
        assert_eq!(sig3(118.9), "119");
        assert_eq!(sig3(15.7), "15.7");
    }

    #[test]
    fn shares_and_rates_read_as_a_person_writes_them() {
        assert_eq!(share(0.00053), "0.053%");
        assert_eq!(share(0.037), "3.7%");
        assert_eq!(share(1.0), "100%");
        assert_eq!(share(1.64), "164%");
        assert_eq!(signed_share(-0.953), "−95.3%");
        assert_eq!(points(-0.024), "−2.4 pt");
        assert_eq!(change(4.45, 0.21), "−95.3%");
        assert_eq!(tflops(4.45), "4.45 TFLOPS");
        assert_eq!(tflops(0.02264), "22.6 GFLOPS");
        assert_eq!(tflops(0.9996), "1 TFLOPS");
        assert_eq!(tflops_unit(0.02264), "GFLOPS");
        assert_eq!(flop(2.07e12), "2.07 TFLOP");
        assert_eq!(flop(1.56e11), "156 GFLOP");
        assert_eq!(flop(0.0), "0 FLOP");
    }
}
