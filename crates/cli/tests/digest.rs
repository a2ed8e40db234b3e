//! `tracelight digest` and a folder of digests read as a run: on the real 8-rank DLRM run the
//! digests' `analyze DIR --json` equals the traces' (per-trace analysis, ranks, collectives,
//! alignment, straggler, waited-for; only paths and `format` differ); on a hand-built 2-rank run
//! the late rank is found from digests alone; bad input fails with the file named.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracelight"))
        .args(args)
        .output()
        .expect("runs")
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn analyze(dir: &Path) -> Value {
    serde_json::from_str(&ok(&["analyze", dir.to_str().unwrap(), "--json"])).unwrap()
}

fn tmp(tag: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("tracelight-digest-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// Paths in `v` reduced to the file stem both runs share (`worker3_step_12.…pt.trace`).
fn strip_paths(v: &Value) -> Value {
    match v {
        Value::String(s) if s.contains('/') && !s.contains(' ') => {
            let base = s.rsplit('/').next().unwrap_or(s);
            let base = base.strip_suffix(".digest.json").unwrap_or(base);
            Value::String(base.strip_suffix(".json").unwrap_or(base).to_owned())
        }
        Value::String(s) => Value::String(
            // Warnings are "PATH: text".
            match s.split_once(": ") {
                Some((p, rest)) if p.contains('/') => format!(
                    "{}: {rest}",
                    strip_paths(&Value::String(p.into())).as_str().unwrap()
                ),
                _ => s.clone(),
            },
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_paths).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), strip_paths(v))).collect())
        }
        v => v.clone(),
    }
}

/// What a digest leaves out by design, each a list of rows for the page's timeline or chart:
/// the idle intervals (and the recommendations' pointers to them) and the roofline's rows per
/// op shape and per kernel, and each trace's `per_step` rows. Every total and each op's and
/// kernel's % of roof stay.
fn strip_lists(v: &Value) -> Value {
    let mut v = v.clone();
    let drop = |v: &mut Value, path: &[&str]| {
        let mut cur = v;
        for p in &path[..path.len() - 1] {
            match cur.get_mut(*p) {
                Some(x) => cur = x,
                None => return,
            }
        }
        if let Some(o) = cur.as_object_mut() {
            o.remove(path[path.len() - 1]);
        }
    };
    drop(&mut v, &["idle_causes", "intervals"]);
    drop(&mut v, &["roofline", "ops"]);
    drop(&mut v, &["roofline", "kernels"]);
    // A row per op and kernel per step: not kept in a digest (it would be most of its size).
    drop(&mut v, &["per_step"]);
    if let Some(recs) = v.get_mut("recommendations").and_then(Value::as_array_mut) {
        for r in recs {
            if let Some(o) = r.as_object_mut() {
                o.remove("ranges");
            }
        }
    }
    if let Some(traces) = v.get_mut("traces").and_then(Value::as_array_mut) {
        for t in traces.iter_mut() {
            *t = strip_lists(t);
        }
    }
    v
}

#[test]
fn dlrm_digests_answer_as_the_traces_do() {
    let Some(kineto) = tracelight_testkit::path("real/param/dlrm_8rank/kineto") else {
        return;
    };
    let out = tmp("dlrm");
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&kineto)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    traces.sort();
    tracelight_testkit::checked("DLRM ranks", traces.len(), 8);
    let mut args = vec!["digest".to_owned()];
    args.extend(traces.iter().map(|p| p.display().to_string()));
    args.extend(["-o".to_owned(), out.display().to_string()]);
    let said = ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(said.contains("8 digest(s)"), "{said}");
    // Each digest is a small fraction of its trace (DLRM ranks are ~0.9 MB, so fixed costs
    // dominate: BENCHMARKS.md has the figures).
    let total: u64 = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let source: u64 = traces.iter().map(|p| p.metadata().unwrap().len()).sum();
    assert!(
        total * 20 < source,
        "{total} B of digests for {source} B of traces"
    );

    let a = strip_lists(&strip_paths(&analyze(&kineto)));
    let b = strip_lists(&strip_paths(&analyze(&out)));
    let _ = std::fs::remove_dir_all(&out);
    // Everything but where the files came from: the layout of a trace folder (`run`, `et`)
    // has no counterpart in a digest folder.
    // `per_step` (a row per op and kernel per step) is not kept in a digest: it would be most
    // of the digest's size.
    let skip = ["files", "run", "et", "digest_errors", "per_step"];
    let keys: Vec<&String> = a
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !skip.contains(&k.as_str()))
        .collect();
    assert!(keys.len() > 15, "{keys:?}");
    for key in keys {
        assert_eq!(a.get(key), b.get(key), "{key}");
    }
    assert_eq!(a["collectives"].as_array().unwrap().len(), 8);
    assert_eq!(b["straggler"]["rank"], a["straggler"]["rank"]);
    let files = b["files"].as_array().unwrap();
    assert_eq!(files.len(), 8);
    assert!(files.iter().all(|f| f["format"] == "digest"));
}

/// One rank of a 2-rank run: a step, a gemm `late` µs longer than 1,000, then an all_reduce
/// (PG 0, seq 0) that ends at 1,400 µs for both ranks; clocks differ by `clock`.
fn rank_trace(rank: i64, clock: i64, late: i64) -> String {
    let k = |name: &str, ts: i64, dur: i64, extra: &str| {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7{extra}}}}}"#
        )
    };
    let comm = r#","Collective name":"allreduce","In msg nelems":1024,"dtype":"Float","Group size":2,"Process Group Name":"0","Seq":0"#;
    format!(
        r#"{{"distributedInfo":{{"rank":{rank},"world_size":2}},"traceEvents":[{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":{clock},"dur":2000}},{},{}]}}"#,
        k("gemm", clock, 1000 + late, ""),
        k(
            "ncclKernel_AllReduce_RING_LL_Sum_float",
            clock + 1000 + late,
            400 - late,
            comm
        )
    )
}

#[test]
fn hand_built_run_late_rank_found_from_digests_alone() {
    let dir = tmp("hand");
    let traces = dir.join("traces");
    let out = dir.join("digests");
    std::fs::create_dir_all(&traces).unwrap();
    // Rank 1 computes 300 µs longer, so it arrives 300 µs late; its clock is 5 s ahead.
    for (rank, clock, late) in [(0, 1_000_000, 0), (1, 6_000_000, 300)] {
        std::fs::write(
            traces.join(format!("rank-{rank}.json")),
            rank_trace(rank, clock, late),
        )
        .unwrap();
    }
    let t0 = traces.join("rank-0.json").display().to_string();
    let t1 = traces.join("rank-1.json").display().to_string();
    ok(&["digest", &t0, &t1, "-o", out.to_str().unwrap()]);
    let v = analyze(&out);
    let md = ok(&["summary", out.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    let c = &v["collectives"][0];
    assert_eq!(v["collectives"].as_array().unwrap().len(), 1);
    assert_eq!(c["skew_us"], 300.0);
    assert_eq!(c["latest_rank"], 1);
    assert_eq!(c["latency_us"], 100.0);
    assert_eq!(v["alignment"]["method"], "collectives");
    assert_eq!(v["straggler"]["rank"], 1);
    assert_eq!(v["straggler"]["others_wait_us"], 300.0);
    assert_eq!(v["ranks"][0]["wait_us"], 300.0);
    assert!(md.contains("(2 digests)"), "{md}");
}

#[test]
fn bad_inputs_name_the_file() {
    let dir = tmp("bad");
    if let Some(snap) = tracelight_testkit::path("real/hta/memory_timeline.raw.json.gz") {
        let out = run(&[
            "digest",
            snap.to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("memory_timeline.raw.json.gz") && err.contains("Kineto"),
            "{err}"
        );
    }
    // A digest whose table is not Parquet: the run fails naming the table's file.
    let trace = dir.join("rank-0.json");
    std::fs::write(&trace, rank_trace(0, 0, 0)).unwrap();
    ok(&[
        "digest",
        trace.to_str().unwrap(),
        "-o",
        dir.join("d").to_str().unwrap(),
    ]);
    std::fs::write(dir.join("d/rank-0.kernels.parquet"), b"not parquet").unwrap();
    let out = run(&["analyze", dir.join("d").to_str().unwrap(), "--json"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rank-0.kernels.parquet") && err.contains("Parquet"),
        "{err}"
    );
    let out = run(&["digest", "-o"]);
    assert_eq!(out.status.code(), Some(64));
}
