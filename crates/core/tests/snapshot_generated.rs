//! The generated snapshots of `tests/fixtures/snapshots-gen/` (its `gen.py`): new snapshot content
//! (pools, `user_metadata`, `annotate`, `oom`, expandable segments, segments-only, Python-only and
//! C++ stacks), the snapshot diff and a folder of OOM dumps, each checked against what the
//! generator built in (`expected.json`, answers by construction) and against torch's
//! `_memory_viz` on the same files (`memory_viz.reference.json`: `memory()` flame-graph lines,
//! `compare()`'s segments only before / after).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use serde_json::Value;
use std::collections::BTreeMap;
use tracelight_core::analysis::snapshot::summarize;
use tracelight_core::analysis::snapshot_diff::{diff, Change};
use tracelight_core::analysis::snapshot_dump::{dump_state, PoolKind};
use tracelight_core::analysis::snapshot_ranks::{compare, RankDump};
use tracelight_core::ingest::snapshot::Snapshot;
use tracelight_core::ingest::{load_bytes, Loaded};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/snapshots-gen");
const MIB: u64 = 1 << 20;

fn snap(rel: &str) -> Snapshot {
    let bytes = std::fs::read(format!("{DIR}/{rel}")).unwrap();
    match load_bytes(rel, &bytes) {
        Ok(Loaded::Snapshot(s)) => *s,
        _ => panic!("{rel}: not read as a snapshot"),
    }
}

fn json(rel: &str) -> Value {
    serde_json::from_slice(&std::fs::read(format!("{DIR}/{rel}")).unwrap()).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// memory_viz `memory()` lines of `active_allocated` blocks with a stack: the requested bytes of
/// each distinct frames fragment, sorted (`<gaps>` lines are rounding, not a stack).
fn viz_stack_bytes(name: &str) -> Vec<u64> {
    let r = json("memory_viz.reference.json");
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    for l in r[name]["memory"].as_array().unwrap() {
        let l = l.as_str().unwrap();
        let (key, n) = l.rsplit_once(' ').unwrap();
        let parts: Vec<&str> = key.splitn(3, ';').collect();
        if parts[1] != "active_allocated" || parts[2] == "<gaps>" {
            continue;
        }
        *by.entry(parts[2].to_owned()).or_insert(0) += n.parse::<u64>().unwrap();
    }
    let mut v: Vec<u64> = by.into_values().collect();
    v.sort_unstable();
    v
}

#[test]
fn pools_metadata_annotations_and_expandable_segments_are_as_built() {
    let s = snap("content.pickle");
    let e = &json("expected.json")["content"];
    let sum = summarize(&s);
    let d = &sum.devices[0];
    assert_eq!(d.reserved_bytes, u(&e["reserved_bytes"]));
    assert_eq!(d.allocated_bytes, u(&e["allocated_bytes"]));
    assert_eq!(d.fragmentation_bytes, u(&e["fragmentation_bytes"]));
    assert_eq!(d.expandable_segments, u(&e["expandable_segments"]));
    let st = &d.dump;
    assert!(st.has_trace);
    assert_eq!(st.live_blocks, u(&e["live_blocks"]));
    assert_eq!(st.live_bytes, d.allocated_bytes);
    // Every pool a row of its own, the default first; kinds from c10's id convention.
    let pools = e["pools"].as_array().unwrap();
    assert_eq!(st.pools.len(), pools.len());
    for (p, x) in st.pools.iter().zip(pools) {
        assert_eq!(
            (p.pool_id.0, p.pool_id.1),
            (
                x["pool_id"][0].as_i64().unwrap(),
                x["pool_id"][1].as_i64().unwrap()
            )
        );
        assert_eq!(serde_json::to_value(p.kind).unwrap(), x["kind"]);
        assert_eq!(
            (p.segments, p.reserved_bytes, p.allocated_bytes),
            (
                u(&x["segments"]),
                u(&x["reserved_bytes"]),
                u(&x["allocated_bytes"])
            )
        );
    }
    assert_eq!(st.pools[2].name, "CUDA graph pool 1");
    assert_eq!(
        d.private_pools.iter().map(|p| p.kind).collect::<Vec<_>>(),
        [PoolKind::MemPool, PoolKind::CudaGraph]
    );
    // Live bytes by the allocation's user_metadata (a dict set as JSON text).
    let meta: BTreeMap<String, (u64, u64)> = st
        .by_metadata
        .iter()
        .map(|g| (g.user_metadata.clone(), (g.blocks, g.bytes)))
        .collect();
    let want: BTreeMap<String, (u64, u64)> = e["by_metadata"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), (u(&v[0]), u(&v[1]))))
        .collect();
    assert_eq!(meta, want);
    // The annotated block, and frames: user Python over the allocator's C++ (stacks="all").
    for b in &st.largest_blocks {
        let want: Vec<String> = e["annotations"]
            .get(b.addr.to_string())
            .map(|v| {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(b.annotations, want, "block {:#x}", b.addr);
        if let Some(f) = e["block_frames"].get(b.addr.to_string()) {
            assert_eq!(b.frame, f.as_str().unwrap());
        }
    }
    // The OOM entry.
    assert_eq!(d.ooms.len(), 1);
    assert_eq!(d.ooms[0].requested_bytes, u(&e["oom"]["requested_bytes"]));
    assert_eq!(
        d.ooms[0].device_free_bytes,
        u(&e["oom"]["device_free_bytes"])
    );
}

#[test]
fn live_bytes_by_stack_match_memory_viz() {
    for name in ["content", "segments_only", "step_a", "step_b"] {
        let s = snap(&format!("{name}.pickle"));
        let st = dump_state(&s, 0);
        // Ours: requested bytes per whole stack of live blocks (memory_viz writes requested).
        let mut by: BTreeMap<u32, u64> = BTreeMap::new();
        for b in tracelight_core::analysis::snapshot_dump::live_blocks(&s, 0) {
            *by.entry(b.stack).or_insert(0) += b.requested_size;
        }
        let mut ours: Vec<u64> = by.into_values().collect();
        ours.sort_unstable();
        assert_eq!(ours, viz_stack_bytes(name), "{name}");
        // Live bytes are the allocator's own allocated total.
        let allocated: u64 = s.segments.allocated_size.iter().sum();
        assert_eq!(st.live_bytes, allocated, "{name}");
    }
}

#[test]
fn segments_only_snapshot_has_state_and_blocks_but_no_timeline() {
    let s = snap("segments_only.pickle");
    let full = snap("content.pickle");
    assert!(!s.has_trace_entries());
    assert!(full.has_trace_entries());
    let (a, b) = (&summarize(&s).devices[0], &summarize(&full).devices[0]);
    assert!(!a.dump.has_trace);
    assert_eq!(a.trace_entries, 0);
    assert_eq!(
        (
            a.reserved_bytes,
            a.allocated_bytes,
            a.dump.live_blocks,
            a.dump.pools.len()
        ),
        (
            b.reserved_bytes,
            b.allocated_bytes,
            b.dump.live_blocks,
            b.dump.pools.len()
        )
    );
    // No trace: no metadata was recorded, every live block is in the "" group.
    assert_eq!(a.dump.by_metadata.len(), 1);
    assert_eq!(a.dump.by_metadata[0].bytes, a.allocated_bytes);
    let t = tracelight_core::analysis::snapshot::active_timeline(&s, 0, 100, 10);
    assert!(t.points.len() <= 1, "no invented timeline: {:?}", t.points);
}

#[test]
fn diff_of_two_steps_is_as_built_and_matches_memory_viz_compare() {
    let (a, b) = (snap("step_a.pickle"), snap("step_b.pickle"));
    let e = &json("expected.json")["step"];
    let d = diff(&a, &b);
    for (side, t) in [("a", &d.a), ("b", &d.b)] {
        assert_eq!(t.reserved_bytes, u(&e[side]["reserved_bytes"]), "{side}");
        assert_eq!(t.allocated_bytes, u(&e[side]["allocated_bytes"]), "{side}");
        assert_eq!(
            t.fragmentation_bytes,
            u(&e[side]["fragmentation_bytes"]),
            "{side}"
        );
        assert_eq!(t.segments, u(&e[side]["segments"]), "{side}");
    }
    let rows: BTreeMap<&str, (u64, u64, Change)> = d
        .by_frame
        .iter()
        .map(|r| (r.key.as_str(), (r.a_bytes, r.b_bytes, r.change)))
        .collect();
    for (k, v) in e["by_frame"].as_object().unwrap() {
        let (ab, bb, c) = rows[k.as_str()];
        assert_eq!((ab, bb), (u(&v[0]), u(&v[1])), "{k}");
        assert_eq!(c.label(), v[2].as_str().unwrap(), "{k}");
    }
    assert_eq!(d.by_frame.len(), e["by_frame"].as_object().unwrap().len());
    // Largest change first: the KV cache.
    assert_eq!(d.by_frame[0].key, "/home/u/cache.py:8:allocate_kv");
    // Segments: as memory_viz.compare prints them.
    let viz = json("memory_viz.reference.json");
    let printed: Vec<String> = viz["compare_step"]["printed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_owned())
        .collect();
    let only_a: Vec<u64> = d.segments.only_a.iter().map(|s| s.address).collect();
    let only_b: Vec<u64> = d.segments.only_b.iter().map(|s| s.address).collect();
    assert_eq!(printed[0], format!("only_before = {only_a:?}"));
    assert_eq!(printed[1], format!("only_after = {only_b:?}"));
    assert_eq!(
        only_a.clone(),
        e["segments_only_a"]
            .as_array()
            .unwrap()
            .iter()
            .map(u)
            .collect::<Vec<_>>()
    );
    assert_eq!(d.segments.both, u(&e["segments_both"]));
    // The whole-stack rows keep the C++ frames apart from the Python ones (stacks="all").
    assert!(d
        .by_stack
        .iter()
        .any(|r| r.key.contains("empty_cuda") && r.change == Change::Grew));
    // A diff with itself changes nothing.
    let same = diff(&a, &a);
    assert!(same.by_frame.iter().all(|r| r.change == Change::Same));
    assert!(same.segments.only_a.is_empty() && same.segments.only_b.is_empty());
}

#[test]
fn oom_folder_names_the_rank_that_differs_and_the_failed_allocation() {
    let e = &json("expected.json")["oom_run"];
    let dumps: Vec<RankDump> = (0..4)
        .map(|r| {
            let rel = format!("oom_run/memory_rank{r}.pickle");
            RankDump::of(r, &rel, &snap(&rel))
        })
        .collect();
    let run = compare(dumps);
    let alloc: Vec<u64> = run.dumps.iter().map(|d| d.allocated_bytes).collect();
    let reserved: Vec<u64> = run.dumps.iter().map(|d| d.reserved_bytes).collect();
    assert_eq!(
        alloc,
        e["allocated_bytes"]
            .as_array()
            .unwrap()
            .iter()
            .map(u)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        reserved,
        e["reserved_bytes"]
            .as_array()
            .unwrap()
            .iter()
            .map(u)
            .collect::<Vec<_>>()
    );
    assert_eq!(run.median_allocated_bytes, 12 * MIB);
    let differs: Vec<i64> = run.differs.iter().map(|d| d.rank).collect();
    assert_eq!(differs, [2]);
    let d = &run.differs[0];
    assert_eq!(d.allocated_delta_bytes, 24 * MIB as i64);
    assert!(d.recorded_oom);
    assert_eq!(d.excess[0].frame, e["excess_frame"].as_str().unwrap());
    assert_eq!(d.excess[0].delta_bytes as u64, u(&e["excess_bytes"]));
    assert_eq!(run.ranks_with_oom, [2]);
    let f = &run.dumps[2].ooms[0];
    assert_eq!(
        (f.requested_bytes, f.device_free_bytes, f.frame.as_str()),
        (
            u(&e["oom"]["requested_bytes"]),
            u(&e["oom"]["device_free_bytes"]),
            e["oom"]["frame"].as_str().unwrap()
        )
    );
    let big = &run.dumps[2].largest_blocks[0];
    assert_eq!(
        (big.size, big.frame.as_str()),
        (24 * MIB, "/home/u/cache.py:8:allocate_kv")
    );
    assert_eq!(big.user_metadata, "kv_cache");
}

#[test]
fn each_private_pool_packs_on_rows_of_its_own() {
    use tracelight_core::analysis::snapshot_state::{pack, state_at_dump};
    let st = state_at_dump(&snap("content.pickle"), 0);
    let (placed, rows, _) = pack(&st);
    // Four segments in three pools: the default pool's two, a CUDA graph pool's, a MemPool's.
    assert_eq!(st.segments.len(), 4);
    let mut pool_of_row: BTreeMap<usize, (i64, i64)> = BTreeMap::new();
    for (s, &(row, _)) in st.segments.iter().zip(&placed) {
        let p = *pool_of_row.entry(row).or_insert(s.pool);
        assert_eq!(p, s.pool, "row {row} mixes pools");
    }
    // The default pool's 20 and 64 MiB segments do not fit one 64 MiB-wide row (memory_viz's
    // packing): two rows; then one row each for the two private pools.
    assert_eq!(rows, 4);
    assert_eq!(pool_of_row.values().filter(|p| **p != (0, 0)).count(), 2);
    assert_eq!(st.reserved_bytes, 90 * MIB);
}
