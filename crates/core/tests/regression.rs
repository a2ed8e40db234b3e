//! Regression tests for inputs found by fuzzing (`fuzz/`, see README "Fuzzing"). Each test is named
//! after the bug, with the input inlined; it must keep passing (no panic, same outcome however the
//! file is sliced).

use std::mem::discriminant;
use tracelight_core::ingest::{Loaded, Loader};
use tracelight_core::{Error, ErrorKind};

/// What must not depend on slicing: event count or error kind.
#[derive(Debug, PartialEq)]
enum Outcome {
    Trace(u64),
    Other(&'static str),
    Failed(std::mem::Discriminant<ErrorKind>),
}

fn outcome(r: Result<Loaded, Error>) -> Outcome {
    match r {
        Ok(Loaded::Trace(t)) => Outcome::Trace(t.event_count),
        Ok(other) => Outcome::Other(other.format().label()),
        Err(e) => Outcome::Failed(discriminant(&e.kind)),
    }
}

fn load_in_slices(data: &[u8], slice: usize) -> Outcome {
    let mut l = Loader::new("fuzz");
    for chunk in data.chunks(slice) {
        if let Err(e) = l.push(chunk) {
            return outcome(Err(e));
        }
    }
    outcome(l.finish())
}

/// Loads `data` whole and in slices of several sizes; all must agree.
fn assert_slicing_invariant(data: &[u8]) -> Outcome {
    let whole = load_in_slices(data, data.len().max(1));
    for slice in [1, 2, 3, 7, 64, 4096] {
        assert_eq!(
            load_in_slices(data, slice),
            whole,
            "slices of {slice} bytes"
        );
    }
    whole
}

/// Found by `fuzz/fuzz_targets/kineto.rs`: a gzip stream whose decoded text has a syntax error
/// before a corrupt deflate block. Fed whole, the decoder failed inside one large write and the
/// decoded bytes were dropped (a `Compression` error); fed in small slices, the bytes reached the
/// reader first (a `Syntax` error). The gzip layer now feeds the decoder the same pieces however
/// the input is sliced, and hands on what it decoded before reporting corruption.
#[test]
fn fuzz_kineto_gzip_corrupt_after_syntax_error_is_slice_independent() {
    // `{"traceEvents":[x` + 70000 spaces, deflated and full-flushed, then a block of reserved type.
    let mut data = vec![
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xec, 0xc1, 0xb1, 0x0d, 0x00,
        0x11, 0x00, 0x00, 0xc0, 0x55, 0x3e, 0xc6, 0xf8, 0xde, 0x14, 0x2a, 0x11, 0xad, 0x02, 0x11,
        0x89, 0xe5, 0x2d, 0xa1, 0xbc, 0xbb, 0x13, 0x66, 0xcf, 0xa5, 0xc6, 0x55, 0xdb, 0x1c, 0xe1,
        0x4f, 0xfb, 0x03,
    ];
    data.extend_from_slice(&[0u8; 67]);
    data.extend_from_slice(&[0x9e, 0xbb, 0x00, 0x00, 0x00, 0xff, 0xff, 0x07]);
    let got = assert_slicing_invariant(&data);
    assert_eq!(
        got,
        Outcome::Failed(discriminant(&ErrorKind::Syntax(String::new())))
    );
}

/// Found while writing the fuzz targets (their inputs are too short to reach it): the sniffer looked
/// at the whole first slice, so a JSON object whose first Kineto key lies beyond the first 64 KiB was
/// a trace when pushed in one slice and "not a supported file" when pushed in small ones.
#[test]
fn fuzz_kineto_sniff_window_is_slice_independent() {
    let mut data = b"{\"padding\": \"".to_vec();
    data.resize(70_000, b'a');
    data.extend_from_slice(b"\", \"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1}]}");
    let whole = load_in_slices(&data, data.len());
    assert_eq!(whole, load_in_slices(&data, 4096));
    assert_eq!(
        whole,
        Outcome::Failed(discriminant(&ErrorKind::Incompatible(String::new())))
    );
}

/// Found while writing `fuzz/fuzz_targets/memory_timeline.rs`: the total over categories at a
/// sample was a plain `sum()`, so two categories near `i64::MAX` overflowed (a panic in debug
/// builds, a wrapped negative peak in release). It saturates now, and so does the chart.
#[test]
fn fuzz_memory_timeline_total_of_huge_categories_saturates() {
    use tracelight_core::analysis::memory_chart::timeline_chart;
    use tracelight_core::ingest::memory_timeline::peak;
    let data = b"[[1, 2], [[0, 9223372036854775807, 9223372036854775807], [0, 1, 2]]]";
    let Ok(Loaded::MemoryTimeline(m)) = tracelight_core::ingest::load_bytes("mt.json", data) else {
        panic!("loads")
    };
    assert_eq!(m.total(0), i64::MAX);
    let p = peak(&m);
    assert_eq!((p.peak_index, p.peak_total_bytes), (0, i64::MAX));
    let _ = timeline_chart(&m);
}

/// Found by `scripts/fuzz_all.sh` (`memory_timeline`, 2026-11-23, artifact
/// crash-d7eddd12969babdac88e7df02228cba86bd7b05b, a recipe input): a timeline whose last time is
/// near `i64::MAX` µs made the chart's end (`t × 1000`, saturated, `+ 1000`) overflow — a panic in
/// debug builds. The end and the stacked totals saturate now.
#[test]
fn fuzz_memory_timeline_chart_end_of_a_huge_last_time_saturates() {
    use tracelight_core::analysis::memory_chart::timeline_chart;
    let data = b"[[1, 9223372036854775807], [[0, 1], [0, 2]]]";
    match tracelight_core::ingest::load_bytes("mt.json", data) {
        Ok(Loaded::MemoryTimeline(m)) => {
            assert_eq!(m.times_us.last(), Some(&i64::MAX));
            let c = timeline_chart(&m);
            assert!(c.x_range.0 <= c.x_range.1, "{:?}", c.x_range);
        }
        Ok(other) => panic!("loaded as {:?}", other.format()),
        Err(e) => panic!("{e}"),
    }
}

/// Also from the `memory_timeline` crash above: the chart's fix saturated the running total of the
/// stacked categories but not the top of each category's band (`lo + v`), so a third category near
/// `i64::MAX` on top of two others still overflowed (a panic in debug builds). Both saturate now.
#[test]
fn fuzz_memory_timeline_chart_band_tops_of_huge_categories_saturate() {
    use tracelight_core::analysis::memory_chart::timeline_chart;
    // Every category at i64::MAX: from the third one on, the stack passes u64::MAX.
    let max = i64::MAX.to_string();
    let row = [max.as_str(); 8].join(", ");
    let data = format!("[[1, 2], [[{row}], [{row}]]]");
    let Ok(Loaded::MemoryTimeline(m)) =
        tracelight_core::ingest::load_bytes("mt.json", data.as_bytes())
    else {
        panic!("loads")
    };
    let c = timeline_chart(&m);
    assert_eq!(c.peak.1, u64::MAX);
    assert!(c
        .bands
        .iter()
        .all(|b| b.hi.iter().zip(&b.lo).all(|(h, l)| h >= l)));
}

/// Found by `fuzz_all.sh` (target `snapshot`, 2026-11-23, after 4,971 execs, crash-7b0a1832…): a
/// snapshot whose trace times are past `i64::MAX` ns (here 2^62 µs; µs × 1000 saturates) put the
/// chart's first x at `i64::MAX`, and the summarized band's end (`x0 + 1`) overflowed: a panic in
/// debug builds (memory_chart.rs:335). The band ends saturate now. The pickle is
/// `{'segments': [], 'device_traces': [[{'action': 'alloc', 'addr': 4096, 'size': 512, 'stream': 0,
/// 'time_us': 2**62, 'frames': []}]]}` (protocol 2), written by hand rather than minimized.
#[test]
fn fuzz_snapshot_chart_of_times_past_the_i64_ceiling_saturates() {
    use tracelight_core::analysis::memory_chart::snapshot_chart;
    let data = b"\x80\x02\x7d\x71\x00\x28\x58\x08\x00\x00\x00\x73\x65\x67\x6d\x65\x6e\x74\x73\x71\x01\x5d\x71\x02\x58\x0d\x00\x00\x00\x64\x65\x76\x69\x63\x65\x5f\x74\x72\x61\x63\x65\x73\x71\x03\x5d\x71\x04\x5d\x71\x05\x7d\x71\x06\x28\x58\x06\x00\x00\x00\x61\x63\x74\x69\x6f\x6e\x71\x07\x58\x05\x00\x00\x00\x61\x6c\x6c\x6f\x63\x71\x08\x58\x04\x00\x00\x00\x61\x64\x64\x72\x71\x09\x4d\x00\x10\x58\x04\x00\x00\x00\x73\x69\x7a\x65\x71\x0a\x4d\x00\x02\x58\x06\x00\x00\x00\x73\x74\x72\x65\x61\x6d\x71\x0b\x4b\x00\x58\x07\x00\x00\x00\x74\x69\x6d\x65\x5f\x75\x73\x71\x0c\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40\x58\x06\x00\x00\x00\x66\x72\x61\x6d\x65\x73\x71\x0d\x5d\x71\x0e\x75\x61\x61\x75\x2e";
    let Ok(Loaded::Snapshot(s)) = tracelight_core::ingest::load_bytes("s.pickle", data) else {
        panic!("loads")
    };
    let c = snapshot_chart(&s, 0, 100);
    assert!(c.x_range.0 <= c.x_range.1, "{:?}", c.x_range);
    assert_eq!(c.peak.1, 512);
}

/// Found by the second `fuzz_all.sh` run of `snapshot` (2026-11-23, 74,002 execs,
/// crash-fc5671ab…): blocks already allocated before the trace whose sizes sum past `u64::MAX`
/// overflowed the replay's starting total (`sum()`, a panic in debug builds,
/// analysis/snapshot.rs `replay`). It saturates now. The pickle is three segments of one
/// `active_allocated` block of `2**63 - 1` bytes each plus one traced alloc, written by
/// `pickle.dumps(..., protocol=2)` (the script is in this comment's history: segments with
/// `total_size = allocated_size = active_size = requested_size = 2**63 - 1`, block `size` and
/// `requested_size` the same, `device_traces = [[{'action': 'alloc', 'addr': 4096, 'size': 512,
/// 'stream': 0, 'time_us': 1, 'frames': []}]]`).
#[test]
fn fuzz_snapshot_preexisting_blocks_past_u64_saturate() {
    use tracelight_core::analysis::snapshot::{replay, summarize};
    let data = b"\x80\x02\x7d\x71\x00\x28\x58\x08\x00\x00\x00\x73\x65\x67\x6d\x65\x6e\x74\x73\x71\x01\x5d\x71\x02\x28\x7d\x71\x03\x28\x58\x06\x00\x00\x00\x64\x65\x76\x69\x63\x65\x71\x04\x4b\x00\x58\x07\x00\x00\x00\x61\x64\x64\x72\x65\x73\x73\x71\x05\x8a\x06\x00\x00\x00\x00\x00\x7f\x58\x0a\x00\x00\x00\x74\x6f\x74\x61\x6c\x5f\x73\x69\x7a\x65\x71\x06\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x58\x0e\x00\x00\x00\x61\x6c\x6c\x6f\x63\x61\x74\x65\x64\x5f\x73\x69\x7a\x65\x71\x07\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x58\x0b\x00\x00\x00\x61\x63\x74\x69\x76\x65\x5f\x73\x69\x7a\x65\x71\x08\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x58\x0e\x00\x00\x00\x72\x65\x71\x75\x65\x73\x74\x65\x64\x5f\x73\x69\x7a\x65\x71\x09\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x58\x06\x00\x00\x00\x73\x74\x72\x65\x61\x6d\x71\x0a\x4b\x00\x58\x0c\x00\x00\x00\x73\x65\x67\x6d\x65\x6e\x74\x5f\x74\x79\x70\x65\x71\x0b\x58\x05\x00\x00\x00\x6c\x61\x72\x67\x65\x71\x0c\x58\x06\x00\x00\x00\x62\x6c\x6f\x63\x6b\x73\x71\x0d\x5d\x71\x0e\x7d\x71\x0f\x28\x68\x05\x8a\x06\x00\x00\x00\x00\x00\x7f\x58\x04\x00\x00\x00\x73\x69\x7a\x65\x71\x10\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x09\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x58\x05\x00\x00\x00\x73\x74\x61\x74\x65\x71\x11\x58\x10\x00\x00\x00\x61\x63\x74\x69\x76\x65\x5f\x61\x6c\x6c\x6f\x63\x61\x74\x65\x64\x71\x12\x58\x06\x00\x00\x00\x66\x72\x61\x6d\x65\x73\x71\x13\x5d\x71\x14\x75\x61\x75\x7d\x71\x15\x28\x68\x04\x4b\x00\x68\x05\x8a\x06\x00\x00\x00\x40\x00\x7f\x68\x06\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x07\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x08\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x09\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x0a\x4b\x00\x68\x0b\x68\x0c\x68\x0d\x5d\x71\x16\x7d\x71\x17\x28\x68\x05\x8a\x06\x00\x00\x00\x40\x00\x7f\x68\x10\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x09\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x11\x68\x12\x68\x13\x5d\x71\x18\x75\x61\x75\x7d\x71\x19\x28\x68\x04\x4b\x00\x68\x05\x8a\x06\x00\x00\x00\x80\x00\x7f\x68\x06\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x07\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x08\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x09\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x0a\x4b\x00\x68\x0b\x68\x0c\x68\x0d\x5d\x71\x1a\x7d\x71\x1b\x28\x68\x05\x8a\x06\x00\x00\x00\x80\x00\x7f\x68\x10\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x09\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x11\x68\x12\x68\x13\x5d\x71\x1c\x75\x61\x75\x65\x58\x0d\x00\x00\x00\x64\x65\x76\x69\x63\x65\x5f\x74\x72\x61\x63\x65\x73\x71\x1d\x5d\x71\x1e\x5d\x71\x1f\x7d\x71\x20\x28\x58\x06\x00\x00\x00\x61\x63\x74\x69\x6f\x6e\x71\x21\x58\x05\x00\x00\x00\x61\x6c\x6c\x6f\x63\x71\x22\x58\x04\x00\x00\x00\x61\x64\x64\x72\x71\x23\x4d\x00\x10\x68\x10\x4d\x00\x02\x68\x0a\x4b\x00\x58\x07\x00\x00\x00\x74\x69\x6d\x65\x5f\x75\x73\x71\x24\x4b\x01\x68\x13\x5d\x71\x25\x75\x61\x61\x75\x2e";
    let Ok(Loaded::Snapshot(s)) = tracelight_core::ingest::load_bytes("s.pickle", data) else {
        panic!("loads")
    };
    let r = replay(&s, 0, false);
    assert_eq!(r.preexisting_bytes, u64::MAX);
    let d = &summarize(&s).devices[0];
    assert_eq!(d.reserved_bytes, u64::MAX);
    let c = tracelight_core::analysis::memory_chart::snapshot_chart(&s, 0, 100);
    assert!(c.x_range.0 <= c.x_range.1);
}

/// Found by the third `fuzz_all.sh` run of `snapshot` (2026-11-23, 98,251 execs,
/// crash-c845a41c…): a segment without `allocated_size` (a profile-plot snapshot) has its totals
/// summed from its blocks while reading, and three `active_allocated` blocks of `2**63 - 1` bytes
/// overflowed them (ingest/snapshot.rs, a panic in debug builds). They saturate now. The pickle:
/// `{'segments': [{'device': 0, 'address': 0x7f0000000000, 'total_size': 2**63 - 1, 'stream': 0,
/// 'segment_type': 'large', 'blocks': [three such blocks, 'frames': []]}], 'device_traces': [[]]}`,
/// `pickle.dumps(..., protocol=2)`.
#[test]
fn fuzz_snapshot_block_totals_of_a_segment_without_totals_saturate() {
    let data = b"\x80\x02\x7d\x71\x00\x28\x58\x08\x00\x00\x00\x73\x65\x67\x6d\x65\x6e\x74\x73\x71\x01\x5d\x71\x02\x7d\x71\x03\x28\x58\x06\x00\x00\x00\x64\x65\x76\x69\x63\x65\x71\x04\x4b\x00\x58\x07\x00\x00\x00\x61\x64\x64\x72\x65\x73\x73\x71\x05\x8a\x06\x00\x00\x00\x00\x00\x7f\x58\x0a\x00\x00\x00\x74\x6f\x74\x61\x6c\x5f\x73\x69\x7a\x65\x71\x06\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x58\x06\x00\x00\x00\x73\x74\x72\x65\x61\x6d\x71\x07\x4b\x00\x58\x0c\x00\x00\x00\x73\x65\x67\x6d\x65\x6e\x74\x5f\x74\x79\x70\x65\x71\x08\x58\x05\x00\x00\x00\x6c\x61\x72\x67\x65\x71\x09\x58\x06\x00\x00\x00\x62\x6c\x6f\x63\x6b\x73\x71\x0a\x5d\x71\x0b\x28\x7d\x71\x0c\x28\x68\x05\x8a\x06\x00\x00\x00\x00\x00\x7f\x58\x04\x00\x00\x00\x73\x69\x7a\x65\x71\x0d\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x58\x0e\x00\x00\x00\x72\x65\x71\x75\x65\x73\x74\x65\x64\x5f\x73\x69\x7a\x65\x71\x0e\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x58\x05\x00\x00\x00\x73\x74\x61\x74\x65\x71\x0f\x58\x10\x00\x00\x00\x61\x63\x74\x69\x76\x65\x5f\x61\x6c\x6c\x6f\x63\x61\x74\x65\x64\x71\x10\x58\x06\x00\x00\x00\x66\x72\x61\x6d\x65\x73\x71\x11\x5d\x71\x12\x75\x7d\x71\x13\x28\x68\x05\x8a\x06\x01\x00\x00\x00\x00\x7f\x68\x0d\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x0e\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x0f\x68\x10\x68\x11\x5d\x71\x14\x75\x7d\x71\x15\x28\x68\x05\x8a\x06\x02\x00\x00\x00\x00\x7f\x68\x0d\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x0e\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x68\x0f\x68\x10\x68\x11\x5d\x71\x16\x75\x65\x75\x61\x58\x0d\x00\x00\x00\x64\x65\x76\x69\x63\x65\x5f\x74\x72\x61\x63\x65\x73\x71\x17\x5d\x71\x18\x5d\x71\x19\x61\x75\x2e";
    let Ok(Loaded::Snapshot(s)) = tracelight_core::ingest::load_bytes("s.pickle", data) else {
        panic!("loads")
    };
    assert_eq!(s.segments.allocated_size[0], u64::MAX);
    assert_eq!(s.segments.active_size[0], u64::MAX);
    let _ = tracelight_core::analysis::snapshot::summarize(&s);
    let c = tracelight_core::analysis::memory_chart::snapshot_chart(&s, 0, 100);
    assert!(c.x_range.0 <= c.x_range.1);
}
