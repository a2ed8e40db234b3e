//! The snapshot paths a big file takes in the page: the model travels from the reader worker to
//! the page as sections (`ingest::snapshot::wire`), and must come back equal in every column for
//! every corpus snapshot (the Debug text of the whole model, so a field added to the model and
//! forgotten by the wire fails here); so must the views the worker builds for the page (summary
//! and charts, `report::snapshot_wire`).
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use tracelight_core::ingest::snapshot::{self, wire, Snapshot};
use tracelight_core::ingest::{load_bytes, Loaded};

/// Every snapshot of the corpus (real dumps of several torch versions, C++ frames, four devices,
/// a state-only dump, memory_viz profile_plot data, the generator's variants).
pub const CORPUS_SNAPSHOTS: [&str; 15] = [
    "real/snapshots/cs336_wedsonlin_medium_512_training_memory_snapshot.pickle",
    "real/snapshots/cs336_magma27_2026-04_windows_memory_snapshot.pickle",
    "real/snapshots/cs336_nothanmin_memory_snapshot.pickle",
    "real/snapshots/cs336_kkaitlyn_ctx512_forward_mixed.pickle",
    "real/snapshots/cs336_silmont_tiny_mem_snapshot.pickle",
    "real/snapshots/cs336_bcrafton_memory_snapshot.pickle",
    "real/snapshots/ftcourse_2024-06_memory_snapshot.pickle",
    "real/snapshots/select_n_2023-12_4gpu_cpp_frames_snapshot.pickle",
    "real/snapshots/sqattn_2025-05_cuda_memory_snapshot.pickle",
    "real/snapshots/select_n_2023-12_state_only_no_trace_snapshot.pickle",
    "generated/snapshots/synthetic_snapshot_seed23.at_marker.pickle",
    "generated/snapshots/synthetic_snapshot_seed23.state_only.pickle",
    "generated/snapshots/synthetic_snapshot_seed23.pickle",
    "generated/snapshots/synthetic_snapshot_seed23.ring_buffer.pickle",
    "generated/resnet_all.1795343593430138415.profile_to_snapshot.pickle",
];

fn load(rel: &str) -> Option<Box<Snapshot>> {
    let bytes = tracelight_testkit::bytes(rel)?;
    match load_bytes(rel, &bytes) {
        Ok(Loaded::Snapshot(s)) => Some(s),
        Ok(other) => panic!("{rel}: loaded as {:?}", other.format()),
        Err(e) => panic!("{rel}: {e}"),
    }
}

#[test]
fn every_corpus_snapshot_comes_back_whole_from_its_sections() {
    let mut n = 0;
    for rel in CORPUS_SNAPSHOTS {
        let Some(s) = load(rel) else { continue };
        let sections = wire::encode(&s);
        let mut d = wire::Decoder::default();
        for x in &sections {
            d.push(x).unwrap_or_else(|e| panic!("{rel}: {e}"));
        }
        let back = d.finish().unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(format!("{back:?}"), format!("{s:?}"), "{rel}");
        n += 1;
    }
    tracelight_testkit::checked("snapshots through the wire", n, CORPUS_SNAPSHOTS.len());
}

#[test]
fn every_corpus_snapshots_views_come_back_whole_from_their_sections() {
    use tracelight_core::report::snapshot_wire::{sections, Decoder, SnapshotViews};
    let mut n = 0;
    for rel in CORPUS_SNAPSHOTS {
        let Some(s) = load(rel) else { continue };
        let v = SnapshotViews::of(&s);
        assert!(
            !v.charts.is_empty() || v.summary.devices.is_empty(),
            "{rel}: a chart"
        );
        let secs = sections(&v).unwrap();
        let mut d = Decoder::default();
        for x in &secs {
            assert!(!d.complete(), "{rel}: complete before its last section");
            d.push(x).unwrap_or_else(|e| panic!("{rel}: {e}"));
        }
        let back = d.finish().unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(format!("{back:?}"), format!("{v:?}"), "{rel}");
        // Damaged lists are errors, never panics: each section cut by a byte, one left out.
        for k in 0..secs.len().min(40) {
            let mut d = Decoder::default();
            let mut failed = false;
            for (j, x) in secs.iter().enumerate() {
                let x = if j == k {
                    &x[..x.len().saturating_sub(1)]
                } else {
                    &x[..]
                };
                if d.push(x).is_err() {
                    failed = true;
                    break;
                }
            }
            assert!(failed || d.finish().is_err(), "{rel}: section {k} cut");
            let mut d = Decoder::default();
            let ok = secs
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .all(|(_, x)| d.push(x).is_ok());
            assert!(!ok || d.finish().is_err(), "{rel}: section {k} left out");
        }
        n += 1;
    }
    tracelight_testkit::checked("snapshot views through the wire", n, CORPUS_SNAPSHOTS.len());
}

/// A snapshot by value: every column, with string, frame and stack ids resolved to what they
/// name (the two readers number ids in the order each meets them).
fn by_value(s: &Snapshot) -> Vec<String> {
    let st = |id| s.str(id).to_owned();
    let stack = |id| {
        s.stacks
            .get(id)
            .iter()
            .map(|&f| {
                let f = f as usize;
                (
                    st(s.frames.filename[f]),
                    s.frames.line[f],
                    st(s.frames.name[f]),
                )
            })
            .collect::<Vec<_>>()
    };
    let mut out = vec![format!("{:?}", s.kind)];
    let g = &s.segments;
    for i in 0..g.len() {
        out.push(format!(
            "segment {:?}",
            (
                g.device[i],
                g.address[i],
                g.total_size[i],
                g.allocated_size[i],
                g.active_size[i],
                g.requested_size[i],
                g.stream[i],
                st(g.segment_type[i]),
                g.pool_id[i],
                g.is_expandable[i],
                stack(g.stack[i]),
                (g.first_block[i], g.first_block[i + 1]),
            )
        ));
    }
    let b = &s.blocks;
    for i in 0..b.len() {
        out.push(format!(
            "block {:?}",
            (
                b.segment[i],
                b.address[i],
                b.size[i],
                b.requested_size[i],
                st(b.state[i]),
                stack(b.stack[i]),
            )
        ));
    }
    for (d, t) in s.device_traces.iter().enumerate() {
        out.push(format!("device {d}: {} entries", t.len()));
        for i in 0..t.len() {
            out.push(format!(
                "entry {:?}",
                (
                    st(t.action_name[i]),
                    t.action[i],
                    t.addr[i],
                    t.size[i],
                    t.stream[i],
                    t.time_us[i],
                    stack(t.stack[i]),
                    t.device_free[i],
                    st(t.category[i]),
                    st(t.user_metadata[i]),
                )
            ));
        }
    }
    out.push(format!("settings {:?}", s.allocator_settings));
    out.push(format!("annotations {:?}", s.external_annotations));
    out.push(format!("warnings {:?}", s.warnings));
    out
}

#[test]
fn the_streamed_reader_gives_the_whole_file_readers_model_in_every_column() {
    let mut n = 0;
    for rel in CORPUS_SNAPSHOTS {
        let Some(bytes) = tracelight_testkit::bytes(rel) else {
            continue;
        };
        let whole = snapshot::parse(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let want = by_value(&whole);
        // Slices of odd sizes cut opcodes, strings and ints anywhere; one slice is the file.
        // (Tiny slices only on the small files: they cost a copy of the pending bytes each.)
        let slices = if bytes.len() < 200_000 {
            vec![bytes.len(), 4093, 7]
        } else {
            vec![bytes.len(), 65_521]
        };
        for slice in slices {
            let got = snapshot::parse_streamed(&bytes, slice)
                .unwrap_or_else(|e| panic!("{rel} in slices of {slice}: {e}"));
            let got = by_value(&got);
            assert_eq!(got.len(), want.len(), "{rel} in slices of {slice}: rows");
            for (k, (a, b)) in got.iter().zip(&want).enumerate() {
                assert_eq!(a, b, "{rel} in slices of {slice}: row {k}");
            }
        }
        n += 1;
    }
    tracelight_testkit::checked("snapshots read streamed", n, CORPUS_SNAPSHOTS.len());
}

/// The generated fixtures with the newer content (private pools, `user_metadata`, `oom` entries,
/// a segments-only dump), kept in the repo: both readers give the same model.
#[test]
fn the_streamed_reader_reads_the_generated_content_fixtures_as_the_whole_file_reader() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/snapshots-gen");
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for d in [dir.clone(), dir.join("oom_run")] {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "pickle") {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 4, "{} fixtures", files.len());
    for p in files {
        let bytes = std::fs::read(&p).unwrap();
        let whole = snapshot::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        for slice in [bytes.len(), 7] {
            let got = snapshot::parse_streamed(&bytes, slice).unwrap();
            assert_eq!(
                by_value(&got),
                by_value(&whole),
                "{} in slices of {slice}",
                p.display()
            );
        }
    }
}

/// The page builds a device's replays a few thousand entries a task (`ReplayBuild`): in steps of
/// any size the replay is the one-go replay's, on every corpus snapshot, device and kind.
#[test]
fn a_replay_built_in_steps_is_the_replay_in_one_go() {
    use tracelight_core::analysis::snapshot::{replay, ReplayBuild};
    let mut n = 0;
    for rel in CORPUS_SNAPSHOTS {
        let Some(s) = load(rel) else { continue };
        let mut devices: Vec<i64> = s.segments.device.clone();
        devices.extend(0..s.device_traces.len() as i64);
        devices.sort_unstable();
        devices.dedup();
        for &d in &devices {
            for segments in [false, true] {
                let want = format!("{:?}", replay(&s, d, segments));
                for step in [1, 7, 1000] {
                    let mut b = ReplayBuild::new(&s, d, segments);
                    let got = loop {
                        if let Some(r) = b.step(step) {
                            break r;
                        }
                    };
                    assert_eq!(
                        format!("{got:?}"),
                        want,
                        "{rel} device {d} segments {segments} step {step}"
                    );
                }
            }
        }
        n += 1;
    }
    tracelight_testkit::checked("replays built in steps", n, CORPUS_SNAPSHOTS.len());
}

/// The worker's views (each device's replays made once for all) equal the summary, chart and
/// flame graph each made on its own, on every corpus snapshot.
#[test]
fn views_with_shared_replays_equal_each_view_made_alone() {
    use tracelight_core::analysis::memory_chart::{snapshot_chart, MAX_BANDS};
    use tracelight_core::analysis::snapshot::summarize;
    use tracelight_core::analysis::snapshot_flame::peak_flame;
    use tracelight_core::report::snapshot_wire::{charted_devices, SnapshotViews};
    let mut n = 0;
    for rel in CORPUS_SNAPSHOTS {
        let Some(s) = load(rel) else { continue };
        let v = SnapshotViews::of(&s);
        let sum = summarize(&s);
        assert_eq!(
            format!("{:?}", v.summary),
            format!("{sum:?}"),
            "{rel}: summary"
        );
        let devices = charted_devices(&sum);
        assert_eq!(v.charts.len(), devices.len(), "{rel}: charts");
        for (k, &d) in devices.iter().enumerate() {
            assert_eq!(v.charts[k].0, d, "{rel}: chart {k}'s device");
            assert_eq!(
                format!("{:?}", v.charts[k].1),
                format!("{:?}", snapshot_chart(&s, d, MAX_BANDS)),
                "{rel}: device {d}'s chart"
            );
            assert_eq!(
                format!("{:?}", v.flames[k]),
                format!("{:?}", peak_flame(&s, d)),
                "{rel}: device {d}'s flame graph"
            );
        }
        n += 1;
    }
    tracelight_testkit::checked("views with shared replays", n, CORPUS_SNAPSHOTS.len());
}
