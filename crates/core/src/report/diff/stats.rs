//! How sure a change between two sets of per-step samples is: the Hodges–Lehmann shift of B
//! against A with its distribution-free confidence interval (the interval that inverts the
//! Mann–Whitney / Wilcoxon rank-sum test, as R's `wilcox.test(b, a, conf.int = TRUE)` reports).
//!
//! Why this and not a t-test on means: step times are not normal — a warm-up step, a
//! checkpoint, a dataloader stall make a long right tail — and a gate must not fire because one
//! step of forty was slow. The shift estimate is the median of every pairwise difference
//! `b_j − a_i`; the interval takes order statistics of those differences, so one outlier moves
//! neither. It holds whatever the distribution, as long as B is A shifted (the usual reading of
//! "B got slower").
//!
//! The interval's level is exact (the rank-sum distribution counted, [`rank_sum_cdf`]) when both
//! sides together have at most [`EXACT_MAX`] samples, the normal approximation beyond. Too few
//! steps can never show a change at the level asked: with 3 steps against 3 the most extreme
//! ordering has probability 2 / C(6, 3) = 10 %, so no 95 % interval excludes 0; [`shift`] then
//! says `None` (too short to tell). Hundreds of ranks × steps are thinned to [`MAX_SAMPLES`]
//! per side (evenly spaced order statistics), which only widens the interval.

/// Both sides together up to this many samples: the interval's level is counted exactly.
pub const EXACT_MAX: usize = 50;

/// A side with more samples is thinned to this many (the pairwise differences are n × m).
pub const MAX_SAMPLES: usize = 1000;

/// The shift of B against A and its interval, in the samples' unit.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Shift {
    /// The Hodges–Lehmann estimate: the median of all `b_j − a_i`.
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
    /// The interval's confidence (0.95 asked; the exact level reached may be a little higher).
    pub level: f64,
    pub n_a: usize,
    pub n_b: usize,
}

impl Shift {
    /// Whether the interval leaves out 0: B differs from A at this level.
    pub fn significant(&self) -> bool {
        self.lo > 0.0 || self.hi < 0.0
    }
}

/// `v` sorted, thinned to at most [`MAX_SAMPLES`] evenly spaced order statistics.
fn prepared(v: &[f64]) -> Vec<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    crate::sort::by(&mut s, |x, y| x.total_cmp(y));
    if s.len() <= MAX_SAMPLES {
        return s;
    }
    let n = s.len();
    (0..MAX_SAMPLES)
        .map(|k| s[k * (n - 1) / (MAX_SAMPLES - 1)])
        .collect()
}

/// P(U ≤ u) for u = 0..=n·m, U the Mann–Whitney count of (a, b) pairs with b < a under no
/// difference, by the Gaussian binomial coefficient [n+m choose n]_q whose coefficients count
/// the arrangements (exact in f64 while they stay below 2^53: n + m ≤ [`EXACT_MAX`]).
pub fn rank_sum_cdf(n: usize, m: usize) -> Vec<f64> {
    // [m+i choose i]_q = [m+i−1 choose i−1]_q · (1 − q^(m+i)) / (1 − q^i), i = 1..=n.
    let mut p = vec![1.0f64];
    for i in 1..=n {
        let grow = m + i;
        let mut next = vec![0.0; p.len() + grow];
        for (k, &c) in p.iter().enumerate() {
            next[k] += c;
            next[k + grow] -= c;
        }
        // Dividing by (1 − q^i): a running sum with stride i; the top i terms come out 0.
        for k in i..next.len() {
            next[k] += next[k - i];
        }
        next.truncate(p.len() + m);
        p = next;
    }
    let total: f64 = p.iter().sum();
    let mut acc = 0.0;
    p.iter()
        .map(|c| {
            acc += c;
            acc / total
        })
        .collect()
}

/// The standard normal quantile for a two-sided level (0.95 → 1.959964), by Acklam's rational
/// approximation (relative error below 1.2e-9).
fn z_two_sided(level: f64) -> f64 {
    let p = 1.0 - (1.0 - level) / 2.0;
    let a = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    let b = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    let c = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    let d = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
            / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0)
    };
    if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0)
    }
}

/// How many of the smallest (and of the largest) pairwise differences the interval leaves out:
/// the largest k with P(U < k) ≤ (1 − level) / 2, and the level that k reaches. `None` when no
/// k ≥ 1 qualifies (too few samples to tell anything at this level).
fn cut(n: usize, m: usize, level: f64) -> Option<(usize, f64)> {
    let alpha2 = (1.0 - level) / 2.0;
    if n + m <= EXACT_MAX {
        let cdf = rank_sum_cdf(n, m);
        // P(U < k) = cdf[k − 1].
        let k = cdf.iter().take_while(|&&p| p <= alpha2 + 1e-12).count();
        if k == 0 {
            return None;
        }
        return Some((k, 1.0 - 2.0 * cdf[k - 1]));
    }
    let (nf, mf) = (n as f64, m as f64);
    let sd = (nf * mf * (nf + mf + 1.0) / 12.0).sqrt();
    let k = (nf * mf / 2.0 - z_two_sided(level) * sd).floor();
    (k >= 1.0).then_some((k as usize, level))
}

/// The shift of `b` against `a` at `level` (0.95), or `None` when either side has too few
/// finite samples for any interval at that level to leave out 0 (see the module doc).
pub fn shift(a: &[f64], b: &[f64], level: f64) -> Option<Shift> {
    let (a, b) = (prepared(a), prepared(b));
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return None;
    }
    let (k, reached) = cut(n, m, level)?;
    let mut d: Vec<f64> = Vec::with_capacity(n * m);
    for y in &b {
        for x in &a {
            d.push(y - x);
        }
    }
    crate::sort::by(&mut d, |x, y| x.total_cmp(y));
    let nm = d.len();
    let estimate = if nm % 2 == 1 {
        d[nm / 2]
    } else {
        (d[nm / 2 - 1] + d[nm / 2]) / 2.0
    };
    Some(Shift {
        estimate,
        lo: d[k - 1],
        hi: d[nm - k],
        level: reached,
        n_a: n,
        n_b: m,
    })
}

/// The median of `v` (0 when empty).
pub fn median(v: &[f64]) -> f64 {
    let s = prepared(v);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_rank_sum_distribution_counts_arrangements() {
        // n = m = 2: U takes 0..=4 with counts 1, 1, 2, 1, 1 over C(4, 2) = 6 arrangements.
        let c = rank_sum_cdf(2, 2);
        let want = [1.0, 2.0, 4.0, 5.0, 6.0].map(|x| x / 6.0);
        for (x, y) in c.iter().zip(want) {
            assert!((x - y).abs() < 1e-15, "{c:?}");
        }
        // n = 3, m = 3: P(U = 0) = 1 / 20.
        assert!((rank_sum_cdf(3, 3)[0] - 0.05).abs() < 1e-15);
    }

    #[test]
    fn the_rank_sum_distribution_equals_brute_force_enumeration() {
        // Every way to pick which n of the n + m ranks are A's; U = pairs with a B rank below.
        for (n, m) in [(4, 7), (6, 6), (1, 9), (8, 3)] {
            let mut counts = vec![0u64; n * m + 1];
            for mask in 0u32..(1 << (n + m)) {
                if mask.count_ones() as usize != n {
                    continue;
                }
                let mut u = 0;
                let mut b_below = 0;
                for r in 0..n + m {
                    if mask & (1 << r) != 0 {
                        u += b_below;
                    } else {
                        b_below += 1;
                    }
                }
                counts[u] += 1;
            }
            let total: u64 = counts.iter().sum();
            let cdf = rank_sum_cdf(n, m);
            let mut acc = 0;
            for (u, c) in counts.iter().enumerate() {
                acc += c;
                assert!(
                    (cdf[u] - acc as f64 / total as f64).abs() < 1e-12,
                    "n {n} m {m} u {u}"
                );
            }
        }
    }

    #[test]
    fn the_normal_quantile_is_the_textbook_one() {
        assert!((z_two_sided(0.95) - 1.959_963_985).abs() < 1e-8);
        assert!((z_two_sided(0.99) - 2.575_829_304).abs() < 1e-8);
    }

    #[test]
    fn three_steps_against_three_cannot_tell() {
        assert!(shift(&[1.0, 2.0, 3.0], &[10.0, 11.0, 12.0], 0.95).is_none());
        // Four against four can: every B above every A leaves 0 out.
        let s = shift(&[1.0, 2.0, 3.0, 4.0], &[11.0, 12.0, 13.0, 14.0], 0.95).unwrap();
        assert_eq!((s.lo, s.hi, s.estimate), (7.0, 13.0, 10.0));
        assert!(s.significant());
    }
}
