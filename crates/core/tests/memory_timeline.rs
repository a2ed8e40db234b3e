//! `export_memory_timeline` files: the plot JSON and the raw event list coalesce to the same series
//! as torch's `_coalesce_timeline`, with the peak and per-category breakdown of independent answers.
//!
//! Expected values come from `tests/scripts/snapshot_expected.py` (stdlib `json`/`gzip`: torch's
//! `_coalesce_timeline` transcribed for raw files; sum of the 9 sizes per sample, first maximum).
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use tracelight_core::ingest::memory_timeline::{peak, MemoryTimeline, CATEGORIES};
use tracelight_core::ingest::{load_bytes, Format, Loaded};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus/");

fn load(rel: &str) -> Option<Box<MemoryTimeline>> {
    let path = format!("{CORPUS}{rel}");
    let Ok(bytes) = std::fs::read(&path) else {
        println!("note: corpus file {path} absent; skipping");
        return None;
    };
    match load_bytes("unknown", &bytes) {
        Ok(Loaded::MemoryTimeline(m)) => Some(m),
        Ok(other) => panic!("{rel}: loaded as {:?}", other.format()),
        Err(e) => panic!("{rel}: {e}"),
    }
}

const RESNET_AT_PEAK: [i64; 8] = [40104, 80288, 55360, 0, 3245128, 40912, 884736, 629056];

#[test]
fn generated_plot_json_peak_and_breakdown() {
    let Some(m) = load("generated/resnet_all.1795343593430138415.memory_timeline.json") else {
        return;
    };
    assert_eq!(m.format, Format::MemoryTimeline);
    assert_eq!(m.records, 1344);
    let p = peak(&m);
    assert_eq!(p.samples, 1344);
    assert_eq!(p.peak_total_bytes, 4_975_584);
    assert_eq!(p.peak_index, 100);
    assert_eq!(p.peak_time_us, 1_795_343_593_403_013);
    let at: Vec<i64> = p.at_peak.iter().map(|(_, b)| *b).collect();
    assert_eq!(at, RESNET_AT_PEAK);
    assert_eq!(p.at_peak[4].0, CATEGORIES[4]);
    assert_eq!(p.at_peak[4].0, "activation");
}

/// The raw export of the same run coalesces to exactly the plot file's series.
#[test]
fn generated_raw_coalesces_to_the_plot_json() {
    let (Some(raw), Some(plot)) = (
        load("generated/resnet_all.1795343593430138415.memory_timeline.raw.json.gz"),
        load("generated/resnet_all.1795343593430138415.memory_timeline.json"),
    ) else {
        return;
    };
    assert_eq!(raw.format, Format::MemoryTimelineRaw);
    assert_eq!(raw.records, 1894);
    assert_eq!(raw.times_us, plot.times_us);
    assert_eq!(raw.bytes, plot.bytes);
    let at: Vec<i64> = peak(&raw).at_peak.iter().map(|(_, b)| *b).collect();
    assert_eq!(at, RESNET_AT_PEAK);
}

#[test]
fn real_hta_raw_timeline_peak_and_breakdown() {
    let Some(m) = load("real/hta/memory_timeline.raw.json.gz") else {
        return;
    };
    assert_eq!(m.records, 16845);
    let p = peak(&m);
    assert_eq!(p.samples, 7718);
    assert_eq!(p.peak_total_bytes, 3_082_832_104);
    assert_eq!(p.peak_index, 761);
    assert_eq!(p.peak_time_us, 1_696_966_047_194_486);
    let at: Vec<i64> = p.at_peak.iter().map(|(_, b)| *b).collect();
    assert_eq!(
        at,
        [102440608, 102228128, 19395584, 0, 2592465920, 67858432, 64225280, 134218152]
    );
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
