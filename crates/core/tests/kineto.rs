//! The Kineto reader on hand-built traces (each assertion computed by hand from the JSON written
//! here) and on every Kineto trace of the shared corpus (event counts from python's json module:
//! `tests/scripts/corpus_event_counts.out.json`, written by `corpus_event_counts.py`; they match
//! `real/README.md`'s `events` column for the 32 real ones).

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tracelight_core::ingest::{load_bytes, Loaded, Loader};
use tracelight_core::model::{SliceKind, Trace, TrackKind, NONE};
use tracelight_core::warnings::WarningKind;
use tracelight_core::ErrorKind;

mod common;
use common::assert_same_model;

/// The corpus folder (`tracelight_testkit::root()`, overridable by `TRACELIGHT_CORPUS`).
fn corpus() -> String {
    tracelight_testkit::root().to_string_lossy().into_owned()
}

fn trace(json: &str) -> Box<Trace> {
    match load_bytes("unknown", json.as_bytes()) {
        Ok(Loaded::Trace(t)) => t,
        Ok(other) => panic!("not a trace: {:?}", other.format()),
        Err(e) => panic!("{e}"),
    }
}

const LAUNCH: &str = r#"{"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1695835535123.456, "dur": 10.0,
   "args": {"External id": 5, "Input Dims": [[4, 8], [8, 16]], "Input type": ["float", "float"], "Concrete Inputs": ["", ""]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": 1695835535124.0, "dur": 3.5,
   "args": {"External id": 5, "correlation": 99, "cbid": 211}},
  {"ph": "s", "id": 99, "pid": 7, "tid": 7, "ts": 1695835535124.0, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 1695835535130.25, "dur": 2.125,
   "args": {"device": 0, "stream": 7, "correlation": 99, "External id": 5, "registers per thread": 64,
            "shared memory": 1024, "grid": [2, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 25, "queued": 0}},
  {"ph": "f", "id": 99, "pid": 0, "tid": 7, "ts": 1695835535130.25, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "M", "name": "thread_name", "pid": 7, "tid": 7, "args": {"name": "main"}},
]}"#;

#[test]
fn timestamps_round_trip_to_the_nanosecond_and_launches_link_to_kernels() {
    let t = trace(LAUNCH);
    assert_eq!(t.slices.len(), 3);
    let mm = (0..3)
        .find(|&i| t.str(t.slices.name[i]) == "aten::mm")
        .expect("mm");
    assert_eq!(t.slices.start[mm], 1_695_835_535_123_456);
    assert_eq!(t.slices.dur[mm], 10_000);
    let launch = (0..3)
        .find(|&i| t.slices.kind[i] == SliceKind::Runtime)
        .expect("launch");
    let kernel = (0..3)
        .find(|&i| t.slices.kind[i] == SliceKind::Kernel)
        .expect("kernel");
    assert_eq!(t.slices.start[kernel], 1_695_835_535_130_250);
    assert_eq!(t.slices.dur[kernel], 2_125);
    assert_eq!(t.slices.parent[launch], mm as u32);
    assert_eq!(t.slices.depth[launch], 1);
    let row = t.gpu.row(kernel as u32).expect("gpu row");
    assert_eq!(t.gpu.launch[row], launch as u32);
    assert_eq!(t.gpu.grid[row], [2, 1, 1]);
    assert_eq!(t.gpu.block[row], [128, 1, 1]);
    assert_eq!(t.gpu.registers[row], 64);
    assert_eq!(
        (t.flows.from.len(), t.flows.from[0], t.flows.to[0]),
        (1, launch as u32, kernel as u32)
    );
    let cpu = t.slices.track[mm] as usize;
    assert_eq!(
        (t.tracks[cpu].kind, t.str(t.tracks[cpu].name)),
        (TrackKind::Cpu, "main")
    );
    let gpu = t.slices.track[kernel] as usize;
    assert_eq!(
        (
            t.tracks[gpu].kind,
            t.tracks[gpu].device,
            t.tracks[gpu].stream
        ),
        (TrackKind::Gpu, Some(0), Some(7))
    );
    assert!(t.warnings.is_empty(), "{:?}", t.warnings.lines());
}

#[test]
fn args_rebuilt_from_columns_hold_every_original_key_and_value() {
    let t = trace(LAUNCH);
    let pairs = |i: usize| -> serde_json::Map<String, serde_json::Value> {
        serde_json::from_str(&t.slice_args(i)).expect("args must be JSON")
    };
    let mm = (0..3)
        .find(|&i| t.str(t.slices.name[i]) == "aten::mm")
        .expect("mm");
    let a = pairs(mm);
    assert_eq!(a["External id"], 5);
    assert_eq!(a["Input Dims"], serde_json::json!([[4, 8], [8, 16]]));
    assert_eq!(a["Input type"], serde_json::json!(["float", "float"]));
    assert_eq!(a["Concrete Inputs"], serde_json::json!(["", ""]));
    let kernel = (0..3)
        .find(|&i| t.slices.kind[i] == SliceKind::Kernel)
        .expect("kernel");
    let k = pairs(kernel);
    for (key, v) in [
        ("device", 0),
        ("stream", 7),
        ("correlation", 99),
        ("External id", 5),
        ("registers per thread", 64),
        ("shared memory", 1024),
        ("queued", 0),
    ] {
        assert_eq!(k[key], v, "{key}");
    }
    assert_eq!(k["grid"], serde_json::json!([2, 1, 1]));
    assert_eq!(k["est. achieved occupancy %"].as_f64(), Some(25.0));
    assert_eq!(k.len(), 10);
}

#[test]
fn overlapping_slices_on_one_track_are_kept_and_counted() {
    let t = trace(
        r#"{"traceEvents": [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 10},
        {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 6, "dur": 1}]}"#,
    );
    assert_eq!(t.slices.len(), 3);
    assert_eq!(t.warnings.count(WarningKind::OverlappingSlices), 1);
    let b = (0..3).find(|&i| t.str(t.slices.name[i]) == "b").expect("b");
    let c = (0..3).find(|&i| t.str(t.slices.name[i]) == "c").expect("c");
    // b starts inside a but ends after it: drawn one level down, with no enclosing parent.
    assert_eq!((t.slices.depth[b], t.slices.parent[b]), (1, NONE));
    assert_eq!((t.slices.depth[c], t.slices.parent[c]), (2, b as u32));
}

#[test]
fn bare_arrays_string_ids_missing_dur_u64_args_and_trailing_commas_are_read() {
    let t = trace(
        r#"[
        {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 100, "args": {"Comms Id": 10159970886766084423}},
        {"ph": "X", "cat": "Operator", "name": "op", "pid": "Spans", "tid": "25738", "ts": 50, "dur": 100,},
        ]"#,
    );
    assert!(t.meta.bare_array);
    assert_eq!(t.event_count, 2);
    assert_eq!(t.warnings.count(WarningKind::MissingDuration), 1);
    let k = (0..2)
        .find(|&i| t.slices.kind[i] == SliceKind::Kernel)
        .expect("kernel");
    assert_eq!(t.tracks[t.slices.track[k] as usize].stream, Some(7));
    assert!(t.slice_args(k).contains("10159970886766084423"));
}

#[test]
fn a_truncated_trace_keeps_what_parsed_and_warns_with_the_offset() {
    let cut = &LAUNCH[..LAUNCH.find("\"cat\": \"kernel\"").expect("kernel")];
    let t = trace(cut);
    assert_eq!(t.slices.len(), 2);
    assert_eq!(t.event_count, 3);
    let w = t
        .warnings
        .iter()
        .find(|w| w.kind == WarningKind::Truncated)
        .expect("truncation warning");
    assert!(
        w.examples[0].contains(&format!("at byte {}", cut.len())),
        "{:?}",
        w.examples
    );
}

/// The browser inflates gzip with its own `DecompressionStream` and hands the loader decompressed
/// bytes: a cut `.gz` must end exactly as when flate2 inflates it (same slices, same warning), and a
/// corrupt one must fail naming the file.
#[test]
fn platform_inflated_gzip_matches_flate2_whole_cut_or_corrupt() {
    use std::io::{Read, Write};
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(LAUNCH.as_bytes()).unwrap();
    let gz = enc.finish().unwrap();
    let cut = &gz[..gz.len() * 3 / 4];
    // What a platform inflater yields before it reports the stream cut short.
    let mut partial = Vec::new();
    let _ = flate2::read::GzDecoder::new(cut).read_to_end(&mut partial);
    assert!(!partial.is_empty() && partial.len() < LAUNCH.len());

    let by_flate2 = |bytes: &[u8]| {
        let mut l = Loader::new("t.json.gz");
        l.push(bytes).unwrap();
        match l.finish().unwrap() {
            Loaded::Trace(t) => t,
            _ => panic!("not a trace"),
        }
    };
    let by_platform = |decoded: &[u8], truncated: bool| {
        let mut l = Loader::new("t.json.gz");
        for (i, piece) in decoded.chunks(7).enumerate() {
            l.push_inflated(piece, (i as u64 + 1) * 3).unwrap();
        }
        if truncated {
            l.inflate_failed(true, "Compressed input was truncated.")
                .unwrap();
        }
        match l.finish().unwrap() {
            Loaded::Trace(t) => t,
            _ => panic!("not a trace"),
        }
    };
    for (a, b) in [
        (by_flate2(&gz), by_platform(LAUNCH.as_bytes(), false)),
        (by_flate2(cut), by_platform(&partial, true)),
    ] {
        assert_eq!(a.slices.len(), b.slices.len());
        assert_eq!(a.event_count, b.event_count);
        assert_eq!(
            a.warnings.count(WarningKind::Truncated) > 0,
            b.warnings.count(WarningKind::Truncated) > 0
        );
    }
    assert_eq!(by_platform(LAUNCH.as_bytes(), false).slices.len(), 3);
    assert!(
        by_platform(&partial, true)
            .warnings
            .count(WarningKind::Truncated)
            > 0
    );

    let mut l = Loader::new("bad.json.gz");
    let e = l
        .inflate_failed(false, "The compressed data was not valid")
        .unwrap_err();
    assert!(e.to_string().contains("bad.json.gz"), "{e}");
    assert!(e.to_string().contains("not valid"), "{e}");
}

#[test]
fn not_a_trace_is_refused_by_content_whatever_the_name() {
    for (name, bytes) in [
        ("trace.json", &b"{\"a\": 1}"[..]),
        ("x.pt.trace.json", b"hello"),
        ("empty.json", b""),
    ] {
        match load_bytes(name, bytes) {
            Err(e) => {
                assert!(matches!(e.kind, ErrorKind::Incompatible(_)), "{name}: {e}");
                assert!(e.to_string().starts_with(name), "{e}");
            }
            Ok(_) => panic!("{name} must be refused"),
        }
    }
}

#[test]
fn slice_boundaries_never_change_the_result() {
    let whole = trace(LAUNCH);
    for size in [1, 2, 3, 7, 64, 1000] {
        let mut l = Loader::new("unknown");
        for piece in LAUNCH.as_bytes().chunks(size) {
            l.push(piece).expect("push");
        }
        let Ok(Loaded::Trace(t)) = l.finish() else {
            panic!("slices of {size}")
        };
        assert_eq!(t.slices.start, whole.slices.start, "slices of {size}");
        assert_eq!(t.slices.name, whole.slices.name);
        assert_eq!(t.flows.to, whole.flows.to);
    }
}

/// (corpus path, traceEvents entries per python's `len(json.load(f)["traceEvents"])`), written by
/// `tests/scripts/corpus_event_counts.py` (its docstring has the command) and checked in.
fn corpus_traces() -> Vec<(String, u64)> {
    let v: serde_json::Value =
        serde_json::from_str(include_str!("scripts/corpus_event_counts.out.json")).unwrap();
    let files: Vec<(String, u64)> = v["files"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
        .collect();
    // A script run that lost files fails here rather than testing fewer.
    assert_eq!(files.len(), 35);
    files
}

fn load_threaded(bytes: &[u8], piece: usize) -> Box<Trace> {
    let mut l = Loader::new("unknown").threaded();
    for p in bytes.chunks(piece) {
        l.push(p).expect("push");
    }
    match l.finish() {
        Ok(Loaded::Trace(t)) => t,
        _ => panic!("not a trace"),
    }
}

/// The two-thread reader (the CLI's) builds exactly the one-thread reader's model (the browser's):
/// same slices, strings, args, flows, warnings, in the same order, whatever the slice size; and
/// it fails the same way on bad input.
#[test]
fn the_threaded_reader_builds_the_same_model() {
    let whole = trace(LAUNCH);
    for size in [1, 7, 64, 1000] {
        assert_same_model(
            &load_threaded(LAUNCH.as_bytes(), size),
            &whole,
            "hand-built",
        );
    }
    let cut = &LAUNCH[..LAUNCH.find("\"cat\": \"kernel\"").expect("kernel")];
    assert_same_model(&load_threaded(cut.as_bytes(), 5), &trace(cut), "cut");
    let bad = r#"{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2, "name": "a"}, {"ph": ]}"#;
    let Err(one) = load_bytes("unknown", bad.as_bytes()) else {
        panic!("bad input loaded")
    };
    let mut l = Loader::new("unknown").threaded();
    let two = l.push(bad.as_bytes()).and_then(|()| l.finish().map(|_| ()));
    assert_eq!(
        two.expect_err("bad input loaded").to_string(),
        one.to_string()
    );
    if tracelight_testkit::path("real").is_none() {
        return;
    }
    // Corpus files up to ~1 MB (old and new schemas, a bare array, gzip, ROCm, MTIA, CPU-only);
    // the big ones add minutes to a debug build and nothing the reader does differently.
    for (rel, _) in &corpus_traces() {
        let bytes = std::fs::read(format!("{}/{rel}", corpus())).expect(rel);
        if bytes.len() > 1_200_000 {
            continue;
        }
        let Ok(Loaded::Trace(one)) = load_bytes("unknown", &bytes) else {
            panic!("{rel}")
        };
        assert_same_model(&load_threaded(&bytes, 1 << 20), &one, rel);
    }
}

#[test]
fn every_corpus_kineto_trace_loads_under_the_name_unknown_with_its_event_count() {
    if tracelight_testkit::path("real").is_none() {
        return;
    }
    for (rel, events) in &corpus_traces() {
        let bytes = std::fs::read(format!("{}/{rel}", corpus())).expect(rel);
        let t = match load_bytes("unknown", &bytes) {
            Ok(Loaded::Trace(t)) => t,
            Ok(other) => panic!("{rel}: sniffed as {:?}", other.format()),
            Err(e) => panic!("{rel}: {e}"),
        };
        assert_eq!(t.event_count, *events, "{rel}");
        assert_eq!(t.warnings.count(WarningKind::Truncated), 0, "{rel}");
        assert_eq!(t.warnings.count(WarningKind::MalformedEvent), 0, "{rel}");
        assert!(!t.slices.is_empty(), "{rel}");
    }
}

#[test]
fn corpus_gpu_traces_link_every_kernel_that_has_a_launch_in_the_file() {
    let rel =
        "real/kineto/resnet50_v100_2021-06_num_workers_0.worker0.1623143089861.pt.trace.json.gz";
    let Some(bytes) = tracelight_testkit::read(format!("{}/{rel}", corpus())) else {
        return;
    };
    let Ok(Loaded::Trace(t)) = load_bytes(rel, &bytes) else {
        panic!("{rel}")
    };
    // 9096 GPU events and 9096 async flow pairs in the file (python: count of ph=="f").
    assert_eq!(t.gpu.slice.len(), 9096);
    assert_eq!(t.gpu.launch.iter().filter(|&&l| l != NONE).count(), 9096);
    assert_eq!(t.flows.from.len(), 9096);
}
