//! `export_memory_timeline` files: the plot JSON and the raw event list coalesce to the same series
//! as torch's `_coalesce_timeline`, with the peak and per-category breakdown of independent answers.
//!
//! Expected values are `tests/scripts/snapshot_expected.out.json`, written by
//! `tests/scripts/snapshot_expected.py` (stdlib `json`/`gzip`: torch's `_coalesce_timeline`
//! transcribed for raw files; sum of the 9 sizes per sample, first maximum) and checked in.
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use tracelight_core::ingest::memory_timeline::{peak, MemoryTimeline, CATEGORIES};
use tracelight_core::ingest::{load_bytes, Format, Loaded};

/// The corpus folder (`tracelight_testkit::root()`, overridable by `TRACELIGHT_CORPUS`).
fn corpus() -> String {
    format!("{}/", tracelight_testkit::root().display())
}

fn load(rel: &str) -> Option<Box<MemoryTimeline>> {
    let path = format!("{}{rel}", corpus());
    let bytes = tracelight_testkit::read(&path)?;
    match load_bytes("unknown", &bytes) {
        Ok(Loaded::MemoryTimeline(m)) => Some(m),
        Ok(other) => panic!("{rel}: loaded as {:?}", other.format()),
        Err(e) => panic!("{rel}: {e}"),
    }
}

/// The script's answer for one corpus file.
fn independent(rel: &str) -> serde_json::Value {
    let all: serde_json::Value =
        serde_json::from_str(include_str!("scripts/snapshot_expected.out.json")).unwrap();
    let e = all["files"][rel].clone();
    assert!(e.is_object(), "{rel}: not in snapshot_expected.out.json");
    e
}

/// `m`'s record count and peak against the script's answer `e`.
fn check_peak(rel: &str, m: &MemoryTimeline, e: &serde_json::Value) {
    let n = |k: &str| e[k].as_i64().unwrap_or_else(|| panic!("{rel}: no {k}"));
    assert_eq!(m.records as i64, n("records"), "{rel} records");
    let p = peak(m);
    assert_eq!(p.samples as i64, n("samples"), "{rel} samples");
    assert_eq!(p.peak_total_bytes, n("peak_total_bytes"), "{rel} peak");
    assert_eq!(p.peak_index as i64, n("peak_index"), "{rel} peak index");
    assert_eq!(p.peak_time_us, n("peak_time_us"), "{rel} peak time");
    let at: Vec<i64> = p.at_peak.iter().map(|(_, b)| *b).collect();
    let want: Vec<i64> = serde_json::from_value(e["at_peak"].clone()).unwrap();
    assert_eq!(at, want, "{rel} at peak");
}

const RESNET: &str = "generated/resnet_all.1795343593430138415.memory_timeline.json";
const RESNET_RAW: &str = "generated/resnet_all.1795343593430138415.memory_timeline.raw.json.gz";

#[test]
fn generated_plot_json_peak_and_breakdown() {
    let Some(m) = load(RESNET) else {
        return;
    };
    assert_eq!(m.format, Format::MemoryTimeline);
    check_peak(RESNET, &m, &independent(RESNET));
    let p = peak(&m);
    assert_eq!(p.at_peak[4].0, CATEGORIES[4]);
    assert_eq!(p.at_peak[4].0, "activation");
}

/// The raw export of the same run coalesces to exactly the plot file's series.
#[test]
fn generated_raw_coalesces_to_the_plot_json() {
    let (Some(raw), Some(plot)) = (load(RESNET_RAW), load(RESNET)) else {
        return;
    };
    assert_eq!(raw.format, Format::MemoryTimelineRaw);
    check_peak(RESNET_RAW, &raw, &independent(RESNET_RAW));
    assert_eq!(raw.times_us, plot.times_us);
    assert_eq!(raw.bytes, plot.bytes);
}

#[test]
fn real_hta_raw_timeline_peak_and_breakdown() {
    let rel = "real/hta/memory_timeline.raw.json.gz";
    let Some(m) = load(rel) else {
        return;
    };
    check_peak(rel, &m, &independent(rel));
}

#[test]
fn malformed_timelines_are_errors_not_panics() {
    for bad in [
        &b"[[1, 2], [[0, 1]]"[..],
        b"[[1, 2, 3], [[0, 1]]]",
        b"[[-1, 9, 4, 0], [1, 2, 3, 4]]",
        b"[[-1, 1, 4, 0], [1, 2, \"x\", 4]]",
    ] {
        assert!(
            load_bytes("bad.json", bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}
