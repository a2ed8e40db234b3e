//! Flow events (`s`/`f`, Kineto's `ac2g` and `fwdbwd` arrows) paired into slice → slice links
//! once the slices are in display order and nested.

use super::build::FlowEnd;
use crate::model::{Flows, Slices, Track, NONE};
use crate::par;

/// The flow ends that pair (`s` and `f`), sorted so each (cat, id) group is together, its `f`s
/// (b'f' < b's') then its `s`s, each in time order. Sorting indices does this without a map of
/// small vectors; it needs only the ends, so it runs beside the slices' sort.
pub(super) fn pairing_order(ends: &[FlowEnd]) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..ends.len() as u32)
        .filter(|&k| matches!(ends[k as usize].ph, b's' | b'f'))
        .collect();
    // Indirect: keys packed as integers beside each index sorted slower (89 against 62 ms on
    // a 1 GB trace natively).
    idx.sort_unstable_by_key(|&k| {
        let e = &ends[k as usize];
        (e.cat, e.id, e.ph, e.ts, k)
    });
    idx
}

/// Pairs the k-th start with the k-th finish of each (cat, id) group in time order (files write
/// the `f` before its `s` as often as after, and ids repeat: up to 21 times seen). Returns the
/// flows in group order and how many ends found no partner or no slice.
///
/// The groups are cut into one run per core ([`par::threads`]) and paired apart; the runs'
/// flows are joined in order, so the result does not depend on the core count.
pub(super) fn pair(
    ends: &[FlowEnd],
    idx: &[u32],
    tracks: &[Track],
    slices: &Slices,
) -> (Flows, u64) {
    let runs = par::threads().min(idx.len() / par::PER_THREAD + 1);
    let at = end_slices(runs, ends, tracks, slices);
    pair_in(runs, ends, idx, &at)
}

/// Each flow end's slice ([`endpoint_slice`]; [`NONE`] where it has none), found in the ends'
/// own order, the file's, cut into `runs` runs: each search starts where the last end of the
/// same track was found ([`upper_bound_from`]), and a file writes a track's flows nearly in
/// time order. Found in the pairing's (cat, id) order, each was a binary search over its whole
/// track: ~86 ms of a 1 GB trace's ~300 ms finish in V8.
fn end_slices(runs: usize, ends: &[FlowEnd], tracks: &[Track], slices: &Slices) -> Vec<u32> {
    let mut at = vec![NONE; ends.len()];
    let per = ends.len().div_ceil(runs.max(1)).max(1);
    let jobs = at
        .chunks_mut(per)
        .zip(ends.chunks(per))
        .map(|(out, ends)| {
            Box::new(move || {
                let mut finger = vec![0usize; tracks.len()];
                for (o, e) in out.iter_mut().zip(ends) {
                    if matches!(e.ph, b's' | b'f') {
                        *o = endpoint_slice(tracks, slices, e, &mut finger).unwrap_or(NONE);
                    }
                }
            }) as par::Job<'_>
        })
        .collect();
    par::all(jobs);
    at
}

/// [`pair`] cut into `runs` runs, each end's slice in `at`.
fn pair_in(runs: usize, ends: &[FlowEnd], idx: &[u32], at: &[u32]) -> (Flows, u64) {
    let key = |k: u32| (ends[k as usize].cat, ends[k as usize].id);
    let runs = runs.max(1);
    let mut cuts = vec![0usize];
    for r in 1..runs {
        let mut at = (idx.len() * r / runs).max(*cuts.last().unwrap_or(&0));
        // A group never straddles two runs.
        while at > 0 && at < idx.len() && key(idx[at]) == key(idx[at - 1]) {
            at += 1;
        }
        cuts.push(at);
    }
    cuts.push(idx.len());
    let mut out: Vec<(Flows, u64)> = Vec::new();
    out.resize_with(runs, Default::default);
    let jobs = out
        .iter_mut()
        .zip(cuts.windows(2))
        .map(|(o, w)| {
            let run = &idx[w[0]..w[1]];
            Box::new(move || *o = pair_run(ends, run, at)) as par::Job<'_>
        })
        .collect();
    par::all(jobs);
    let mut it = out.into_iter();
    let (mut flows, mut unpaired) = it.next().unwrap_or_default();
    for (f, u) in it {
        flows.cat.extend(f.cat);
        flows.from.extend(f.from);
        flows.to.extend(f.to);
        unpaired += u;
    }
    (flows, unpaired)
}

fn pair_run(ends: &[FlowEnd], idx: &[u32], at: &[u32]) -> (Flows, u64) {
    let mut flows = Flows::default();
    let mut unpaired = 0u64;
    let key = |k: u32| (ends[k as usize].cat, ends[k as usize].id);
    let mut g = 0;
    while g < idx.len() {
        let head = key(idx[g]);
        let mut h = g;
        while h < idx.len() && key(idx[h]) == head {
            h += 1;
        }
        let group = &idx[g..h];
        let nf = group
            .iter()
            .take_while(|&&k| ends[k as usize].ph == b'f')
            .count();
        let (fs, ss) = group.split_at(nf);
        unpaired += ss.len().abs_diff(fs.len()) as u64;
        for (&sk, &fk) in ss.iter().zip(fs) {
            let slice = |k: u32| Some(at[k as usize]).filter(|&s| s != NONE);
            match (slice(sk), slice(fk)) {
                (Some(f), Some(t)) => {
                    flows.cat.push(head.0);
                    flows.from.push(f);
                    flows.to.push(t);
                }
                _ => unpaired += 1,
            }
        }
        g = h;
    }
    (flows, unpaired)
}

/// The slice a flow endpoint belongs to: the deepest slice on its track that contains `ts`
/// (`bp: "e"`), else the first slice starting at or after it.
///
/// `finger` holds, per track, where the last search on it ended; this one starts there.
fn endpoint_slice(tracks: &[Track], s: &Slices, e: &FlowEnd, finger: &mut [usize]) -> Option<u32> {
    let tr = tracks.get(e.track as usize)?;
    let (a, b) = (tr.first as usize, (tr.first + tr.count) as usize);
    let starts = s.start.get(a..b)?;
    let f = finger.get_mut(e.track as usize)?;
    let ub = upper_bound_from(starts, e.ts, *f);
    *f = ub;
    // Deepest containing slice: walk back a bounded distance.
    for k in (ub.saturating_sub(64)..ub).rev() {
        let i = a + k;
        if s.start[i] <= e.ts && s.end(i) >= e.ts {
            return Some(i as u32);
        }
    }
    if !e.enclosing && ub < starts.len() {
        return Some((a + ub) as u32);
    }
    None
}

/// The first index of `starts` (sorted) whose start is after `ts`, as `partition_point` gives
/// it, searched from `hint` outwards by doubling steps: a few probes where the answer is near.
fn upper_bound_from(starts: &[i64], ts: i64, hint: usize) -> usize {
    let n = starts.len();
    let hint = hint.min(n);
    let after = |lo: usize, hi: usize| lo + starts[lo..hi].partition_point(|&x| x <= ts);
    if hint > 0 && starts[hint - 1] > ts {
        // The answer is below `hint`: every start from `hi` on is after `ts`.
        let (mut hi, mut step) = (hint - 1, 1);
        loop {
            if hi < step {
                return after(0, hi);
            }
            let probe = hi - step;
            if starts[probe] <= ts {
                return after(probe + 1, hi);
            }
            hi = probe;
            step *= 2;
        }
    }
    // The answer is `hint` or after: every start before `lo` is at or before `ts`.
    let (mut lo, mut step) = (hint, 1);
    loop {
        let probe = lo + step - 1;
        if probe >= n {
            return after(lo, n);
        }
        if starts[probe] > ts {
            return after(lo, probe);
        }
        lo = probe + 1;
        step *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{IdVal, StrId, TrackKind};

    /// However the groups are cut into runs, the flows and the count of unpaired ends are those of
    /// one run; no group is split (a split one would pair its `f`s and `s`s apart).
    #[test]
    fn runs_pair_as_one_run_does() {
        let mut rnd = super::super::rng(0x2545_f491_4f6c_dd1d);
        let n = 2000;
        let track = |first: u32| Track {
            pid: IdVal::Int(1),
            tid: IdVal::Int(i64::from(first)),
            name: StrId::EMPTY,
            sort_index: None,
            kind: TrackKind::Cpu,
            device: None,
            stream: None,
            first,
            count: n / 2,
            max_depth: 0,
        };
        let tracks = vec![track(0), track(n / 2)];
        let mut slices = Slices::default();
        for i in 0..n {
            slices.start.push(i64::from(i % (n / 2)) * 10);
            slices.dur.push(5);
        }
        let ends: Vec<FlowEnd> = (0..3000)
            .map(|_| FlowEnd {
                cat: StrId(rnd(3) as u32),
                id: rnd(40) as i64,
                ph: [b's', b'f', b't'][rnd(3) as usize],
                // Some past the last slice: no slice, unpaired.
                ts: rnd(10_100) as i64,
                track: rnd(3) as u32,
                enclosing: rnd(2) == 0,
                named: false,
            })
            .collect();
        let idx = pairing_order(&ends);
        let at = end_slices(1, &ends, &tracks, &slices);
        // Each end's slice as one search from the track's first slice finds it.
        for (k, e) in ends.iter().enumerate() {
            let want = match e.ph {
                b's' | b'f' => endpoint_slice(&tracks, &slices, e, &mut [0, 0, 0]),
                _ => None,
            };
            assert_eq!(at[k], want.unwrap_or(NONE), "end {k}");
        }
        for runs in [2, 3, 7, 64, 5000] {
            assert_eq!(end_slices(runs, &ends, &tracks, &slices), at);
        }
        let (one, u1) = pair_in(1, &ends, &idx, &at);
        assert!(one.from.len() > 200 && u1 > 100, "{} {u1}", one.from.len());
        for runs in [2, 3, 7, 64, 5000] {
            let (f, u) = pair_in(runs, &ends, &idx, &at);
            assert_eq!(
                (&f.cat, &f.from, &f.to, u),
                (&one.cat, &one.from, &one.to, u1)
            );
        }
    }

    /// From any hint, the answer `partition_point` gives, on starts with runs of ties.
    #[test]
    fn a_search_from_a_hint_is_partition_point() {
        let mut rnd = super::super::rng(0x9e37_79b9_7f4a_7c15);
        for n in [0usize, 1, 2, 3, 17, 300] {
            let mut starts = Vec::with_capacity(n);
            let mut t = 0i64;
            for _ in 0..n {
                t += rnd(3) as i64;
                starts.push(t);
            }
            for ts in -2..t + 3 {
                let want = starts.partition_point(|&x| x <= ts);
                for hint in 0..n + 3 {
                    assert_eq!(upper_bound_from(&starts, ts, hint), want, "{n} {ts} {hint}");
                }
            }
        }
    }
}
