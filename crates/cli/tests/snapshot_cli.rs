//! `tracelight diff A.pickle B.pickle` and `tracelight summary|analyze DIR` on a folder of OOM
//! dumps, run as the command (end to end), on the generated snapshots of
//! `crates/core/tests/fixtures/snapshots-gen/` whose answers are known by construction (its
//! `gen.py` and `expected.json`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use serde_json::Value;
use std::process::Command;

const GEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../core/tests/fixtures/snapshots-gen"
);
const MIB: u64 = 1 << 20;

fn run(args: &[&str]) -> (String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_tracelight"))
        .args(args)
        .output()
        .expect("runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        out.status.code().unwrap_or(-1),
    )
}

fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(format!("{GEN}/expected.json")).unwrap()).unwrap()
}

#[test]
fn diff_of_two_snapshots_sniffs_them_and_reports_what_grew() {
    let (a, b) = (
        format!("{GEN}/step_a.pickle"),
        format!("{GEN}/step_b.pickle"),
    );
    let (out, code) = run(&["diff", &a, &b, "--json"]);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let d = &v["snapshot"]["diff"];
    let e = &expected()["step"];
    for side in ["a", "b"] {
        for k in [
            "reserved_bytes",
            "allocated_bytes",
            "fragmentation_bytes",
            "segments",
        ] {
            assert_eq!(d[side][k], e[side][k], "{side}.{k}");
        }
    }
    for r in d["by_frame"].as_array().unwrap() {
        let want = &e["by_frame"][r["key"].as_str().unwrap()];
        assert_eq!(
            (&r["a_bytes"], &r["b_bytes"], &r["change"]),
            (&want[0], &want[1], &want[2])
        );
    }
    assert_eq!(
        d["segments"]["only_b"][0]["address"].as_u64(),
        e["segments_only_b"][0].as_u64()
    );
    let (md, code) = run(&["diff", &a, &b]);
    assert_eq!(code, 0);
    assert!(
        md.contains("| reserved | 22.0MiB | 60.0MiB | +38.0MiB |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| `/home/u/cache.py:8:allocate_kv` | 0.0B | 32.0MiB | +32.0MiB | 0 → 1 | appeared |"
        ),
        "{md}"
    );
    // A snapshot against a trace is an error naming the file, not a panic.
    let trace = format!(
        "{}/../core/tests/fixtures/torch-2.15-cpu/modules.pt.trace.json.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    let (out, code) = run(&["diff", &a, &trace]);
    assert_ne!(code, 0, "{out}");
}

#[test]
fn folder_of_oom_dumps_opens_as_a_run() {
    let dir = format!("{GEN}/oom_run");
    let e = &expected()["oom_run"];
    let (out, code) = run(&["analyze", &dir, "--json"]);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let o = &v["oom_dumps"];
    let ranks: Vec<i64> = o["dumps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rank"].as_i64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 1, 2, 3]);
    let alloc: Vec<&Value> = o["dumps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["allocated_bytes"])
        .collect();
    assert_eq!(
        alloc,
        e["allocated_bytes"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(o["differs"].as_array().unwrap().len(), 1);
    assert_eq!(o["differs"][0]["rank"], 2);
    assert_eq!(o["differs"][0]["excess"][0]["frame"], e["excess_frame"]);
    let oom = &o["dumps"][2]["ooms"][0];
    assert_eq!(oom["requested_bytes"].as_u64(), Some(32 * MIB));
    assert_eq!(oom["frame"], e["oom"]["frame"]);
    assert_eq!(
        o["dumps"][2]["largest_blocks"][0]["size"].as_u64(),
        Some(24 * MIB)
    );
    let (md, code) = run(&["summary", &dir]);
    assert_eq!(code, 0);
    assert!(
        md.contains("**rank 2 differs**: allocated +24.0MiB vs the median"),
        "{md}"
    );
    assert!(
        md.contains("| 2 | 0 | 32.0MiB | 6.0MiB | `/home/u/model.py:52:logits` |"),
        "{md}"
    );
}
