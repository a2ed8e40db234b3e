//! The trend page's small multiples laid out (`report::trend`): where run `i` sits on each
//! panel's x axis, and which pair of runs a click at `x` means — on a run's point, that run
//! against the one before it (the change the CLI's `vs previous` column reports); between two
//! runs, those two. The page paints and hit-tests with these, so the two cannot disagree.

/// Left and right margins of a panel's plot area, CSS px (left holds the y labels).
pub const MARGIN_L: f64 = 64.0;
pub const MARGIN_R: f64 = 16.0;
/// Top (title) and bottom (run names) margins, CSS px.
pub const MARGIN_T: f64 = 22.0;
pub const MARGIN_B: f64 = 30.0;
/// Within this share of the spacing around a run's x, a click is on its point.
const ON_POINT: f64 = 0.25;

/// The x (CSS px) of run `i` of `n` in a panel `w` wide: runs evenly spaced, half a spacing of
/// room at each end.
pub fn x_of(i: usize, n: usize, w: f64) -> f64 {
    let inner = (w - MARGIN_L - MARGIN_R).max(1.0);
    let step = inner / n.max(1) as f64;
    MARGIN_L + step * (i as f64 + 0.5)
}

/// The pair (A, B) a click at `x` opens in Compare: `None` outside the plot or with fewer than
/// two runs.
pub fn pair_at(x: f64, n: usize, w: f64) -> Option<(usize, usize)> {
    if n < 2 || x < MARGIN_L || x > w - MARGIN_R {
        return None;
    }
    let inner = (w - MARGIN_L - MARGIN_R).max(1.0);
    let step = inner / n as f64;
    // Position in run units: run i's point is at i.
    let u = (x - MARGIN_L) / step - 0.5;
    let nearest = u.round().clamp(0.0, (n - 1) as f64) as usize;
    if (u - nearest as f64).abs() <= ON_POINT || u < 0.0 || u > (n - 1) as f64 {
        let b = nearest.max(1);
        return Some((b - 1, b));
    }
    let a = u.floor() as usize;
    Some((a, a + 1))
}

/// The y (CSS px) of `v` on a panel `h` high whose axis runs from 0 to `max`.
pub fn y_of(v: f64, max: f64, h: f64) -> f64 {
    let inner = (h - MARGIN_T - MARGIN_B).max(1.0);
    let f = if max > 0.0 {
        (v / max).clamp(0.0, 1.0)
    } else {
        0.0
    };
    h - MARGIN_B - f * inner
}

/// A round axis maximum at or above `v` (1, 2 or 5 times a power of ten), so the top gridline's
/// label is a short number.
pub fn nice_max(v: f64) -> f64 {
    if v.is_nan() || v <= 0.0 || v.is_infinite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&m| m >= v * (1.0 - 1e-12))
        .unwrap_or(10.0 * p)
}

/// [`nice_max`] for bytes: a power of two (times 1024ⁿ), so the gridlines read `1GiB`, `512MiB`
/// rather than decimal steps printed in binary units.
pub fn nice_max_bytes(v: f64) -> f64 {
    if v.is_nan() || v <= 1.0 || v.is_infinite() {
        return 1.0;
    }
    2f64.powf(v.log2().ceil())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_click_on_a_point_pairs_it_with_the_run_before_and_between_runs_pairs_the_two() {
        let (n, w) = (5, 600.0);
        for i in 1..n {
            assert_eq!(pair_at(x_of(i, n, w), n, w), Some((i - 1, i)), "on run {i}");
        }
        // The first run's point opens it against the second.
        assert_eq!(pair_at(x_of(0, n, w), n, w), Some((0, 1)));
        for i in 0..n - 1 {
            let mid = (x_of(i, n, w) + x_of(i + 1, n, w)) / 2.0;
            assert_eq!(
                pair_at(mid, n, w),
                Some((i, i + 1)),
                "between {i} and {}",
                i + 1
            );
        }
        assert_eq!(pair_at(MARGIN_L - 1.0, n, w), None);
        assert_eq!(pair_at(300.0, 1, w), None);
    }

    #[test]
    fn axes() {
        assert_eq!(nice_max(3.2), 5.0);
        assert_eq!(nice_max(1000.0), 1000.0);
        assert_eq!(nice_max(1001.0), 2000.0);
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(
            nice_max_bytes(1.5 * 1024.0 * 1024.0 * 1024.0),
            2.0 * 1024.0 * 1024.0 * 1024.0
        );
        assert_eq!(nice_max_bytes(1024.0), 1024.0);
        let h = 200.0;
        assert_eq!(y_of(0.0, 10.0, h), h - MARGIN_B);
        assert_eq!(y_of(10.0, 10.0, h), MARGIN_T);
    }
}
