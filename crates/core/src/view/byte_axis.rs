//! Ticks of a byte axis at round binary values: a step of 1, 2, 5, 10, 20, 50, 100 or 200 of a
//! binary unit (B, KiB, MiB, GiB, TiB), or 256 / 512 of one — a quarter and a half of the next
//! unit, so ticks past a unit boundary still land on round values (0, 512 MiB, 1 GiB, 1.5 GiB).
//! Labels print the exact tick in the largest unit it reaches, trimmed: `512 MiB`, `1.5 GiB`,
//! never the `476.8MiB` a decimal step (500 MB) gives in binary units.

const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
const MANTISSAS: [u64; 10] = [1, 2, 5, 10, 20, 50, 100, 200, 256, 512];

/// The smallest round step that splits `[0, max]` into at most `n` intervals (at least 1 byte).
pub fn byte_step(max: u64, n: u64) -> u64 {
    let n = n.max(1);
    let mut unit: u64 = 1;
    for _ in 0..UNITS.len() {
        for m in MANTISSAS {
            let step = m.saturating_mul(unit);
            if max.div_ceil(step) <= n {
                return step;
            }
        }
        unit = unit.saturating_mul(1024);
    }
    unit
}

/// Ticks `0, step, 2·step, …` up to and including `max` ([`byte_step`] with at most `n` intervals).
pub fn byte_ticks(max: u64, n: u64) -> Vec<u64> {
    let step = byte_step(max, n);
    (0..=max / step).map(|k| k * step).collect()
}

/// A tick's label: the value in the largest unit it reaches, with at most two decimals and no
/// trailing zeros (`0 B`, `512 MiB`, `1.25 GiB`).
pub fn tick_label(v: u64) -> String {
    let mut u = 0;
    let mut unit = 1u64;
    while u + 1 < UNITS.len() && v >= unit.saturating_mul(1024) {
        unit *= 1024;
        u += 1;
    }
    let x = v as f64 / unit as f64;
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    #[test]
    fn a_gibibyte_and_a_half_ticks_at_half_gibibytes() {
        // 1.6 GiB in at most 4 intervals: 256 MiB would need 7, 512 MiB needs 4.
        let max = GIB + 600 * MIB;
        assert_eq!(byte_ticks(max, 4), vec![0, 512 * MIB, GIB, GIB + 512 * MIB]);
        let labels: Vec<String> = byte_ticks(max, 4).into_iter().map(tick_label).collect();
        assert_eq!(labels, ["0 B", "512 MiB", "1 GiB", "1.5 GiB"]);
    }

    #[test]
    fn small_ranges_step_by_one_two_five_of_their_unit() {
        assert_eq!(byte_step(300 * MIB, 4), 100 * MIB);
        assert_eq!(byte_step(9 * MIB, 4), 5 * MIB);
        assert_eq!(byte_step(37 * GIB, 4), 10 * GIB);
        assert_eq!(byte_step(3, 4), 1);
        assert_eq!(byte_step(0, 4), 1);
        assert_eq!(tick_label(200 * 1024), "200 KiB");
        assert_eq!(tick_label(GIB + 256 * MIB), "1.25 GiB");
    }

    #[test]
    fn every_tick_is_a_whole_multiple_of_a_binary_unit_fraction() {
        // Whatever the range, each label is exact: a multiple of ¼ of its unit.
        for max in [
            1u64,
            999,
            5000,
            3 * MIB + 7,
            700 * MIB,
            3 * GIB + 1,
            77 * GIB,
            u64::MAX / 3,
        ] {
            for v in byte_ticks(max, 5) {
                let mut unit = 1u64;
                while v >= unit.saturating_mul(1024) && unit < (1 << 50) {
                    unit *= 1024;
                }
                assert_eq!(v % (unit / 4).max(1), 0, "tick {v} of max {max}");
            }
            assert!(byte_ticks(max, 5).len() <= 6);
        }
    }
}
