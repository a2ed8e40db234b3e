//! Flow events (`s`/`f`, Kineto's `ac2g` and `fwdbwd` arrows) paired into slice → slice links
//! once the slices are in display order and nested.

use super::build::FlowEnd;
use crate::model::{Flows, Slices, Track};
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
    pair_in(runs, ends, idx, tracks, slices)
}

/// [`pair`] cut into `runs` runs.
fn pair_in(
    runs: usize,
    ends: &[FlowEnd],
    idx: &[u32],
    tracks: &[Track],
    slices: &Slices,
) -> (Flows, u64) {
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
            Box::new(move || *o = pair_run(ends, run, tracks, slices)) as par::Job<'_>
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

fn pair_run(ends: &[FlowEnd], idx: &[u32], tracks: &[Track], slices: &Slices) -> (Flows, u64) {
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
            match (
                endpoint_slice(tracks, slices, &ends[sk as usize]),
                endpoint_slice(tracks, slices, &ends[fk as usize]),
            ) {
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
fn endpoint_slice(tracks: &[Track], s: &Slices, e: &FlowEnd) -> Option<u32> {
    let tr = tracks.get(e.track as usize)?;
    let (a, b) = (tr.first as usize, (tr.first + tr.count) as usize);
    let starts = s.start.get(a..b)?;
    let ub = starts.partition_point(|&x| x <= e.ts);
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
        let (one, u1) = pair_in(1, &ends, &idx, &tracks, &slices);
        assert!(one.from.len() > 200 && u1 > 100, "{} {u1}", one.from.len());
        for runs in [2, 3, 7, 64, 5000] {
            let (f, u) = pair_in(runs, &ends, &idx, &tracks, &slices);
            assert_eq!(
                (&f.cat, &f.from, &f.to, u),
                (&one.cat, &one.from, &one.to, u1)
            );
        }
    }
}
