//! The memory overlay of a comparison: A's and B's allocated-memory curves (Kineto `[memory]`
//! events) on one relative time axis, each from its first step's start (else its first event),
//! for the device the headline peak is on ([`headline_peak`]: the largest non-CPU peak, else the
//! CPU), so the overlay's peaks are the diff's `memory.peak_allocated_bytes`.

use crate::analysis::memory::{curve, headline_peak, memory_summary};
use crate::analysis::steps::steps;
use crate::ingest::memory_timeline::{MemoryTimeline, CATEGORIES};
use crate::model::Trace;

/// One side's curve: ns since its origin and allocated bytes, in time order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OverlayCurve {
    /// `CPU` or `cuda:N`.
    pub device: String,
    pub x: Vec<i64>,
    pub y: Vec<u64>,
    /// `(x, bytes)` of the largest value.
    pub peak: (i64, u64),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct MemoryOverlay {
    pub a: OverlayCurve,
    pub b: OverlayCurve,
    /// The longer side's last x, and the larger peak: the shared axes.
    pub x_max: i64,
    pub y_max: u64,
}

/// The curve of the headline device of `t`, `None` without `[memory]` totals.
pub fn side_curve(t: &Trace) -> Option<OverlayCurve> {
    let mem = memory_summary(t);
    let (peak, _) = headline_peak(&mem);
    let d = mem.iter().find(|d| {
        d.peak_allocated_bytes == peak
            && (d.device_type != 0 || mem.iter().all(|x| x.device_type == 0))
    })?;
    if peak <= 0 {
        return None;
    }
    let pts = curve(t, d.device_type, d.device_id);
    let origin = steps(t)
        .first()
        .map(|s| s.start_ns)
        .or_else(|| pts.first().map(|p| p.ts_ns))?;
    let mut c = OverlayCurve {
        device: if d.device_type == 0 {
            "CPU".to_owned()
        } else {
            format!("cuda:{}", d.device_id)
        },
        ..OverlayCurve::default()
    };
    for p in &pts {
        let (x, y) = (p.ts_ns.saturating_sub(origin), p.allocated.max(0) as u64);
        if y > c.peak.1 {
            c.peak = (x, y);
        }
        c.x.push(x);
        c.y.push(y);
    }
    Some(c)
}

/// Both sides' curves, `None` unless both recorded memory.
pub fn memory_overlay(a: &Trace, b: &Trace) -> Option<MemoryOverlay> {
    let (a, b) = (side_curve(a)?, side_curve(b)?);
    let last = |c: &OverlayCurve| c.x.last().copied().unwrap_or(0);
    Some(MemoryOverlay {
        x_max: last(&a).max(last(&b)).max(1),
        y_max: a.peak.1.max(b.peak.1).max(1),
        a,
        b,
    })
}

/// One category's curve of a memory timeline (`export_memory_timeline`), ns since its first
/// sample.
fn category_curve(m: &MemoryTimeline, c: usize) -> OverlayCurve {
    let t0 = m.times_us.first().copied().unwrap_or(0);
    let mut out = OverlayCurve {
        device: CATEGORIES[c].to_owned(),
        ..OverlayCurve::default()
    };
    for (i, &t) in m.times_us.iter().enumerate() {
        let x = t.saturating_sub(t0).saturating_mul(1000);
        let y = m.bytes[c].get(i).copied().unwrap_or(0).max(0) as u64;
        if y > out.peak.1 {
            out.peak = (x, y);
        }
        out.x.push(x);
        out.y.push(y);
    }
    out
}

/// The memory timelines' categories of A and B overlaid, one overlay per category either side
/// used (parameters, activations, gradients, …), on one axis per category.
pub fn category_overlays(a: &MemoryTimeline, b: &MemoryTimeline) -> Vec<MemoryOverlay> {
    (0..CATEGORIES.len())
        .map(|c| (category_curve(a, c), category_curve(b, c)))
        .filter(|(x, y)| x.peak.1 > 0 || y.peak.1 > 0)
        .map(|(a, b)| {
            let last = |c: &OverlayCurve| c.x.last().copied().unwrap_or(0);
            MemoryOverlay {
                x_max: last(&a).max(last(&b)).max(1),
                y_max: a.peak.1.max(b.peak.1).max(1),
                a,
                b,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::testutil::trace_json;

    fn mem(ts: i64, dev: i64, total: i64) -> String {
        format!(
            r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{ts},"args":{{"Device Type":1,"Device Id":{dev},"Addr":1,"Bytes":0,"Total Allocated":{total},"Total Reserved":0}}}}"#
        )
    }

    /// Hand-built: A's step starts at 100 µs and peaks at 3 MiB 50 µs later on cuda:1 (cuda:0
    /// peaks lower); B has no steps, starts at its first event and peaks at 5 MiB. Known by
    /// construction: the devices, the relative x of each peak, the shared axes.
    #[test]
    fn each_side_from_its_step_start_on_its_headline_device() {
        let step = r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":200}"#;
        let mib = 1 << 20;
        let a = trace_json(
            &[
                step.to_owned(),
                mem(120, 0, mib),
                mem(130, 1, mib),
                mem(150, 1, 3 * mib),
                mem(200, 1, 0),
            ]
            .join(","),
        );
        let b = trace_json(
            &[
                mem(1000, 0, 2 * mib),
                mem(1010, 0, 5 * mib),
                mem(1400, 0, 0),
            ]
            .join(","),
        );
        let Some(o) = memory_overlay(&a, &b) else {
            panic!("both sides recorded memory")
        };
        assert_eq!(o.a.device, "cuda:1");
        assert_eq!(o.a.peak, (50_000, 3 << 20));
        assert_eq!(o.a.x, vec![30_000, 50_000, 100_000]);
        assert_eq!(o.b.device, "cuda:0");
        assert_eq!(o.b.peak, (10_000, 5 << 20));
        assert_eq!((o.x_max, o.y_max), (400_000, 5 << 20));
        let none = trace_json(step);
        assert!(memory_overlay(&a, &none).is_none());
    }

    /// Hand-built timelines: A holds parameters (4 KiB) and activations peaking at 10 KiB 2 µs
    /// in; B the same parameters and activations peaking at 6 KiB; nobody has gradients.
    #[test]
    fn categories_of_both_timelines_each_on_its_own_axis() {
        let tl = |times: Vec<i64>, params: Vec<i64>, acts: Vec<i64>| {
            let mut bytes: [Vec<i64>; 8] = Default::default();
            let n = times.len();
            for (c, v) in bytes.iter_mut().enumerate() {
                *v = match CATEGORIES[c] {
                    "parameter" => params.clone(),
                    "activation" => acts.clone(),
                    _ => vec![0; n],
                };
            }
            MemoryTimeline {
                format: crate::ingest::sniff::Format::MemoryTimeline,
                times_us: times,
                bytes,
                records: n as u64,
            }
        };
        let a = tl(vec![100, 101, 102], vec![4096; 3], vec![0, 2048, 10240]);
        let b = tl(vec![5, 9], vec![4096; 2], vec![6144, 0]);
        let o = category_overlays(&a, &b);
        let names: Vec<&str> = o.iter().map(|x| x.a.device.as_str()).collect();
        assert_eq!(names, ["parameter", "activation"]);
        assert_eq!(o[1].a.peak, (2_000, 10240));
        assert_eq!(o[1].b.peak, (0, 6144));
        assert_eq!((o[1].x_max, o[1].y_max), (4_000, 10240));
    }
}
