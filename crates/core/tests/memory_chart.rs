//! Memory charts agree with the analyses they draw: on every corpus snapshot the stacked chart's peak
//! (drawn bands + summarized band) equals the replayed `peak_active_bytes`, and the Kineto / memory
//! timeline charts peak where `memory_summary` / `peak` say.
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use tracelight_core::analysis::memory::memory_summary;
use tracelight_core::analysis::memory_chart::{
    snapshot_chart, timeline_chart, trace_chart, trace_epoch_offset_ns, BandKind, XUnit,
};
use tracelight_core::analysis::snapshot::summarize;
use tracelight_core::ingest::memory_timeline::peak;
use tracelight_core::ingest::{load_bytes, Loaded};

/// The corpus folder (`tracelight_testkit::root()`, overridable by `TRACELIGHT_CORPUS`).
fn corpus() -> String {
    format!("{}/", tracelight_testkit::root().display())
}

fn load(rel: &str) -> Option<Loaded> {
    let path = format!("{}{rel}", corpus());
    let bytes = tracelight_testkit::read(&path)?;
    Some(load_bytes(rel, &bytes).unwrap())
}

const SNAPSHOTS: [&str; 6] = [
    "real/snapshots/cs336_silmont_tiny_mem_snapshot.pickle",
    "real/snapshots/cs336_kkaitlyn_ctx512_forward_mixed.pickle",
    "real/snapshots/ftcourse_2024-06_memory_snapshot.pickle",
    "real/snapshots/select_n_2023-12_4gpu_cpp_frames_snapshot.pickle",
    "real/snapshots/sqattn_2025-05_cuda_memory_snapshot.pickle",
    "generated/snapshots/synthetic_snapshot_seed23.pickle",
];

#[test]
fn snapshot_chart_peak_equals_the_replayed_peak_at_any_band_cap() {
    for rel in SNAPSHOTS {
        let Some(Loaded::Snapshot(s)) = load(rel) else {
            continue;
        };
        let sum = summarize(&s);
        for d in &sum.devices {
            for cap in [0, 5, 2000] {
                let c = snapshot_chart(&s, d.device, cap);
                assert_eq!(
                    c.peak.1, d.peak_active_bytes,
                    "{rel} device {} cap {cap}",
                    d.device
                );
                let drawn = c
                    .bands
                    .iter()
                    .filter(|b| matches!(b.kind, BandKind::Alloc { .. }))
                    .count();
                assert!(drawn <= cap, "{rel}: {drawn} bands with cap {cap}");
                // The top of the summarized band at the peak is the total.
                if let Some(sb) = c.bands.last() {
                    if let Some((_, hi)) = sb.at(c.peak.0) {
                        assert_eq!(hi, d.peak_active_bytes, "{rel} device {}", d.device);
                    }
                }
            }
        }
    }
}

#[test]
fn snapshots_without_time_us_fall_back_to_the_entry_index() {
    let Some(Loaded::Snapshot(s)) = load("real/snapshots/ftcourse_2024-06_memory_snapshot.pickle")
    else {
        return;
    };
    let c = snapshot_chart(&s, 0, 100);
    assert_eq!(c.unit, XUnit::Index);
    assert!(!c.epoch);
    let Some(Loaded::Snapshot(s)) =
        load("real/snapshots/sqattn_2025-05_cuda_memory_snapshot.pickle")
    else {
        return;
    };
    let dev = summarize(&s)
        .devices
        .iter()
        .max_by_key(|d| d.trace_entries)
        .unwrap()
        .device;
    let c = snapshot_chart(&s, dev, 100);
    assert_eq!(c.unit, XUnit::Ns);
    assert!(
        c.epoch && c.x_range.0 > 1_000_000_000_000_000_000,
        "epoch ns: {:?}",
        c.x_range
    );
}

#[test]
fn trace_memory_chart_peaks_where_memory_summary_says() {
    let Some(Loaded::Trace(t)) = load("real/hta/v100_rank1of2_profile_memory.json.gz") else {
        return;
    };
    for d in memory_summary(&t) {
        let c = trace_chart(&t, d.device_type, d.device_id);
        assert_eq!(c.peak, (d.peak_ts_ns, d.peak_allocated_bytes as u64));
        let reserved = c.lines.first().and_then(|l| l.y.iter().max().copied());
        assert_eq!(reserved.unwrap_or(0), d.peak_reserved_bytes as u64);
    }
}

#[test]
fn memory_timeline_and_its_trace_share_the_epoch_clock() {
    let gen = "generated/resnet_all.1795343593430138415";
    let (Some(Loaded::MemoryTimeline(m)), Some(Loaded::Trace(t))) = (
        load(&format!("{gen}.memory_timeline.json")),
        load(&format!("{gen}.pt.trace.json.gz")),
    ) else {
        return;
    };
    let c = timeline_chart(&m);
    assert_eq!(c.peak.1 as i64, peak(&m).peak_total_bytes);
    let off = trace_epoch_offset_ns(&t).unwrap();
    let (lo, hi) = t.time_bounds().unwrap();
    // The memory timeline was recorded inside the profiled window.
    assert!(c.x_range.0 >= lo + off - 1_000_000 && c.x_range.1 <= hi + off + 1_000_000);
    // An old trace with epoch-µs timestamps needs no offset.
    let Some(Loaded::Trace(old)) = load(
        "real/kineto/resnet50_v100_2021-06_num_workers_0.worker0.1623143089861.pt.trace.json.gz",
    ) else {
        return;
    };
    assert_eq!(trace_epoch_offset_ns(&old), Some(0));
}

/// The allocator-state scrubber and the chart share one clock: the x the chart draws entry `i`
/// at is where the scrubber's state after entry `i` sits, and the chart's peak marker is at the
/// entry the snapshot analysis (its own replay) names as the peak, so "go to peak" and a click on
/// the marker land on the same entry.
#[test]
fn snapshot_chart_entries_put_the_peak_marker_at_the_peak_entry() {
    let mut n = 0;
    let mut peaks = 0;
    for rel in SNAPSHOTS {
        let Some(Loaded::Snapshot(s)) = load(rel) else {
            continue;
        };
        n += 1;
        for d in &summarize(&s).devices {
            let c = snapshot_chart(&s, d.device, 100);
            assert_eq!(
                c.entry_x.len() as u64,
                d.trace_entries,
                "{rel} device {}",
                d.device
            );
            assert!(
                c.entry_x.windows(2).all(|w| w[0] <= w[1]),
                "{rel}: x never goes back"
            );
            for (i, &x) in c.entry_x.iter().enumerate().step_by(97) {
                let at = c.entry_at(x).unwrap();
                assert!(
                    at >= i && c.entry_x[at] == x,
                    "{rel}: entry {i} at {x} -> {at}"
                );
            }
            if let Some(p) = d.peak_active_index.filter(|_| d.peak_active_bytes > 0) {
                assert_eq!(
                    c.entry_x[p], c.peak.0,
                    "{rel} device {}: peak entry {p}",
                    d.device
                );
                assert_eq!(c.peak.1, d.peak_active_bytes);
                peaks += 1;
            }
        }
    }
    tracelight_testkit::checked("snapshots", n, SNAPSHOTS.len());
    assert!(n == 0 || peaks > 0);
}

/// The bands drawn are the `cap` largest allocations of the replay (ties: the earlier element),
/// found here by sorting every element: the chart selects them without a full sort.
#[test]
fn snapshot_chart_draws_exactly_the_largest_allocations() {
    use tracelight_core::analysis::snapshot::replay;
    let mut checked = 0;
    for rel in SNAPSHOTS {
        let Some(Loaded::Snapshot(s)) = load(rel) else {
            continue;
        };
        for d in &summarize(&s).devices {
            let r = replay(&s, d.device, false);
            let mut order: Vec<usize> = (0..r.elements.len()).collect();
            order.sort_by(|&a, &b| r.elements[b].size.cmp(&r.elements[a].size).then(a.cmp(&b)));
            for cap in [1, 5, 100] {
                let mut want: Vec<(u64, u64, Option<usize>, Option<usize>)> = order
                    .iter()
                    .take(cap)
                    .map(|&e| {
                        let el = &r.elements[e];
                        (el.addr, el.size, el.start, el.end)
                    })
                    .collect();
                let mut got: Vec<(u64, u64, Option<usize>, Option<usize>)> =
                    snapshot_chart(&s, d.device, cap)
                        .bands
                        .iter()
                        .filter_map(|b| match b.kind {
                            BandKind::Alloc {
                                addr,
                                size,
                                alloc_index,
                                free_index,
                                ..
                            } => Some((addr, size, alloc_index, free_index)),
                            _ => None,
                        })
                        .collect();
                want.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, want, "{rel} device {} cap {cap}", d.device);
                checked += usize::from(r.elements.len() > cap);
            }
        }
    }
    assert!(
        checked > 0 || tracelight_testkit::bytes(SNAPSHOTS[0]).is_none(),
        "no snapshot with more allocations than a cap"
    );
}
