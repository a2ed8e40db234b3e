//! Sorting with the comparator behind `dyn`, so call sites share one copy of the sort.
//!
//! `slice::sort_by(|a, b| …)` instantiates the standard library's sort (driftsort: a few KB of
//! code) for each closure type, that is for each call site. In the wasm bundle that was 639
//! functions and 548 KB of its 3.56 MB of code before `wasm-opt` (BENCHMARKS.md, bundle size).
//! Here the comparator is a `&mut dyn FnMut`, so the sort is instantiated once per element type;
//! most call sites sort `u32` or `usize` indices. The indirect call per comparison is small next
//! to the loads the comparisons make. The reader's own sorts (`ingest`) stay on the standard
//! library's inlined comparators: they run once per event of a 2 GB trace.
//!
//! All sorts here are stable (ties keep their order), so the output is deterministic whichever
//! call site used to ask for an unstable sort.

use std::cmp::Ordering;

/// Stable sort by a comparator (as [`slice::sort_by`]).
pub fn by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    shared(v, &mut cmp);
}

/// Stable sort by a key (as [`slice::sort_by_key`]: the key is computed per comparison).
pub fn by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    shared(v, &mut |a: &T, b: &T| key(a).cmp(&key(b)));
}

/// The one instantiation per element type; never inlined, or LTO would copy the sort back into
/// every caller along with its comparator.
#[inline(never)]
fn shared<T>(v: &mut [T], cmp: &mut dyn FnMut(&T, &T) -> Ordering) {
    v.sort_by(|a, b| cmp(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_library_and_keeps_ties_in_order() {
        // (key, original position): equal keys must keep their positions' order.
        let mut v: Vec<(u8, usize)> = [5u8, 1, 5, 3, 1, 0, 5].iter().copied().zip(0..).collect();
        let mut want = v.clone();
        want.sort_by_key(|p| p.0);
        by_key(&mut v, |p| p.0);
        assert_eq!(v, want);
        let mut w = vec![3.5f64, -1.0, 2.0, f64::INFINITY, 0.0];
        by(&mut w, |a, b| b.total_cmp(a));
        assert_eq!(w, vec![f64::INFINITY, 3.5, 2.0, 0.0, -1.0]);
    }
}
