//! Area selection: the slices of some tracks overlapping a time range, summed by name — Perfetto's
//! "Slices" aggregation. Durations are whole slices (not clipped to the range), as Perfetto does;
//! self time is duration minus the durations of direct children, children outside the range
//! included.

use super::lod::LodIndex;
use crate::model::{Ns, StrId, Trace, NONE};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub struct AggRow {
    pub name: String,
    pub count: u64,
    pub total_ns: Ns,
    pub self_ns: Ns,
    pub avg_ns: f64,
}

/// Slices of `tracks` overlapping `[a, b)`, by name, sorted by total time (then name).
pub fn aggregate(t: &Trace, lod: &LodIndex, tracks: &[usize], (a, b): (i64, i64)) -> Vec<AggRow> {
    let s = &t.slices;
    let mut acc: HashMap<StrId, (u64, Ns, Ns)> = HashMap::new();
    for &tr in tracks {
        // Selected slices of this track, with their self time so far.
        let mut sel: HashMap<u32, Ns> = HashMap::new();
        let (mut lo, mut hi) = (u32::MAX, i64::MIN);
        for d in 0..lod.depths(tr) {
            let lane = lod.lane_slices(tr, d);
            let k = lane.partition_point(|&i| s.end(i as usize) <= a && s.start[i as usize] < a);
            for &i in &lane[k..] {
                let iu = i as usize;
                if s.start[iu] >= b {
                    break;
                }
                // A zero-length slice at `a` counts; one ending exactly at `a` does not.
                if s.end(iu) <= a && !(s.dur[iu] == 0 && s.start[iu] >= a) {
                    continue;
                }
                sel.insert(i, s.dur[iu]);
                lo = lo.min(i);
                hi = hi.max(s.end(iu));
            }
        }
        if sel.is_empty() {
            continue;
        }
        // Every child of a selected slice lies inside it, so between `lo` and the last end.
        let Some(trk) = t.tracks.get(tr) else {
            continue;
        };
        let track_end = (trk.first + trk.count) as usize;
        let mut j = lo as usize + 1;
        while j < track_end.min(s.len()) && s.start[j] < hi {
            let p = s.parent[j];
            if p != NONE {
                if let Some(v) = sel.get_mut(&p) {
                    *v -= s.dur[j];
                }
            }
            j += 1;
        }
        for (i, self_ns) in sel {
            let e = acc.entry(s.name[i as usize]).or_default();
            e.0 += 1;
            e.1 += s.dur[i as usize];
            e.2 += self_ns;
        }
    }
    let mut out: Vec<AggRow> = acc
        .into_iter()
        .map(|(n, (count, total, self_ns))| AggRow {
            name: t.str(n).to_owned(),
            count,
            total_ns: total,
            self_ns,
            avg_ns: total as f64 / count.max(1) as f64,
        })
        .collect();
    crate::sort::by(&mut out, |x, y| {
        y.total_ns
            .cmp(&x.total_ns)
            .then_with(|| x.name.cmp(&y.name))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::testutil::trace_of;

    #[test]
    fn sums_by_name_with_self_time_from_all_children() {
        let t = trace_of(&[
            ("step", "user_annotation", 1, 0.0, 100.0),
            ("aten::mm", "cpu_op", 1, 10.0, 20.0),
            ("aten::mm", "cpu_op", 1, 40.0, 10.0),
            ("aten::relu", "cpu_op", 1, 80.0, 10.0),
            ("aten::mm", "cpu_op", 2, 5.0, 1.0),
        ]);
        let lod = LodIndex::build(&t);
        let tracks: Vec<usize> = (0..t.tracks.len())
            .filter(|&i| t.tracks[i].count > 0)
            .collect();
        // [15, 45) µs: step, both mm on thread 1; relu outside; thread 2's mm ends at 6 µs.
        let rows = aggregate(&t, &lod, &tracks, (15_000, 45_000));
        let get = |n: &str| rows.iter().find(|r| r.name == n).cloned();
        let Some(step) = get("step") else {
            panic!("{rows:?}")
        };
        assert_eq!((step.count, step.total_ns), (1, 100_000));
        // Self time subtracts relu too, though relu is outside the range.
        assert_eq!(step.self_ns, 100_000 - 20_000 - 10_000 - 10_000);
        let Some(mm) = get("aten::mm") else {
            panic!("{rows:?}")
        };
        assert_eq!((mm.count, mm.total_ns, mm.self_ns), (2, 30_000, 30_000));
        assert_eq!(mm.avg_ns, 15_000.0);
        assert!(get("aten::relu").is_none());
        assert_eq!(rows[0].name, "step", "sorted by total");
        assert!(aggregate(&t, &lod, &[99], (0, 1)).is_empty());
    }
}
