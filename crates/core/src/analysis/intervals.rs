//! Interval arithmetic on half-open `[start, end)` ns ranges: unions, intersections and lengths, the
//! building blocks of utilization and the HTA breakdowns. Everything is O(n log n) in the number of
//! intervals (one sort) and allocates one `Vec`.

use crate::model::Ns;

/// Sorts and merges overlapping or touching intervals; empty ones are dropped.
pub fn union(mut v: Vec<(Ns, Ns)>) -> Vec<(Ns, Ns)> {
    v.retain(|&(a, b)| b > a);
    // Stable (driftsort): the intervals come as a few runs already in order (a track's slices,
    // one stream after another), which it merges instead of partitioning them again (equal
    // elements are equal values, so the order is the same).
    v.sort();
    let mut out: Vec<(Ns, Ns)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
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
}
