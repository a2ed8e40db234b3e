//! The slices' display order: every track's slices together, each track by start, the longer
//! first on equal starts, then as read. The finish puts every slice column in this order.

use super::staged::StagedSlices;
use crate::model::Ns;

impl StagedSlices {
    /// The slices' display order, every track's slices together (`tracks`: one past the largest
    /// track number): by track, then start, the longer first on equal starts, then as read.
    ///
    /// Bucketed by track (stable), then each track sorted by start ([`sort_nearly`]: by
    /// insertion while the file's near order keeps that linear, else a stable sort). One
    /// comparison sort of the whole table by (track, start, duration, index) cost ~170 ns a slice
    /// natively (360 ms of a 1 GB trace's 590 ms finish) and 16 bytes a slice beside the columns.
    pub fn display_order(&self, tracks: usize) -> Vec<u32> {
        let n = self.len();
        let mut first = vec![0u32; tracks + 1];
        for &t in self.track.values() {
            first[t as usize + 1] += 1;
        }
        for t in 0..tracks {
            first[t + 1] += first[t];
        }
        let mut order = vec![0u32; n];
        let mut at = first.clone();
        for (i, t) in self.track.values().enumerate() {
            let slot = &mut at[*t as usize];
            order[*slot as usize] = i as u32;
            *slot += 1;
        }
        // Tracks are sorted apart, on every core (`par::all`): groups of whole tracks of at least
        // `GROUP` slices each, the biggest group first.
        const GROUP: usize = 1 << 16;
        let mut groups: Vec<(usize, Vec<&mut [u32]>)> = Vec::new();
        let mut rest: &mut [u32] = &mut order;
        for t in 0..tracks {
            let (idx, tail) = rest.split_at_mut((first[t + 1] - first[t]) as usize);
            rest = tail;
            if idx.len() < 2 {
                continue;
            }
            match groups.last_mut() {
                Some((size, g)) if *size < GROUP => {
                    *size += idx.len();
                    g.push(idx);
                }
                _ => groups.push((idx.len(), vec![idx])),
            }
        }
        groups.sort_by_key(|g| std::cmp::Reverse(g.0));
        let jobs = groups
            .into_iter()
            .map(|(_, g)| Box::new(move || self.sort_tracks(g)) as crate::par::Job<'_>)
            .collect();
        crate::par::all_over(n, jobs);
        order
    }

    /// Each track's slices (indices, as read) by start, the longer first on equal starts.
    fn sort_tracks(&self, tracks: Vec<&mut [u32]>) {
        let mut keys: Vec<(Ns, u32)> = Vec::new();
        for idx in tracks {
            keys.clear();
            keys.extend(idx.iter().map(|&i| (self.start.get(i as usize), i)));
            sort_nearly(&mut keys, |a, b| {
                a.0.cmp(&b.0)
                    .then_with(|| self.dur.get(b.1 as usize).cmp(&self.dur.get(a.1 as usize)))
            });
            for (o, k) in idx.iter_mut().zip(&keys) {
                *o = k.1;
            }
        }
    }
}

/// Sorts `v` as the stable `v.sort_by(cmp)` does, by insertion while that stays linear: a
/// track's slices come nearly in order (Kineto writes an op after the ops it encloses: one slice
/// in fourteen out of place on a synthetic trace's main thread), where the stable sort still
/// merged runs of ~14 up the levels (~58 ms of a 1 GB trace's finish in V8). Once the moves pass
/// eight a value the rest goes to `sort_by`; insertion moves a value only past greater ones, so
/// equal values keep their order and the result is the same.
fn sort_nearly<T: Copy>(v: &mut [T], cmp: impl Fn(&T, &T) -> std::cmp::Ordering) {
    let budget = v.len() * 8 + 64;
    let mut moved = 0;
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && cmp(&x, &v[j - 1]) == std::cmp::Ordering::Less {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
        moved += i - j;
        if moved > budget {
            v.sort_by(cmp);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::staged::CHUNK;
    use super::*;

    #[test]
    fn nearly_sorted_is_the_stable_sort() {
        let mut rnd = super::super::rng(0x2545_f491_4f6c_dd1d);
        for case in 0..40 {
            let n = [0, 1, 2, 15, 300, 5000][case % 6];
            // (key, original place): the sort compares keys only, so places show stability.
            let keys: Vec<u32> = match case % 4 {
                // In order but for a parent after its children, now and then a long way back.
                0 => (0..n as u32)
                    .map(|i| {
                        if rnd(14) == 0 {
                            i.saturating_sub(rnd(200) as u32)
                        } else {
                            i
                        }
                    })
                    .collect(),
                // Reversed: past the budget, then the stable sort.
                1 => (0..n as u32).rev().collect(),
                // Few distinct keys, many ties.
                2 => (0..n).map(|_| rnd(4) as u32).collect(),
                _ => (0..n).map(|_| rnd(1000) as u32).collect(),
            };
            let mut v: Vec<(u32, u32)> = keys.into_iter().zip(0..).collect();
            let mut want = v.clone();
            want.sort_by_key(|a| a.0);
            sort_nearly(&mut v, |a, b| a.0.cmp(&b.0));
            assert_eq!(v, want, "case {case}");
        }
    }

    /// `display_order` against its definition, one sort of every slice by (track, start, longer
    /// first, index), on tracks interleaved across chunks, with runs, reversals and ties.
    #[test]
    fn display_order_is_one_sort_by_track_start_longer_first_index() {
        let mut rnd = super::super::rng(0x9e37_79b9_7f4a_7c15);
        // The last round has tracks enough for groups of several tracks on different threads.
        for round in 0..7 {
            let tracks = if round == 6 { 300 } else { 1 + rnd(7) as usize };
            let n = [0, 1, 5, 300, CHUNK + 17, 2 * CHUNK + 3, 3 * CHUNK + 5][round];
            let mut st = StagedSlices::default();
            let mut clock = vec![0i64; tracks];
            for _ in 0..n {
                let t = rnd(tracks as u64) as usize;
                // Mostly forward in time, sometimes back, often the same start.
                match rnd(10) {
                    0 => clock[t] -= rnd(50) as i64,
                    1..=3 => {}
                    _ => clock[t] += rnd(20) as i64,
                }
                st.track.push(t as u32);
                st.start.push(clock[t]);
                st.dur.push(rnd(4) as i64);
            }
            let mut want: Vec<u32> = (0..n as u32).collect();
            want.sort_by(|&a, &b| {
                let (a, b) = (a as usize, b as usize);
                (st.track.get(a), st.start.get(a))
                    .cmp(&(st.track.get(b), st.start.get(b)))
                    .then(st.dur.get(b).cmp(&st.dur.get(a)))
                    .then(a.cmp(&b))
            });
            assert_eq!(st.display_order(tracks), want, "round {round}");
        }
    }
}
