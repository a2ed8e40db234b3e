//! Interval arithmetic on half-open `[start, end)` ns ranges: unions, intersections and lengths, the
//! building blocks of utilization and the HTA breakdowns. Everything is O(n log n) in the number of
//! intervals (one sort) and allocates one `Vec`.

use crate::model::Ns;

/// Sorts and merges overlapping or touching intervals; empty ones are dropped. In place: the
/// result reuses `v`'s buffer (on a big trace these lists hold every CPU slice).
pub fn union(mut v: Vec<(Ns, Ns)>) -> Vec<(Ns, Ns)> {
    v.retain(|&(a, b)| b > a);
    // Stable (driftsort): the intervals come as a few runs already in order (a track's slices,
    // one stream after another), which it merges instead of partitioning them again (equal
    // elements are equal values, so the order is the same).
    v.sort();
    let mut w = 0;
    for r in 0..v.len() {
        let (a, b) = v[r];
        if w > 0 && a <= v[w - 1].1 {
            v[w - 1].1 = v[w - 1].1.max(b);
        } else {
            v[w] = (a, b);
            w += 1;
        }
    }
    v.truncate(w);
    v
}

/// Appends `[a, b)` to `v`, merged into the last interval where it starts inside it: pushing
/// intervals in start order (a track's slices) this way leaves their union, for a fraction of
/// the memory of every interval; in any order, [`union`] of the result is the union of all.
pub fn push_merged(v: &mut Vec<(Ns, Ns)>, a: Ns, b: Ns) {
    match v.last_mut() {
        Some(last) if last.0 <= a && a <= last.1 => last.1 = last.1.max(b),
        _ => v.push((a, b)),
    }
}

/// Total length of a merged (sorted, disjoint) interval list.
pub fn total(u: &[(Ns, Ns)]) -> Ns {
    u.iter().map(|&(a, b)| b - a).sum()
}

/// Intersection of two merged interval lists.
pub fn intersect(a: &[(Ns, Ns)], b: &[(Ns, Ns)]) -> Vec<(Ns, Ns)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// `a` minus `b`, both merged.
pub fn subtract(a: &[(Ns, Ns)], b: &[(Ns, Ns)]) -> Vec<(Ns, Ns)> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(s, e) in a {
        let mut cur = s;
        while j < b.len() && b[j].1 <= cur {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > cur {
                out.push((cur, b[k].0));
            }
            cur = cur.max(b[k].1);
            k += 1;
        }
        if cur < e {
            out.push((cur, e));
        }
    }
    out
}

/// Clips a merged list to `[lo, hi)`.
pub fn clip(u: &[(Ns, Ns)], lo: Ns, hi: Ns) -> Vec<(Ns, Ns)> {
    u.iter()
        .filter_map(|&(a, b)| {
            let (a, b) = (a.max(lo), b.min(hi));
            (b > a).then_some((a, b))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_intersection_and_difference_agree() {
        let a = union(vec![(5, 10), (0, 3), (2, 4), (10, 12)]);
        assert_eq!(a, vec![(0, 4), (5, 12)]);
        assert_eq!(total(&a), 11);
        let b = union(vec![(3, 6), (11, 20)]);
        assert_eq!(intersect(&a, &b), vec![(3, 4), (5, 6), (11, 12)]);
        assert_eq!(subtract(&a, &b), vec![(0, 3), (6, 11)]);
        assert_eq!(clip(&a, 1, 6), vec![(1, 4), (5, 6)]);
    }

    /// The union by definition: the ns points covered, as runs.
    fn covered(v: &[(Ns, Ns)], span: Ns) -> Vec<(Ns, Ns)> {
        let mut out: Vec<(Ns, Ns)> = Vec::new();
        for x in 0..span {
            if v.iter().any(|&(a, b)| a <= x && x < b) {
                match out.last_mut() {
                    Some(l) if l.1 == x => l.1 = x + 1,
                    _ => out.push((x, x + 1)),
                }
            }
        }
        out
    }

    #[test]
    fn merging_as_intervals_arrive_leaves_the_same_union() {
        let mut rng = tracelight_testkit::xorshift(0x2545_f491_4f6c_dd1d);
        let mut next = |m: u64| (rng() % m) as Ns;
        for round in 0..500 {
            let n = 1 + next(30) as usize;
            // Half the rounds in start order (a track's slices), half in any order; some empty
            // and some reversed intervals among them.
            let mut v: Vec<(Ns, Ns)> = (0..n)
                .map(|_| {
                    let a = next(60);
                    (a, a + next(12) - 2)
                })
                .collect();
            if round % 2 == 0 {
                v.sort_by_key(|x| x.0);
            }
            let mut merged = Vec::new();
            for &(a, b) in &v {
                push_merged(&mut merged, a, b);
            }
            assert!(merged.len() <= v.len());
            let want = covered(&v, 80);
            assert_eq!(union(v.clone()), want, "{v:?}");
            assert_eq!(union(merged), want, "{v:?}");
        }
    }
}
