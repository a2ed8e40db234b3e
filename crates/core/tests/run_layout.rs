//! Run-folder layouts recognised from names and content (see `run::layout`): what each launcher
//! writes, placed as ranks × artifacts, cycles kept apart, stages paired, foreign files skipped.

use tracelight_core::ingest::Format;
use tracelight_core::run::entry_from_head;
use tracelight_core::run::layout::{head_rank, recognise, Artifact, Entry, LayoutKind};

fn e(path: &str, f: Format, rank: Option<i64>) -> Entry {
    Entry {
        path: path.into(),
        format: Ok(f),
        head_rank: rank,
    }
}

fn foreign(path: &str) -> Entry {
    Entry {
        path: path.into(),
        format: Err("not JSON, gzip or a pickle".into()),
        head_rank: None,
    }
}

#[test]
fn nemo_ranks_get_trace_et_and_snapshot_and_say_what_is_missing() {
    let entries = vec![
        e("traces/device/rank-0.json", Format::Kineto, Some(0)),
        e("traces/device/rank-1.json", Format::Kineto, None),
        e("traces/host/rank-0.json", Format::Chakra, None),
        e("traces/host/rank-1.json", Format::Chakra, None),
        e("memory_rank1.pkl", Format::Snapshot, None),
        foreign("memory_rank1.html"),
        foreign("train.log"),
        foreign("callbacks.py"),
    ];
    let lay = recognise(&entries);
    assert_eq!(lay.kind, LayoutKind::Nemo);
    assert_eq!(lay.ranks(), vec![0, 1]);
    assert_eq!(lay.units.len(), 2);
    let r1 = &lay.units[1];
    assert_eq!(r1.file(Artifact::Trace), Some("traces/device/rank-1.json"));
    assert_eq!(
        r1.file(Artifact::ExecutionTrace),
        Some("traces/host/rank-1.json")
    );
    assert_eq!(r1.file(Artifact::Snapshot), Some("memory_rank1.pkl"));
    assert!(lay.missing(r1).is_empty());
    assert_eq!(lay.missing(&lay.units[0]), vec![Artifact::Snapshot]);
    let skipped: Vec<(&str, &str)> = lay
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        vec![
            ("callbacks.py", "Python source, not a profiler artifact"),
            ("memory_rank1.html", "an HTML page, not a profiler artifact"),
            ("train.log", "a log, not a profiler artifact"),
        ]
    );
}

#[test]
fn trace_handler_cycles_stay_apart_per_rank_in_time_order() {
    // repeat=2 with two workers (host_pid names, ranks from distributedInfo): each worker wrote
    // one file per cycle; the later timestamp is the later cycle, whatever the listing order.
    let entries = vec![
        e(
            "host_77.1700000009000.pt.trace.json",
            Format::Kineto,
            Some(1),
        ),
        e(
            "host_66.1700000001000.pt.trace.json",
            Format::Kineto,
            Some(0),
        ),
        e(
            "host_66.1700000008000.pt.trace.json.gz",
            Format::Kineto,
            Some(0),
        ),
        e(
            "host_77.1700000002000.pt.trace.json",
            Format::Kineto,
            Some(1),
        ),
    ];
    let lay = recognise(&entries);
    assert_eq!(lay.kind, LayoutKind::TraceHandler);
    assert_eq!(lay.ranks(), vec![0, 1]);
    assert_eq!(lay.cycles(), 2);
    let got: Vec<(i64, u32, &str)> = lay
        .units
        .iter()
        .map(|u| (u.rank, u.cycle, u.file(Artifact::Trace).unwrap_or("")))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 0, "host_66.1700000001000.pt.trace.json"),
            (0, 1, "host_66.1700000008000.pt.trace.json.gz"),
            (1, 0, "host_77.1700000002000.pt.trace.json"),
            (1, 1, "host_77.1700000009000.pt.trace.json"),
        ]
    );
    // Without distributedInfo the workers are ranked in name order, cycles the same.
    let bare: Vec<Entry> = entries
        .iter()
        .map(|x| e(&x.path, Format::Kineto, None))
        .collect();
    let lay = recognise(&bare);
    assert_eq!(lay.ranks(), vec![0, 1]);
    assert_eq!(
        lay.units[3].file(Artifact::Trace),
        Some("host_77.1700000009000.pt.trace.json")
    );
}

/// (cycle, stage, trace, snapshot).
type StageRow<'a> = (u32, Option<&'a str>, Option<&'a str>, Option<&'a str>);

#[test]
fn nanochat_stages_in_order_each_paired_with_its_snapshot() {
    let entries = vec![
        e("stage10-rl_trace.json", Format::Kineto, None),
        e("stage2-mid_mem.pickle", Format::Snapshot, None),
        e("stage1-base_trace.json", Format::Kineto, None),
        e("stage2-mid_trace.json", Format::Kineto, None),
        e("stage1-base_mem.pickle", Format::Snapshot, None),
        foreign("stage1-base_mem.html"),
    ];
    let lay = recognise(&entries);
    assert_eq!(lay.kind, LayoutKind::Nanochat);
    let got: Vec<StageRow> = lay
        .units
        .iter()
        .map(|u| {
            (
                u.cycle,
                u.stage.as_deref(),
                u.file(Artifact::Trace),
                u.file(Artifact::Snapshot),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                0,
                Some("stage1-base"),
                Some("stage1-base_trace.json"),
                Some("stage1-base_mem.pickle")
            ),
            (
                1,
                Some("stage2-mid"),
                Some("stage2-mid_trace.json"),
                Some("stage2-mid_mem.pickle")
            ),
            (2, Some("stage10-rl"), Some("stage10-rl_trace.json"), None),
        ]
    );
    assert_eq!(lay.missing(&lay.units[2]), vec![Artifact::Snapshot]);
    assert_eq!(lay.skipped.len(), 1);
}

#[test]
fn loose_rank_files_and_numbered_execution_traces() {
    let entries = vec![
        e(
            "kineto/worker1_step_12.1694128201556.pt.trace.json",
            Format::Kineto,
            Some(1),
        ),
        e(
            "kineto/worker0_step_12.1694128201545.pt.trace.json",
            Format::Kineto,
            Some(0),
        ),
        e("et/dlrm_eg_1.json.gz", Format::Chakra, None),
        e("et/dlrm_eg_0.json.gz", Format::Chakra, None),
    ];
    let lay = recognise(&entries);
    assert_eq!(lay.ranks(), vec![0, 1]);
    assert_eq!(lay.cycles(), 1);
    assert_eq!(
        lay.units[1].file(Artifact::ExecutionTrace),
        Some("et/dlrm_eg_1.json.gz")
    );
    assert_eq!(
        lay.expected,
        vec![Artifact::Trace, Artifact::ExecutionTrace]
    );
}

#[test]
fn heads_are_sniffed_through_gzip_and_give_the_rank() {
    let head = br#"{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 5, "world_size": 8, "pg_config": [{"ranks": [0, 1]}]}, "traceEvents": ["#;
    assert_eq!(head_rank(head), Some(5));
    assert_eq!(head_rank(br#"{"traceEvents": []}"#), None);
    let mut gz = Vec::new();
    {
        use std::io::Write;
        let mut w = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::fast());
        w.write_all(br#"{"schema": "1.0.1", "pid": 1, "nodes": [{"id": 1}]}"#)
            .unwrap_or_default();
        w.finish().map(|_| ()).unwrap_or_default();
    }
    let en = entry_from_head("host/rank-3.json", &gz);
    assert_eq!(en.format, Ok(Format::Chakra));
    let en = entry_from_head("x.json", &head[..]);
    assert_eq!((en.format, en.head_rank), (Ok(Format::Kineto), Some(5)));
    assert!(entry_from_head("a.html", b"<!doctype html>")
        .format
        .is_err());
}

#[test]
fn memory_goes_under_its_own_units_trace_never_another_ranks_or_stages() {
    // nanochat: each stage's snapshot under its own stage's trace; the stage without one gets
    // none (the others' are claimed by their traces).
    let lay = recognise(&[
        e("stage1-base_trace.json", Format::Kineto, None),
        e("stage1-base_mem.pickle", Format::Snapshot, None),
        e("stage2-mid_trace.json", Format::Kineto, None),
        e("stage2-mid_mem.pickle", Format::Snapshot, None),
        e("stage3-sft_trace.json", Format::Kineto, None),
    ]);
    assert_eq!(lay.memory_units_for(0, 1), vec![(0, 1)]);
    assert_eq!(lay.memory_units_for(0, 2), Vec::<(i64, u32)>::new());
    // NeMo: rank 0's snapshot and rank 1's memory timeline each under their own rank; rank 2 none.
    let lay = recognise(&[
        e("traces/device/rank-0.json", Format::Kineto, None),
        e("traces/device/rank-1.json", Format::Kineto, None),
        e("traces/device/rank-2.json", Format::Kineto, None),
        e("memory_rank0.pkl", Format::Snapshot, None),
        e("memory_timeline_rank1.json", Format::MemoryTimeline, None),
    ]);
    assert_eq!(lay.memory_units_for(0, 0), vec![(0, 0)]);
    assert_eq!(lay.memory_units_for(1, 0), vec![(1, 0)]);
    assert_eq!(lay.memory_units_for(2, 0), Vec::<(i64, u32)>::new());
    // A trace and a snapshot under unrelated names: the snapshot is nobody's, so it may go under it.
    let lay = recognise(&[
        e("resnet.pt.trace.json", Format::Kineto, None),
        e("after_step.pickle", Format::Snapshot, None),
    ]);
    let t = lay.units.iter().find(|u| u.file(Artifact::Trace).is_some());
    let s = lay
        .units
        .iter()
        .find(|u| u.file(Artifact::Snapshot).is_some());
    let (t, s) = (t.map(|u| (u.rank, u.cycle)), s.map(|u| (u.rank, u.cycle)));
    assert_ne!(t, s, "placed as two units");
    let (t, s) = (t.unwrap_or_default(), s.unwrap_or_default());
    assert_eq!(lay.memory_units_for(t.0, t.1), vec![s]);
}
