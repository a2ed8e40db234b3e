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
    if let Some(ns) = kineto_us(text) {
        return Some(ns);
    }
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

/// The form Kineto writes, unsigned digits with exactly three decimals (`1695835535123.456`,
/// epoch microseconds `1700000000000782.745`, `12.000`), at most 16 integer digits: eight
/// digits at a time where there are eight (the general loop above, a multiply after each digit,
/// was ~5 % of a reader worker's time in V8, two calls an event). `None` for anything else, which
/// the general path then reads; where this gives a value it is the one that path gives (which has
/// none above `i64::MAX` either).
#[inline]
fn kineto_us(text: &[u8]) -> Option<Ns> {
    let n = text.len();
    if !(5..=20).contains(&n) || text[n - 4] != b'.' {
        return None;
    }
    let (int, frac) = (&text[..n - 4], &text[n - 3..]);
    let f = few_digits(frac)?;
    let v = match int.len() {
        8.. => {
            let (head, low) = int.split_at(int.len() - 8);
            let head = match head.len() {
                8 => eight_digits(head)?,
                _ => few_digits(head)?,
            };
            head * 100_000_000 + eight_digits(low)?
        }
        _ => few_digits(int)?,
    };
    // Below 10^16 · 1000 + 1000 < 2^64: no wrap.
    i64::try_from(v * 1000 + f).ok()
}

/// Up to eight ASCII digits' value, one at a time (`Some(0)` for none).
#[inline]
fn few_digits(b: &[u8]) -> Option<u64> {
    let (mut v, mut bad) = (0u64, 0u8);
    for &d in b {
        let x = d.wrapping_sub(b'0');
        bad |= u8::from(x > 9);
        v = v * 10 + u64::from(x);
    }
    (bad == 0).then_some(v)
}

/// Eight ASCII digits' value, the first the most significant, as one 64-bit word: each byte
/// checked to be a digit, then pairs, fours and the eight combined by three multiplies.
#[inline]
fn eight_digits(b: &[u8]) -> Option<u64> {
    let x = u64::from_le_bytes(b.try_into().ok()?);
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    // Every byte 0x30..=0x3F, and none above 0x39 (adding 6 takes those to 0x40..).
    if x & HIGH != ZEROS || x.wrapping_add(0x0606_0606_0606_0606) & HIGH != ZEROS {
        return None;
    }
    let v = x & 0x0F0F_0F0F_0F0F_0F0F;
    let v = (v.wrapping_mul((10 << 8) + 1) >> 8) & 0x00FF_00FF_00FF_00FF;
    let v = (v.wrapping_mul((100 << 16) + 1) >> 16) & 0x0000_FFFF_0000_FFFF;
    Some(v.wrapping_mul((10_000 << 32) + 1) >> 32)
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

    /// The fast path gives what the general one gives wherever it answers, and answers the
    /// forms Kineto writes; the general path is this function with the fast path's text broken
    /// by a trailing `0` (four decimals, no rounding).
    #[test]
    fn the_kineto_form_reads_as_the_general_path() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut answered = 0;
        for k in 0..40_000 {
            let int_digits = 1 + (next() % 16) as usize;
            let mut t: Vec<u8> = (0..int_digits)
                .map(|_| b'0' + (next() % 10) as u8)
                .collect();
            if k % 4 == 0 && int_digits == 16 {
                // Around i64::MAX / 1000 (9223372036854775.807).
                t = b"92233720368547".to_vec();
                t.extend((0..2).map(|_| b'0' + (next() % 10) as u8));
            }
            t.push(b'.');
            t.extend((0..3).map(|_| b'0' + (next() % 10) as u8));
            let mut general = t.clone();
            general.push(b'0');
            let want = us_text_to_ns(&general);
            let text = String::from_utf8_lossy(&t).into_owned();
            match kineto_us(&t) {
                Some(fast) => {
                    assert_eq!(Some(fast), want, "{text}");
                    answered += 1;
                }
                None => assert_eq!(want, None, "{text}"),
            }
            assert_eq!(us_text_to_ns(&t), want, "{text}");
            // One byte changed: not the form once it is not a digit (or the point).
            let mut c = t.clone();
            let at = next() as usize % c.len();
            c[at] = next() as u8;
            let dot = c.len() - 4;
            let form = c.iter().enumerate().all(|(j, &b)| {
                if j == dot {
                    b == b'.'
                } else {
                    b.is_ascii_digit()
                }
            });
            if !form {
                assert_eq!(kineto_us(&c), None, "{}", String::from_utf8_lossy(&c));
            }
        }
        assert!(answered > 35_000, "{answered}");
        for t in [
            &b"1.5"[..],
            b"-1.500",
            b"1e3.000",
            b"12.3456",
            b"12345678901234567.000",
            b".000",
            b"1 .000",
            b"1.0:0",
        ] {
            assert_eq!(kineto_us(t), None, "{}", String::from_utf8_lossy(t));
        }
        assert_eq!(us_text_to_ns(b"-1.500"), Some(-1500));
        assert_eq!(us_text_to_ns(b"0.001"), Some(1));
        assert_eq!(
            kineto_us(b"999999999999999.999"),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(kineto_us(b"9223372036854775.807"), Some(i64::MAX));
        assert_eq!(
            kineto_us(b"1700000000000782.745"),
            Some(1_700_000_000_000_782_745)
        );
        assert_eq!(kineto_us(b"12345678.901"), Some(12_345_678_901));
        assert_eq!(kineto_us(b"1234567/.901"), None);
        assert_eq!(kineto_us(b"123456789:123456.901"), None);
        assert_eq!(eight_digits(b"00000000"), Some(0));
        assert_eq!(eight_digits(b"98765432"), Some(98_765_432));
        for bad in [b"9876543:", b"/8765432", b"98765\xff32", b"98765 32"] {
            assert_eq!(eight_digits(bad), None);
        }
        assert_eq!(kineto_us(b"9223372036854775.808"), None);
        assert_eq!(us_text_to_ns(b"9223372036854775.808"), None);
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(format_duration(512), "512 ns");
        assert_eq!(format_duration(1_500), "1.500 µs");
        assert_eq!(format_duration(2_000_000), "2.000 ms");
        assert_eq!(format_duration(3_210_000_000), "3.210 s");
    }
}
