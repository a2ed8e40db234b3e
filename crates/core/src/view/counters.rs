//! Counter tracks: memory allocated / reserved per device (from `[memory]` events), `ph: C`
//! counters, and GPU utilization per device (kernel busy time, the Overview's definition).
//!
//! Step series carry a min/max pyramid so a zoomed-out frame reads one min/max per pixel column
//! in O(log n), whatever the number of samples. Utilization is the busy fraction of each pixel's
//! time range, from the union of device work with prefix sums (also O(log n) per column).

use crate::analysis::gpu::{kernel_devices, kernel_runs};
use crate::model::Trace;
pub use crate::view::pyramid::PyramidBuild;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    /// 0..=1, drawn as a percentage.
    Fraction,
    Plain,
}

/// A value that holds from its timestamp until the next one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepSeries {
    pub ts: Vec<i64>,
    pub value: Vec<f64>,
    /// `pyramid[k - 1][j]` = (min, max) of `value[j·2^k .. (j+1)·2^k]`, for k ≥ 1: level 0 is
    /// `value` itself (stored as pairs it was a third of the page's memory tracks).
    pyramid: Vec<Vec<(f64, f64)>>,
}

impl StepSeries {
    pub fn new(ts: Vec<i64>, value: Vec<f64>) -> StepSeries {
        let pairs = |c: &[(f64, f64)]| {
            c.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, b| {
                (a.0.min(b.0), a.1.max(b.1))
            })
        };
        let mut pyramid = Vec::new();
        if value.len() > 1 {
            let mut level: Vec<(f64, f64)> = value
                .chunks(2)
                .map(|c| {
                    c.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, &b| {
                        (a.0.min(b), a.1.max(b))
                    })
                })
                .collect();
            while level.len() > 1 {
                let next = level.chunks(2).map(pairs).collect();
                pyramid.push(level);
                level = next;
            }
            pyramid.push(level);
        }
        StepSeries { ts, value, pyramid }
    }

    /// The series of `ts` and `value` with the pyramid [`PyramidBuild`] made of the values.
    pub fn with_pyramid(ts: Vec<i64>, value: Vec<f64>, p: PyramidBuild) -> StepSeries {
        let pyramid = p.finish(value.len());
        StepSeries { ts, value, pyramid }
    }

    /// (min, max) of block `j` of level `k` ([`StepSeries::pyramid`]).
    fn block(&self, k: usize, j: usize) -> Option<(f64, f64)> {
        match k.checked_sub(1) {
            None => self.value.get(j).map(|&v| (v, v)),
            Some(k) => self.pyramid.get(k)?.get(j).copied(),
        }
    }

    /// Min and max of the values in effect during `[a, b)`, or `None` before the first sample.
    pub fn range(&self, a: i64, b: i64) -> Option<(f64, f64)> {
        let p = self.ts.partition_point(|&t| t <= a);
        let mut l = p.saturating_sub(1);
        let mut r = self.ts.partition_point(|&t| t < b);
        if p == 0 && r == 0 {
            return None;
        }
        if r <= l {
            r = l + 1;
        }
        let mut acc = (f64::INFINITY, f64::NEG_INFINITY);
        for k in 0..=self.pyramid.len() {
            if l >= r {
                break;
            }
            if l & 1 == 1 {
                if let Some(v) = self.block(k, l) {
                    acc = (acc.0.min(v.0), acc.1.max(v.1));
                }
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                if let Some(v) = self.block(k, r) {
                    acc = (acc.0.min(v.0), acc.1.max(v.1));
                }
            }
            l >>= 1;
            r >>= 1;
        }
        acc.0.is_finite().then_some(acc)
    }
}

/// Union of busy intervals with the busy time before each, for utilization.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BusySeries {
    /// Disjoint `(start, end)`, sorted.
    iv: Vec<(i64, i64)>,
    /// Busy ns before interval `k · BUSY_BLOCK`: one figure a block instead of one an interval (a
    /// third of the track's memory), the rest summed at the query, under `BUSY_BLOCK` intervals.
    prefix: Vec<i64>,
}

/// Intervals per [`BusySeries::prefix`] figure.
const BUSY_BLOCK: usize = 32;

impl BusySeries {
    /// From unsorted, possibly overlapping intervals.
    pub fn new(mut iv: Vec<(i64, i64)>) -> BusySeries {
        iv.sort_unstable();
        BusySeries::from_runs(&[iv.into_iter()])
    }

    /// The union of intervals that come as runs each sorted by start, merged as they come: no
    /// list of them all and no sort's scratch, and the columns made at their final size (the
    /// runs are read twice, to count the union first).
    pub fn from_runs<I: Iterator<Item = (i64, i64)> + Clone>(runs: &[I]) -> BusySeries {
        BusySeries::from_counted_runs(runs, BusySeries::union_len(runs))
    }

    /// How many intervals the union of `runs` has: [`BusySeries::from_runs`]'s first pass, which
    /// a page runs in a task of its own (together they were one of ~60 ms on a 1 GB trace).
    pub fn union_len<I: Iterator<Item = (i64, i64)> + Clone>(runs: &[I]) -> usize {
        union_of_runs(runs, |_| {})
    }

    /// [`BusySeries::from_runs`]'s second pass, given the first's count.
    pub fn from_counted_runs<I: Iterator<Item = (i64, i64)> + Clone>(
        runs: &[I],
        n: usize,
    ) -> BusySeries {
        let mut iv = Vec::with_capacity(n);
        union_of_runs(runs, |x| iv.push(x));
        BusySeries::from_union(iv)
    }

    /// From the sorted, disjoint intervals of a union (what [`BusySeries::intervals`] gives).
    pub fn from_union(iv: Vec<(i64, i64)>) -> BusySeries {
        // One figure a block, and the total after the last (a query past the end of a list of
        // whole blocks reads it).
        let mut prefix = Vec::with_capacity(iv.len() / BUSY_BLOCK + 2);
        prefix.push(0);
        BusySeries::prefix_of(&iv, 0, &mut prefix);
        BusySeries { iv, prefix }
    }

    /// Appends to `prefix` the busy time after each block of [`BUSY_BLOCK`] intervals of `iv`
    /// (the last one partial), counting from `acc`; returns the total. `iv` taken a whole number
    /// of blocks at a time gives what one call over all of it gives: a page builds the prefix of
    /// a series that arrives in pieces a piece at a time ([`BusySeries::from_prefix`]).
    pub fn prefix_of(iv: &[(i64, i64)], mut acc: i64, prefix: &mut Vec<i64>) -> i64 {
        for c in iv.chunks(BUSY_BLOCK) {
            acc += c.iter().map(|&(s, e)| e - s).sum::<i64>();
            prefix.push(acc);
        }
        acc
    }

    /// The series of sorted, disjoint `iv` and the `prefix` made for them by
    /// [`BusySeries::prefix_of`] after a 0; `None` when its length does not fit theirs.
    pub fn from_prefix(iv: Vec<(i64, i64)>, prefix: Vec<i64>) -> Option<BusySeries> {
        (prefix.len() == iv.len().div_ceil(BUSY_BLOCK) + 1).then_some(BusySeries { iv, prefix })
    }

    /// Intervals per prefix figure, which pieces of a series must be a multiple of.
    pub const BLOCK: usize = BUSY_BLOCK;

    /// The union's intervals: sorted, disjoint.
    pub fn intervals(&self) -> &[(i64, i64)] {
        &self.iv
    }

    /// Busy ns before `t`.
    pub fn busy_before(&self, t: i64) -> i64 {
        let i = self.iv.partition_point(|&(_, e)| e <= t);
        let block = i / BUSY_BLOCK;
        let done = self.prefix.get(block).copied().unwrap_or(0)
            + self.iv[block * BUSY_BLOCK..i]
                .iter()
                .map(|&(s, e)| e - s)
                .sum::<i64>();
        let partial = match self.iv.get(i) {
            Some(&(s, _)) if s < t => t - s,
            _ => 0,
        };
        done + partial
    }

    /// Fraction of `[a, b)` that is busy.
    pub fn fraction(&self, a: i64, b: i64) -> f64 {
        if b <= a {
            return 0.0;
        }
        (self.busy_before(b) - self.busy_before(a)) as f64 / (b - a) as f64
    }
}

/// Merges `runs` (each sorted by start) by start and hands `out` their union's intervals in order;
/// returns how many.
fn union_of_runs<I: Iterator<Item = (i64, i64)> + Clone>(
    runs: &[I],
    mut out: impl FnMut((i64, i64)),
) -> usize {
    use std::cmp::Reverse;
    let mut runs: Vec<I> = runs.to_vec();
    let mut heads = std::collections::BinaryHeap::new();
    for (k, r) in runs.iter_mut().enumerate() {
        if let Some((s, e)) = r.next() {
            heads.push(Reverse((s, e, k)));
        }
    }
    let (mut n, mut cur): (usize, Option<(i64, i64)>) = (0, None);
    while let Some(Reverse((s, e, k))) = heads.pop() {
        if let Some(next) = runs.get_mut(k).and_then(Iterator::next) {
            heads.push(Reverse((next.0, next.1, k)));
        }
        match &mut cur {
            Some(c) if s <= c.1 => c.1 = c.1.max(e),
            c => {
                if let Some(done) = c.replace((s, e)) {
                    out(done);
                    n += 1;
                }
            }
        }
    }
    if let Some(done) = cur {
        out(done);
        n += 1;
    }
    n
}

#[derive(Clone, Debug, PartialEq)]
pub enum SeriesData {
    Step(StepSeries),
    Busy(BusySeries),
}

#[derive(Clone, Debug, PartialEq)]
pub struct CounterTrack {
    pub label: String,
    pub unit: Unit,
    /// Largest value, for the vertical scale (1 for fractions).
    pub max: f64,
    pub data: SeriesData,
}

/// Every counter track of a trace: memory first, then utilization, then `ph: C` counters.
/// Every counter track of `t`: [`memory_tracks`], [`utilization_tracks`] and the trace's own
/// counters, in that order (the page builds them one per task: each is a pass over its events).
pub fn counter_tracks(t: &Trace) -> Vec<CounterTrack> {
    let mut out = memory_tracks(t);
    out.extend(utilization_tracks(t));
    out.extend(plain_counters(t));
    out
}

fn device_name(device_type: i16, id: i16) -> String {
    match device_type {
        0 => "CPU".to_owned(),
        1 => format!("GPU {id}"),
        d => format!("device type {d}:{id}"),
    }
}

pub fn memory_tracks(t: &Trace) -> Vec<CounterTrack> {
    let m = &t.memory;
    let mut keys: Vec<(i16, i16)> = (0..m.ts.len())
        .map(|i| (m.device_type[i], m.device_id[i]))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut out = Vec::new();
    for (dt, id) in keys {
        let mut rows: Vec<usize> = (0..m.ts.len())
            .filter(|&i| m.device_type[i] == dt && m.device_id[i] == id)
            .collect();
        crate::sort::by_key(&mut rows, |&i| (m.ts[i], i));
        let ts: Vec<i64> = rows.iter().map(|&i| m.ts[i]).collect();
        for (what, col) in [
            ("allocated", &m.total_allocated),
            ("reserved", &m.total_reserved),
        ] {
            let value: Vec<f64> = rows.iter().map(|&i| col[i] as f64).collect();
            let max = value.iter().copied().fold(0.0, f64::max);
            // All zero is not data (old traces write `[memory]` events without totals): a
            // "max 0 B" track would read as a measurement.
            if max <= 0.0 {
                continue;
            }
            out.push(CounterTrack {
                label: format!("Memory {what} ({})", device_name(dt, id)),
                unit: Unit::Bytes,
                max,
                data: SeriesData::Step(StepSeries::new(ts.clone(), value)),
            });
        }
    }
    out
}

/// One "GPU N utilization" track per device: the busy fraction of each pixel's time range, with
/// the Overview's definition ([`crate::analysis::gpu::kernel_intervals_by_device`]: kernels only,
/// unknown device apart).
pub fn utilization_tracks(t: &Trace) -> Vec<CounterTrack> {
    kernel_devices(t)
        .into_iter()
        .map(|d| utilization_track(d, BusySeries::from_runs(&kernel_runs(t, d))))
        .collect()
}

/// Device `d`'s utilization track, from its kernels' busy series.
pub fn utilization_track(d: i64, busy: BusySeries) -> CounterTrack {
    CounterTrack {
        label: if d >= 0 {
            format!("GPU {d} utilization")
        } else {
            "GPU (unknown device) utilization".to_owned()
        },
        unit: Unit::Fraction,
        max: 1.0,
        data: SeriesData::Busy(busy),
    }
}

pub fn plain_counters(t: &Trace) -> Vec<CounterTrack> {
    let c = &t.counters;
    (0..c.series_name.len())
        .filter_map(|k| {
            let mut rows: Vec<usize> = (0..c.ts.len())
                .filter(|&i| c.series[i] as usize == k)
                .collect();
            if rows.is_empty() {
                return None;
            }
            crate::sort::by_key(&mut rows, |&i| (c.ts[i], i));
            let ts = rows.iter().map(|&i| c.ts[i]).collect();
            let value: Vec<f64> = rows.iter().map(|&i| c.value[i]).collect();
            let max = value.iter().copied().fold(0.0, f64::max);
            Some(CounterTrack {
                label: t.str(c.series_name[k]).to_owned(),
                unit: Unit::Plain,
                max,
                data: SeriesData::Step(StepSeries::new(ts, value)),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pyramid made a piece at a time is the one made at once, whatever the length against
    /// the piece (shorter, equal, one more, many pieces with a short last one).
    #[test]
    fn a_pyramid_made_in_pieces_is_the_one_made_at_once() {
        for log in [1u32, 3, 4] {
            let piece = 1usize << log;
            for n in (0..70).chain([128, 129, 255, 256, 257, 1000]) {
                let v: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1013) as f64 - 300.0).collect();
                let ts: Vec<i64> = (0..n as i64).collect();
                let mut p = PyramidBuild::new(log);
                for c in v.chunks(piece) {
                    p.push(c);
                }
                let got = StepSeries::with_pyramid(ts.clone(), v.clone(), p);
                assert_eq!(got, StepSeries::new(ts, v), "log {log}, n {n}");
            }
        }
    }

    #[test]
    fn step_range_sees_the_value_in_effect_and_every_sample_inside() {
        let s = StepSeries::new(vec![0, 10, 20, 30, 40], vec![5.0, 1.0, 9.0, 2.0, 3.0]);
        assert_eq!(s.range(12, 15), Some((1.0, 1.0)));
        assert_eq!(s.range(12, 31), Some((1.0, 9.0)));
        assert_eq!(s.range(-10, 100), Some((1.0, 9.0)));
        assert_eq!(s.range(-10, -5), None);
        assert_eq!(s.range(45, 50), Some((3.0, 3.0)));
        // Brute force against the pyramid on longer series, odd lengths too.
        for n in [1000i64, 333, 2, 1] {
            let ts: Vec<i64> = (0..n).map(|i| i * 3).collect();
            let v: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64).collect();
            let s = StepSeries::new(ts.clone(), v.clone());
            let windows = (0..3 * n)
                .step_by(37)
                .flat_map(|a| [1, 2, 5, 64, 700, 3000].map(|w| (a, a + w)));
            for (a, b) in [(0, 3000), (17, 400), (299, 301), (2990, 5000)]
                .into_iter()
                .chain(windows)
            {
                let lo = ts.partition_point(|&t| t <= a).saturating_sub(1);
                let hi = ts.partition_point(|&t| t < b).max(lo + 1).min(ts.len());
                let mn = v[lo..hi].iter().copied().fold(f64::INFINITY, f64::min);
                let mx = v[lo..hi].iter().copied().fold(f64::NEG_INFINITY, f64::max);
                assert_eq!(s.range(a, b), Some((mn, mx)), "n {n} [{a},{b})");
            }
        }
    }

    #[test]
    fn runs_merged_as_they_come_give_the_union_of_all() {
        let mut x: u64 = 99;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % m) as i64
        };
        for _ in 0..50 {
            let runs: Vec<Vec<(i64, i64)>> = (0..next(6))
                .map(|_| {
                    let mut at = next(20);
                    (0..next(30))
                        .map(|_| {
                            at += next(8);
                            (at, at + next(12))
                        })
                        .collect()
                })
                .collect();
            let all: Vec<(i64, i64)> = runs.iter().flatten().copied().collect();
            let merged =
                BusySeries::from_runs(&runs.iter().map(|r| r.iter().copied()).collect::<Vec<_>>());
            let sorted = BusySeries::new(all.clone());
            assert_eq!(merged.iv, sorted.iv, "{runs:?}");
            assert_eq!(merged.prefix, sorted.prefix);
            assert_eq!(merged.iv.capacity(), merged.iv.len());
        }
    }

    /// The page's utilization track (runs per stream) against the Overview's kernel intervals
    /// per device, on kernels of two devices over three streams, one claimed by its arg only.
    #[test]
    fn utilization_track_is_the_union_of_each_devices_kernels() {
        let ev = [
            r#"{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":0,"dur":10,"args":{"device":0,"stream":7}}"#,
            r#"{"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":12,"dur":10,"args":{"device":0,"stream":7}}"#,
            r#"{"ph":"X","cat":"kernel","name":"c","pid":0,"tid":9,"ts":5,"dur":10,"args":{"device":0,"stream":9}}"#,
            r#"{"ph":"X","cat":"kernel","name":"d","pid":0,"tid":9,"ts":40,"dur":5,"args":{"device":0,"stream":9}}"#,
            r#"{"ph":"X","cat":"gpu_memcpy","name":"m","pid":0,"tid":9,"ts":60,"dur":50,"args":{"device":0,"stream":9}}"#,
            r#"{"ph":"X","cat":"kernel","name":"e","pid":1,"tid":3,"ts":2,"dur":3,"args":{"device":1,"stream":3}}"#,
            r#"{"ph":"X","cat":"kernel","name":"f","pid":0,"tid":9,"ts":100,"dur":5,"args":{"device":1,"stream":9}}"#,
        ];
        let t = crate::view::testutil::trace_json(&ev.join(","));
        let tracks = utilization_tracks(&t);
        let by_dev = crate::analysis::gpu::kernel_intervals_by_device(&t);
        assert_eq!(tracks.len(), by_dev.len());
        for (tr, (d, iv)) in tracks.iter().zip(by_dev) {
            let SeriesData::Busy(b) = &tr.data else {
                panic!("not a busy series")
            };
            assert_eq!(b.iv, BusySeries::new(iv).iv, "device {d}");
        }
        let SeriesData::Busy(b0) = &tracks[0].data else {
            panic!("not a busy series")
        };
        // Device 0: a, b and c overlap into [0, 22 us), d alone, the memcpy no kernel, and f on
        // device 0's stream 9 though its arg says 1 (claimed by both, as the Overview counts it).
        assert_eq!(
            b0.iv,
            vec![(0, 22_000), (40_000, 45_000), (100_000, 105_000)]
        );
    }

    /// Lists of whole blocks and of a block and a bit, queried at every point.
    #[test]
    fn busy_time_before_any_point_of_many_intervals() {
        for n in [31i64, 32, 64, 65, 100] {
            let iv: Vec<(i64, i64)> = (0..n).map(|k| (10 * k, 10 * k + 1 + k % 7)).collect();
            let b = BusySeries::new(iv.clone());
            assert_eq!(b.iv.len() as i64, n);
            for t in -5..10 * n + 20 {
                let want: i64 = iv.iter().map(|&(s, e)| (e.min(t) - s).max(0)).sum();
                assert_eq!(b.busy_before(t), want, "n {n} t {t}");
            }
        }
    }

    #[test]
    fn busy_fraction_unions_overlaps() {
        let b = BusySeries::new(vec![(10, 20), (15, 30), (50, 60)]);
        assert_eq!(b.iv, vec![(10, 30), (50, 60)]);
        assert_eq!(b.busy_before(100), 30);
        assert_eq!(b.fraction(0, 100), 0.3);
        assert_eq!(b.fraction(20, 25), 1.0);
        assert_eq!(b.fraction(30, 50), 0.0);
        assert_eq!(b.fraction(5, 5), 0.0);
    }

    #[test]
    fn busy_time_is_the_covered_time_of_any_intervals() {
        // Pseudo-random intervals on a small axis against the definition: a point is busy when
        // some interval covers it, so the busy time before t counts the covered unit cells.
        let mut x = 12345u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % m) as i64
        };
        for _ in 0..200 {
            let iv: Vec<(i64, i64)> = (0..next(12))
                .map(|_| {
                    let s = next(60);
                    (s, s + next(15))
                })
                .collect();
            let b = BusySeries::new(iv.clone());
            assert!(b.iv.windows(2).all(|w| w[0].1 < w[1].0), "{iv:?}");
            for t in 0..=80 {
                let covered = (0..t)
                    .filter(|&c| iv.iter().any(|&(s, e)| s <= c && c < e))
                    .count() as i64;
                assert_eq!(b.busy_before(t), covered, "{iv:?} before {t}");
            }
        }
    }

    #[test]
    fn utilization_counts_kernels_per_device_like_the_overview() {
        use crate::analysis::gpu::gpu_summary;
        use crate::view::testutil::trace_json;
        // Device 1: a 40 µs kernel and a 40 µs memcpy after it; a 10 µs kernel with no device
        // anywhere (pid "gpu", no `device` arg) must not land on device 0.
        let t = trace_json(concat!(
            r#"{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":7,"ts":0,"dur":40,"args":{"device":1,"stream":7}},"#,
            r#"{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":1,"tid":7,"ts":50,"dur":40,"args":{"device":1,"stream":7}},"#,
            r#"{"ph":"X","cat":"kernel","name":"k2","pid":"gpu","tid":"s","ts":0,"dur":10}"#
        ));
        let tracks = utilization_tracks(&t);
        let labels: Vec<&str> = tracks.iter().map(|c| c.label.as_str()).collect();
        assert!(labels.contains(&"GPU 1 utilization"), "{labels:?}");
        assert!(!labels.contains(&"GPU 0 utilization"), "{labels:?}");
        let gpu1 = tracks.iter().find(|c| c.label == "GPU 1 utilization");
        let Some(SeriesData::Busy(b)) = gpu1.map(|c| &c.data) else {
            panic!("no busy series for GPU 1");
        };
        // Kernel time only: 40 of the first 100 µs (the memcpy's 40 µs are not utilization).
        assert_eq!(b.fraction(0, 100_000), 0.4);
        // The same busy time the Overview's utilization counts for device 1.
        let g = gpu_summary(&t);
        let d1 = g.devices.iter().find(|d| d.device == 1).map(|d| d.busy_ns);
        assert_eq!(d1, Some(b.busy_before(i64::MAX)));
    }

    /// The 2021 V100 ResNet trace writes `[memory]` events whose totals are all 0: no "max 0 B"
    /// track for them, while a device whose total moves gets one (reserved only when recorded).
    #[test]
    fn memory_tracks_only_for_totals_that_were_recorded() {
        use crate::view::testutil::trace_json;
        let m = |dev: i64, ts: i64, total: i64| {
            format!(
                r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{ts},"args":{{"Device Type":1,"Device Id":{dev},"Addr":1,"Bytes":0,"Total Allocated":{total},"Total Reserved":0}}}}"#
            )
        };
        let t = trace_json(&[m(0, 1, 0), m(0, 2, 0), m(1, 1, 0), m(1, 2, 4096)].join(","));
        let labels: Vec<String> = memory_tracks(&t).into_iter().map(|c| c.label).collect();
        assert_eq!(labels.len(), 1, "{labels:?}");
        assert!(
            labels[0].starts_with("Memory allocated") && labels[0].contains('1'),
            "{labels:?}"
        );
    }
}
