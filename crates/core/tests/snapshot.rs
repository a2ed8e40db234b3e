//! CUDA memory snapshots: every corpus pickle loads, and its numbers agree with independent answers.
//!
//! Expected values are `tests/scripts/snapshot_expected.out.json`, written by
//! `tests/scripts/snapshot_expected.py` (stdlib `pickle` only: the segment/block sums and a literal
//! transcription of torch's `MemoryViz.js` replay; its docstring has the command) and checked in.
//! The synthetic snapshots are also checked against the simulator's ground truth in
//! `generated/snapshots/synthetic_snapshot_seed23.reference.json`, read in place.
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use std::collections::BTreeMap;
use tracelight_core::analysis::snapshot::{active_timeline, replay, summarize, DeviceMemory};
use tracelight_core::ingest::snapshot::{Action, Snapshot, SnapshotKind};
use tracelight_core::ingest::{load_bytes, Loaded};
use tracelight_core::ErrorKind;

fn corpus_file(rel: &str) -> Option<Vec<u8>> {
    tracelight_testkit::bytes(rel)
}

/// Loads under the name `unknown` too: detection is by content only.
fn load_snapshot(rel: &str) -> Option<Box<Snapshot>> {
    let bytes = corpus_file(rel)?;
    match load_bytes("unknown", &bytes) {
        Ok(Loaded::Snapshot(s)) => Some(s),
        Ok(other) => panic!("{rel}: loaded as {:?}", other.format()),
        Err(e) => panic!("{rel}: {e}"),
    }
}

/// The script's answers: `files` keyed by corpus path, each with `devices` (snapshots) or the
/// timeline's peak figures.
fn independent() -> serde_json::Value {
    let text = include_str!("scripts/snapshot_expected.out.json");
    serde_json::from_str(text).unwrap()
}

fn check(file: &str, got: &DeviceMemory, e: &serde_json::Value) {
    let ctx = format!("{file} device {}", e["device"]);
    let n = |k: &str| e[k].as_u64().unwrap_or_else(|| panic!("{ctx}: no {k}"));
    let counts = |k: &str| -> BTreeMap<String, u64> {
        serde_json::from_value(e[k].clone()).unwrap_or_else(|err| panic!("{ctx} {k}: {err}"))
    };
    assert_eq!(got.device, e["device"].as_i64().unwrap(), "{ctx}");
    assert_eq!(got.segments, n("segments"), "{ctx} segments");
    assert_eq!(got.reserved_bytes, n("reserved_bytes"), "{ctx} reserved");
    assert_eq!(got.allocated_bytes, n("allocated_bytes"), "{ctx} allocated");
    assert_eq!(got.active_bytes, n("active_bytes"), "{ctx} active");
    assert_eq!(got.requested_bytes, n("requested_bytes"), "{ctx} requested");
    assert_eq!(
        got.largest_free_block_bytes,
        n("largest_free_block_bytes"),
        "{ctx} largest free"
    );
    assert_eq!(got.blocks, counts("blocks"), "{ctx} blocks");
    assert_eq!(got.trace_entries, n("trace_entries"), "{ctx} entries");
    assert_eq!(got.actions, counts("actions"), "{ctx} actions");
    assert_eq!(
        got.peak_active_bytes,
        n("peak_active_bytes"),
        "{ctx} peak active"
    );
    assert_eq!(
        got.peak_reserved_bytes,
        n("peak_reserved_bytes"),
        "{ctx} peak reserved"
    );
}

#[test]
fn every_corpus_snapshot_matches_the_independent_replay() {
    let reference = independent();
    let files: Vec<(&String, &serde_json::Value)> = reference["files"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(path, _)| path.ends_with(".pickle"))
        .collect();
    // 10 real dumps and the simulator's 4: a script run that lost some fails here.
    assert_eq!(files.len(), 14);
    for (file, e) in files {
        let Some(s) = load_snapshot(file) else {
            continue;
        };
        assert_eq!(s.kind, SnapshotKind::Allocator, "{file}");
        let sum = summarize(&s);
        let want = e["devices"].as_array().unwrap();
        assert_eq!(sum.devices.len(), want.len(), "{file}");
        for (g, x) in sum.devices.iter().zip(want) {
            check(file, g, x);
        }
    }
}

/// The simulator's ground truth: state figures per device, entry/action counts, and — where the trace
/// starts empty — its replay peak and live-at-end bytes, which then equal memory_viz's definition.
#[test]
fn synthetic_snapshots_match_the_simulator_ground_truth() {
    let Some(reference) =
        corpus_file("generated/snapshots/synthetic_snapshot_seed23.reference.json")
    else {
        return;
    };
    let reference: serde_json::Value = serde_json::from_slice(&reference).unwrap();
    let files = reference["files"].as_object().unwrap();
    assert_eq!(files.len(), 4);
    for (name, v) in files {
        let s = load_snapshot(&format!("generated/snapshots/{name}")).unwrap();
        let sum = summarize(&s);
        let gt = &v["ground_truth"];
        for (dev, want) in gt["per_device"].as_object().unwrap() {
            let d: i64 = dev.parse().unwrap();
            let got = sum.devices.iter().find(|x| x.device == d).unwrap();
            let n = |k: &str| want[k].as_u64().unwrap();
            assert_eq!(got.segments, n("segments"), "{name} {d}");
            assert_eq!(got.reserved_bytes, n("reserved"), "{name} {d}");
            assert_eq!(got.allocated_bytes, n("allocated"), "{name} {d}");
            assert_eq!(got.active_bytes, n("active"), "{name} {d}");
            assert_eq!(got.requested_bytes, n("requested"), "{name} {d}");
            assert_eq!(
                got.largest_free_block_bytes,
                n("largest_free_block"),
                "{name} {d}"
            );
            assert_eq!(
                got.expandable_segments,
                n("expandable_segments"),
                "{name} {d}"
            );
            let blocks: BTreeMap<String, u64> =
                serde_json::from_value(want["blocks"].clone()).unwrap();
            assert_eq!(got.blocks, blocks, "{name} {d}");
        }
        for t in gt["device_traces"].as_array().unwrap() {
            let d = t["device"].as_i64().unwrap();
            let got = sum.devices.iter().find(|x| x.device == d).unwrap();
            assert_eq!(
                got.trace_entries,
                t["entries"].as_u64().unwrap(),
                "{name} {d}"
            );
            let actions: BTreeMap<String, u64> =
                serde_json::from_value(t["actions"].clone()).unwrap();
            assert_eq!(got.actions, actions, "{name} {d}");
            // Allocations made in the trace and never freed.
            let r = replay(&s, d, false);
            let live_end: u64 = r
                .elements
                .iter()
                .filter(|e| e.start.is_some() && e.end.is_none())
                .map(|e| e.size)
                .sum();
            assert_eq!(
                live_end,
                t["requested_bytes_live_at_end_from_trace"]
                    .as_u64()
                    .unwrap(),
                "{name} {d}"
            );
            if r.preexisting_bytes == 0 && got.trace_entries > 0 {
                assert_eq!(
                    got.peak_active_bytes,
                    t["peak_requested_bytes_of_allocs_seen_in_trace"]
                        .as_u64()
                        .unwrap(),
                    "{name} {d}"
                );
            }
        }
    }
}

#[test]
fn synthetic_oom_private_pool_and_peak_blocks() {
    let Some(s) = load_snapshot("generated/snapshots/synthetic_snapshot_seed23.pickle") else {
        return;
    };
    let sum = summarize(&s);
    let d0 = &sum.devices[0];
    assert_eq!(d0.ooms.len(), 1);
    assert_eq!(d0.ooms[0].requested_bytes, 120 << 30);
    assert!(d0.ooms[0].device_free_bytes > 0);
    assert!(d0.private_pools.is_empty());
    // The blocks live at the peak add up to the peak (no pre-existing allocations here).
    let live: u64 = d0.peak_blocks.iter().map(|b| b.size).sum();
    assert!(d0.peak_blocks_count as usize <= 100);
    assert_eq!(live, d0.peak_active_bytes);
    assert!(d0.peak_active_time_us.is_some());
    assert!(d0.by_stack.iter().any(|g| g.frame.contains("train.py")));
    assert!(d0.peak_blocks[0].top_frames[0].contains(".py:"));
    // Expandable segments on device 1.
    assert_eq!(sum.devices[1].expandable_segments, 2);
}

#[test]
fn cpp_frames_and_time_less_snapshots_still_attribute_to_python() {
    if let Some(s) =
        load_snapshot("real/snapshots/select_n_2023-12_4gpu_cpp_frames_snapshot.pickle")
    {
        let sum = summarize(&s);
        let g = &sum.devices[0].by_stack[0];
        assert!(!g.frame.starts_with("??"), "{}", g.frame);
        assert_eq!(s.device_traces.len(), 4);
    }
    if let Some(s) = load_snapshot("real/snapshots/ftcourse_2024-06_memory_snapshot.pickle") {
        assert!(s.device_traces[0].time_us.iter().all(|t| t.is_none()));
        assert!(s.allocator_settings.is_none());
        let tl = active_timeline(&s, 0, 500, 1000);
        assert!(tl.points.len() <= 500);
        assert!(tl.points.iter().all(|p| p.1.is_none()));
        assert_eq!(tl.intervals.len(), 1000);
        assert_eq!(
            tl.points.iter().map(|p| p.2).max(),
            Some(summarize(&s).devices[0].peak_active_bytes)
        );
    }
}

/// On real dumps the "top frame" showed `CUDACachingAllocator.cpp:0:…::malloc` whenever a stack had
/// no Python frame among its first few (autograd-engine threads, deep C++ stacks).
#[test]
fn regression_top_frame_is_never_the_caching_allocator() {
    let Some(s) = load_snapshot("real/snapshots/cs336_silmont_tiny_mem_snapshot.pickle") else {
        return;
    };
    let sum = summarize(&s);
    let d = &sum.devices[0];
    let frames = d
        .by_stack
        .iter()
        .map(|g| g.frame.as_str())
        .chain(d.peak_blocks.iter().map(|b| b.frame.as_str()));
    for f in frames {
        assert!(!f.contains("CachingAllocator"), "{f}");
    }
    // A C++-only backward stack is named by its autograd node, without the parameter list (the
    // dump's symbol is `...BmmBackward0::apply(std::vector<at::Tensor, std::allocator<...> >&&)`).
    assert!(d
        .by_stack
        .iter()
        .any(|g| g.frame == "torch::autograd::generated::BmmBackward0::apply"));
    assert!(d
        .by_stack
        .iter()
        .any(|g| g.frame == "torch::autograd::generated::details::div_tensor_other_backward"));
}

#[test]
fn frames_and_stacks_are_interned_once() {
    let Some(s) = load_snapshot("real/snapshots/cs336_nothanmin_memory_snapshot.pickle") else {
        return;
    };
    let entries: usize = s.device_traces.iter().map(|t| t.len()).sum();
    assert!(s.stacks.len() < entries / 4, "{} stacks", s.stacks.len());
    assert!(
        s.frames.filename.len() < 2000,
        "{} frames",
        s.frames.filename.len()
    );
    let settings = s.allocator_settings.as_ref().unwrap();
    assert_eq!(settings["max_split_size"], -1);
    assert!(s.external_annotations.as_ref().unwrap().is_array());
}

/// memory_viz's profile_plot dict is a different schema: it loads, says so, and recomputes totals.
#[test]
fn profile_to_snapshot_pickle_loads_with_a_warning() {
    let Some(s) =
        load_snapshot("generated/resnet_all.1795343593430138415.profile_to_snapshot.pickle")
    else {
        return;
    };
    assert_eq!(s.kind, SnapshotKind::ProfilePlot);
    assert!(!s.warnings.is_empty());
    let d = &summarize(&s).devices[0];
    assert_eq!(d.segments, 1);
    assert_eq!(d.reserved_bytes, 158_588_480);
    // From snapshot_expected.py (memory_viz replay, which needs no allocator totals).
    assert_eq!(d.peak_active_bytes, 4_641_568);
    assert_eq!(d.peak_reserved_bytes, 158_588_480);
    assert_eq!(d.trace_entries, 2330);
    // Recomputed from the 122 active blocks (the dict has no allocated_size).
    assert_eq!(d.allocated_bytes, 255_960);
}

// ---- hostile pickles: each gets its own error, never a panic -------------------------------------

fn err_of(bytes: &[u8]) -> ErrorKind {
    match load_bytes("hostile.pickle", bytes) {
        Ok(l) => panic!("loaded {:?}", l.format()),
        Err(e) => {
            assert_eq!(e.file.as_deref(), Some("hostile.pickle"));
            e.kind
        }
    }
}

#[test]
fn hostile_global_opcode_is_refused() {
    // pickle.dumps(os.system, protocol=2) style: GLOBAL 'os\nsystem'
    let k = err_of(b"\x80\x02cposix\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.");
    assert!(
        matches!(&k, ErrorKind::Refused(m) if m.contains("GLOBAL")),
        "{k:?}"
    );
    let k = err_of(b"\x80\x04\x8c\x02os\x8c\x06system\x93.");
    assert!(
        matches!(&k, ErrorKind::Refused(m) if m.contains("STACK_GLOBAL")),
        "{k:?}"
    );
    let k = err_of(b"\x80\x04}\x94)R.");
    assert!(
        matches!(&k, ErrorKind::Refused(m) if m.contains("REDUCE")),
        "{k:?}"
    );
}

#[test]
fn hostile_truncated_snapshot_is_truncated() {
    let Some(b) = corpus_file("real/snapshots/cs336_silmont_tiny_mem_snapshot.pickle") else {
        return;
    };
    for cut in [3, 100, b.len() / 2, b.len() - 1] {
        assert_eq!(err_of(&b[..cut]), ErrorKind::Truncated, "cut at {cut}");
    }
}

#[test]
fn hostile_huge_declared_length_is_a_limit_not_an_allocation() {
    // BINUNICODE8 claiming 2^60 bytes.
    let k = err_of(b"\x80\x04\x8d\x00\x00\x00\x00\x00\x00\x00\x10abc.");
    assert!(
        matches!(&k, ErrorKind::Limit(m) if m.contains("declared length")),
        "{k:?}"
    );
    // BINBYTES claiming 4 GiB - 1 in a short file: truncated.
    assert_eq!(
        err_of(b"\x80\x04B\xff\xff\xff\xffabc."),
        ErrorKind::Truncated
    );
    // LONG_BINPUT with an index far past anything decoded.
    let k = err_of(b"\x80\x04Nr\xff\xff\xff\x7f.");
    assert!(
        matches!(&k, ErrorKind::Limit(m) if m.contains("memo")),
        "{k:?}"
    );
}

#[test]
fn hostile_deep_nesting_hits_the_mark_limit() {
    let mut b = b"\x80\x04".to_vec();
    b.extend(std::iter::repeat_n(b'(', 100_000));
    b.push(b'.');
    let k = err_of(&b);
    assert!(
        matches!(&k, ErrorKind::Limit(m) if m.contains("nesting")),
        "{k:?}"
    );
    // Deep but legal nesting of lists (each inside the previous) decodes without recursion; a bare
    // list would be torch 1.13's list of segments, but its item is a list, not a segment dict.
    let mut b = b"\x80\x04".to_vec();
    b.extend(std::iter::repeat_n(b']', 200_000));
    b.extend(std::iter::repeat_n(b'a', 199_999));
    b.push(b'.');
    match load_bytes("deep.pickle", &b) {
        Err(e) => assert!(
            matches!(&e.kind, ErrorKind::Incompatible(m) if m.contains("not a segment dict")),
            "{e}"
        ),
        Ok(other) => panic!("{:?}", other.format()),
    }
}

#[test]
fn hostile_self_referencing_list_does_not_hang() {
    // l = []; l.append(l); pickle.dumps({'segments': l}, protocol=4)
    let b = b"\x80\x04}\x94\x8c\x08segments\x94]\x94h\x02as\x8c\x12allocator_settings\x94h\x02s.";
    match load_bytes("cycle.pickle", b) {
        Ok(Loaded::Snapshot(s)) => assert!(s.allocator_settings.is_some()),
        Ok(other) => panic!("{:?}", other.format()),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn a_pickle_that_is_no_snapshot_is_incompatible() {
    // pickle.dumps({'a': 1}, protocol=4)
    let k = err_of(b"\x80\x04\x95\n\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01a\x94K\x01s.");
    assert!(matches!(k, ErrorKind::Incompatible(_)), "{k:?}");
}

/// A ring buffer that dropped the first allocations leaves frees with no alloc: 11 such frees,
/// 55,557,652 B, on device 0 (counted from the pickle with Python: `free_completed` entries whose
/// address had no earlier `alloc`). This generator records frees as torch does under
/// `_record_memory_history(context="alloc")`: every free repeats its allocation's stack (all 10
/// alloc/free pairs of device 0 have identical frames), so those 11 frees name their allocation
/// site and nothing is left under `<allocated before the trace>` (issue 18); their bytes are in
/// the groups' totals.
#[test]
fn frees_without_an_alloc_carry_their_allocation_stack_in_an_alloc_context_trace() {
    let Some(s) = load_snapshot("generated/snapshots/synthetic_snapshot_seed23.ring_buffer.pickle")
    else {
        return;
    };
    let sum = summarize(&s);
    let d = sum.devices.iter().find(|d| d.device == 0).unwrap();
    assert!(
        d.by_stack.iter().all(|g| !g.frame.starts_with('<')),
        "{:?}",
        d.by_stack
    );
    assert!(d.peak_blocks.iter().all(|b| b.freed_at.is_none()));
    let t = s.trace(0).unwrap();
    let allocs = t.action.iter().filter(|&&a| a == Action::Alloc).count() as u64;
    let grouped: u64 = d.by_stack.iter().map(|g| g.allocs).sum();
    // Every trace alloc, the 11 pre-trace frees, and the blocks live at the dump the trace never
    // allocated: each in exactly one group.
    assert!(grouped >= allocs + 11, "{grouped} < {allocs} + 11");
}
