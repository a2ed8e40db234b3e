//! Counter tracks: memory allocated / reserved per device (from `[memory]` events), `ph: C`
//! counters, and GPU utilization per device (kernel busy time, the Overview's definition).
//!
//! Step series carry a min/max pyramid so a zoomed-out frame reads one min/max per pixel column
//! in O(log n), whatever the number of samples. Utilization is the busy fraction of each pixel's
//! time range, from the union of device work with prefix sums (also O(log n) per column).

use crate::analysis::gpu::kernel_intervals_by_device;
use crate::model::Trace;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    /// 0..=1, drawn as a percentage.
    Fraction,
    Plain,
}

/// A value that holds from its timestamp until the next one.
#[derive(Clone, Debug, Default)]
pub struct StepSeries {
    pub ts: Vec<i64>,
    pub value: Vec<f64>,
    /// `pyramid[k][j]` = (min, max) of `value[j·2^k .. (j+1)·2^k]`.
    pyramid: Vec<Vec<(f64, f64)>>,
}

impl StepSeries {
    pub fn new(ts: Vec<i64>, value: Vec<f64>) -> StepSeries {
        let mut level: Vec<(f64, f64)> = value.iter().map(|&v| (v, v)).collect();
        let mut pyramid = Vec::new();
        while level.len() > 1 {
            let next = level
                .chunks(2)
                .map(|c| {
                    c.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, b| {
                        (a.0.min(b.0), a.1.max(b.1))
                    })
                })
                .collect();
            pyramid.push(level);
            level = next;
        }
        pyramid.push(level);
        StepSeries { ts, value, pyramid }
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
        for lvl in &self.pyramid {
            if l >= r {
                break;
            }
            if l & 1 == 1 {
                if let Some(v) = lvl.get(l) {
                    acc = (acc.0.min(v.0), acc.1.max(v.1));
                }
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                if let Some(v) = lvl.get(r) {
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
#[derive(Clone, Debug, Default)]
pub struct BusySeries {
    pub start: Vec<i64>,
    pub end: Vec<i64>,
    prefix: Vec<i64>,
}

impl BusySeries {
    /// From unsorted, possibly overlapping intervals.
    pub fn new(mut iv: Vec<(i64, i64)>) -> BusySeries {
        // Stable sort: the intervals usually come as one sorted run per stream, which it merges
        // (O(n log runs)); the unstable sort re-sorted them whole (46 ms of a page task on 1 GB).
        iv.sort();
        // The union first, in place, so the three columns are made at their final size: grown by
        // doubling beside the interval list, they held up to twice that size at once (wasm memory
        // never shrinks; this ran in the page's timeline index on every trace).
        let mut n = 0usize;
        for k in 0..iv.len() {
            let (s, e) = iv[k];
            match n.checked_sub(1).and_then(|last| iv.get_mut(last)) {
                Some(prev) if s <= prev.1 => prev.1 = prev.1.max(e),
                _ => {
                    iv[n] = (s, e);
                    n += 1;
                }
            }
        }
        iv.truncate(n);
        let mut b = BusySeries {
            start: Vec::with_capacity(n),
            end: Vec::with_capacity(n),
            prefix: Vec::with_capacity(n),
        };
        let mut acc = 0i64;
        for (s, e) in iv {
            b.prefix.push(acc);
            b.start.push(s);
            b.end.push(e);
            acc += e - s;
        }
        b
    }

    /// Busy ns before `t`.
    pub fn busy_before(&self, t: i64) -> i64 {
        let i = self.end.partition_point(|&e| e <= t);
        let done = match i.checked_sub(1) {
            Some(j) => self.prefix[j] + (self.end[j] - self.start[j]),
            None => 0,
        };
        let partial = match self.start.get(i) {
            Some(&s) if s < t => t - s,
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

#[derive(Clone, Debug)]
pub enum SeriesData {
    Step(StepSeries),
    Busy(BusySeries),
}

#[derive(Clone, Debug)]
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
/// the Overview's definition ([`kernel_intervals_by_device`]: kernels only, unknown device apart).
pub fn utilization_tracks(t: &Trace) -> Vec<CounterTrack> {
    kernel_intervals_by_device(t)
        .into_iter()
        .map(|(d, iv)| CounterTrack {
            label: if d >= 0 {
                format!("GPU {d} utilization")
            } else {
                "GPU (unknown device) utilization".to_owned()
            },
            unit: Unit::Fraction,
            max: 1.0,
            data: SeriesData::Busy(BusySeries::new(iv)),
        })
        .collect()
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

    #[test]
    fn step_range_sees_the_value_in_effect_and_every_sample_inside() {
        let s = StepSeries::new(vec![0, 10, 20, 30, 40], vec![5.0, 1.0, 9.0, 2.0, 3.0]);
        assert_eq!(s.range(12, 15), Some((1.0, 1.0)));
        assert_eq!(s.range(12, 31), Some((1.0, 9.0)));
        assert_eq!(s.range(-10, 100), Some((1.0, 9.0)));
        assert_eq!(s.range(-10, -5), None);
        assert_eq!(s.range(45, 50), Some((3.0, 3.0)));
        // Brute force against the pyramid on a longer series.
        let ts: Vec<i64> = (0..1000).map(|i| i * 3).collect();
        let v: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 1000) as f64).collect();
        let s = StepSeries::new(ts.clone(), v.clone());
        for (a, b) in [(0, 3000), (17, 400), (299, 301), (2990, 5000)] {
            let lo = ts.partition_point(|&t| t <= a).saturating_sub(1);
            let hi = ts.partition_point(|&t| t < b).max(lo + 1);
            let mn = v[lo..hi].iter().copied().fold(f64::INFINITY, f64::min);
            let mx = v[lo..hi].iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(s.range(a, b), Some((mn, mx)), "[{a},{b})");
        }
    }

    #[test]
    fn busy_fraction_unions_overlaps() {
        let b = BusySeries::new(vec![(10, 20), (15, 30), (50, 60)]);
        assert_eq!(b.start, vec![10, 50]);
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
            assert!(b.start.windows(2).all(|w| w[0] < w[1]), "{iv:?}");
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
