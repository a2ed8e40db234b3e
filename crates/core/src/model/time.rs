//! Time in the model is `i64` nanoseconds.
//!
//! Chrome-trace `ts`/`dur` are microseconds written as decimal text with up to three (sometimes more)
//! fractional digits. Going through `f64` loses the last nanosecond on epoch-sized values
//! (1695835535123.456 µs has 16 significant digits), so the text is converted digit by digit.

/// Nanoseconds.
pub type Ns = i64;

/// The largest |ts| or |dur| a trace may hold: 4·10¹⁸ ns (year 2096 as epoch time). Any two such
/// times differ, and a start plus a duration sums, within `i64`, so the analyses' arithmetic
/// cannot overflow; a value beyond it (`1e300`, a `dur` of 9.3·10¹⁵ µs) is a broken event.
pub const MAX_ABS_NS: Ns = 4_000_000_000_000_000_000;

/// Converts a JSON number written in microseconds to integer nanoseconds, exactly for plain decimals
/// (rounding half away from zero past the third fractional digit). Exponent forms fall back to `f64`.
/// Returns `None` for text that is not a number.
pub fn us_text_to_ns(text: &[u8]) -> Option<Ns> {
    let (neg, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    let mut i = 0;
    while i < digits.len() && digits[i].is_ascii_digit() {
        i += 1;
    }
    // Up to 18 integer digits the value fits `i64` (< 10¹⁸), so plain arithmetic: on wasm a checked
    // 64-bit multiply is a call to a 128-bit multiply routine (`__multi3`), and this runs twice per
    // event on epoch timestamps of 16 digits. Longer integer parts are checked digit by digit.
    let small = i <= 18;
    let mut int: i64 = 0;
    for &d in &digits[..i] {
        let d = i64::from(d - b'0');
        int = if small {
            int * 10 + d
        } else {
            int.checked_mul(10)?.checked_add(d)?
        };
    }
    let mut any = i > 0;
    let mut frac: i64 = 0;
    let mut frac_digits = 0;
    let mut round_up = false;
    if i < digits.len() && digits[i] == b'.' {
        i += 1;
        while i < digits.len() && digits[i].is_ascii_digit() {
            let d = i64::from(digits[i] - b'0');
            if frac_digits < 3 {
                frac = frac * 10 + d;
            } else if frac_digits == 3 {
                round_up = d >= 5;
            }
            frac_digits += 1;
            i += 1;
            any = true;
        }
    }
    if !any {
        return None;
    }
    if i != digits.len() {
        // Exponent or junk: let the float parser decide.
        let s = std::str::from_utf8(text).ok()?;
        let v: f64 = s.parse().ok()?;
        let ns = (v * 1000.0).round();
        return if ns.is_finite() && ns.abs() < 9.0e18 {
            Some(ns as i64)
        } else {
            None
        };
    }
    while frac_digits < 3 {
        frac *= 10;
        frac_digits += 1;
    }
    // `int * 1000` fits `i64` when `int` is at most `i64::MAX / 1000` (a compare, not a checked
    // multiply); the add is checked (cheap everywhere).
    if int > i64::MAX / 1000 {
        return None;
    }
    let mut ns = (int * 1000).checked_add(frac)?;
    if round_up {
        ns = ns.checked_add(1)?;
    }
    Some(if neg { -ns } else { ns })
}

/// Formats a duration for people: picks the unit so the number has 1–3 integer digits.
pub fn format_duration(ns: Ns) -> String {
    let a = ns.unsigned_abs() as f64;
    let sign = if ns < 0 { "-" } else { "" };
    if a < 1e3 {
        format!("{sign}{a:.0} ns")
    } else if a < 1e6 {
        format!("{sign}{:.3} µs", a / 1e3)
    } else if a < 1e9 {
        format!("{sign}{:.3} ms", a / 1e6)
    } else {
        format!("{sign}{:.3} s", a / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_microseconds_round_trip_to_the_nanosecond() {
        assert_eq!(
            us_text_to_ns(b"1695835535123.456"),
            Some(1_695_835_535_123_456)
        );
        assert_eq!(us_text_to_ns(b"1623143089861"), Some(1_623_143_089_861_000));
        assert_eq!(us_text_to_ns(b"6470.3"), Some(6_470_300));
        assert_eq!(us_text_to_ns(b"0.0005"), Some(1));
        assert_eq!(us_text_to_ns(b"0.0004"), Some(0));
        assert_eq!(us_text_to_ns(b"-2.5"), Some(-2_500));
        assert_eq!(us_text_to_ns(b"1.5e3"), Some(1_500_000));
        assert_eq!(us_text_to_ns(b"abc"), None);
        assert_eq!(us_text_to_ns(b""), None);
        assert_eq!(us_text_to_ns(b"99999999999999999999"), None);
        // Around the i64 limit of ns: 9,223,372,036,854,775.807 µs is i64::MAX ns; a µs more is not.
        assert_eq!(
            us_text_to_ns(b"9223372036854775.807"),
            Some(9_223_372_036_854_775_807)
        );
        assert_eq!(us_text_to_ns(b"9223372036854776"), None);
        assert_eq!(us_text_to_ns(b"999999999999999999"), None);
        assert_eq!(
            us_text_to_ns(b"-9223372036854775.807"),
            Some(-9_223_372_036_854_775_807)
        );
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(format_duration(512), "512 ns");
        assert_eq!(format_duration(1_500), "1.500 µs");
        assert_eq!(format_duration(2_000_000), "2.000 ms");
        assert_eq!(format_duration(3_210_000_000), "3.210 s");
    }
}
