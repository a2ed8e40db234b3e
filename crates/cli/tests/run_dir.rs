//! `tracelight analyze DIR --json` / `summary DIR` on run folders: the real 8-rank DLRM run
//! (checked against figures computed here from its raw JSON), and a NeMo-layout folder assembled
//! in a temporary directory from the same corpus files (symlinks; nothing lands in the repo).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn dlrm() -> Option<PathBuf> {
    tracelight_testkit::path("real/param/dlrm_8rank")
}

fn tracelight(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tracelight"))
        .args(args)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn analyze(dir: &Path) -> Value {
    serde_json::from_str(&tracelight(&["analyze", dir.to_str().unwrap(), "--json"])).unwrap()
}

/// Per rank (by distributedInfo): raw NCCL kernels (name, ts µs, dur µs) in start order, and the
/// ProfilerStep duration, read straight from the file.
/// (rank, NCCL kernels as (name, ts µs, dur µs), ProfilerStep duration µs).
type RawRank = (i64, Vec<(String, f64, f64)>, f64);

fn raw_rank(path: &Path) -> RawRank {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let rank = v["distributedInfo"]["rank"].as_i64().unwrap();
    let ev = v["traceEvents"].as_array().unwrap();
    let mut k: Vec<(String, f64, f64)> = ev
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["name"].as_str().unwrap().starts_with("nccl"))
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["ts"].as_f64().unwrap(),
                e["dur"].as_f64().unwrap(),
            )
        })
        .collect();
    k.sort_by(|a, b| a.1.total_cmp(&b.1));
    let step = ev
        .iter()
        .find(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("ProfilerStep#"))
        })
        .unwrap();
    (rank, k, step["dur"].as_f64().unwrap())
}

fn raw_ranks(dir: &Path) -> Vec<RawRank> {
    let mut v: Vec<_> = std::fs::read_dir(dir.join("kineto"))
        .unwrap()
        .map(|e| raw_rank(&e.unwrap().path()))
        .collect();
    v.sort_by_key(|r| r.0);
    v
}

/// Checks the run's figures against the raw files: the first SendRecv collective's skew, latest
/// rank, latency and waits; the straggler's step ratio; the rank the others waited for.
fn check_dlrm_figures(v: &Value, raw: &[RawRank]) {
    assert_eq!(v["ranks"].as_array().unwrap().len(), 8);
    assert_eq!(v["alignment"]["method"], "collectives");
    // One host: raw clocks agree, so the recovered offsets are within a few µs of 0.
    for (_, o) in v["alignment"]["offsets_us"].as_object().unwrap() {
        assert!(o.as_f64().unwrap().abs() <= 5.0, "offset {o}");
    }
    // 5 SendRecv + 3 AllReduce kernels per rank, all matched.
    assert_eq!(v["collectives"].as_array().unwrap().len(), 8);
    assert_eq!(v["unmatched_collective_calls"], 0);
    let first: Vec<(f64, f64)> = raw.iter().map(|r| (r.1[0].1, r.1[0].2)).collect();
    assert!(raw
        .iter()
        .all(|r| r.1[0].0.starts_with("ncclKernel_SendRecv")));
    let max = first.iter().map(|x| x.0).fold(f64::MIN, f64::max);
    let min = first.iter().map(|x| x.0).fold(f64::MAX, f64::min);
    let last = raw[first.iter().position(|x| x.0 == max).unwrap()].0;
    let c = v["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sendrecv" && c["seq"] == 0)
        .unwrap();
    assert!((c["skew_us"].as_f64().unwrap() - (max - min)).abs() <= 10.0);
    assert_eq!(c["latest_rank"], last);
    let latency = first.iter().map(|x| x.1).fold(f64::MAX, f64::min);
    assert_eq!(c["latency_us"].as_f64().unwrap(), latency);
    for p in c["ranks"].as_array().unwrap() {
        let r = p["rank"].as_i64().unwrap() as usize;
        assert!((p["wait_us"].as_f64().unwrap() - (max - first[r].0)).abs() <= 10.0);
    }
    // The straggler is the rank the others wait for: per collective (the k-th NCCL kernel of
    // every rank; one host, so the raw clocks agree) the ranks' waits are charged to the rank
    // that started last. From the raw starts: the most charged rank, and what it cost.
    let mut blame = [0.0f64; 8];
    for k in 0..raw[0].1.len() {
        let starts: Vec<f64> = raw.iter().map(|r| r.1[k].1).collect();
        let max = starts.iter().copied().fold(f64::MIN, f64::max);
        let latest = starts.iter().position(|&x| x == max).unwrap();
        blame[latest] += starts.iter().map(|x| max - x).sum::<f64>();
    }
    let total: f64 = blame.iter().sum();
    let worst = (0..8)
        .max_by(|&a, &b| blame[a].total_cmp(&blame[b]))
        .unwrap();
    assert_eq!(v["straggler"]["rank"], raw[worst].0);
    assert_eq!(v["straggler"]["method"], "collective_arrival");
    let others = v["straggler"]["others_wait_us"].as_f64().unwrap();
    assert!(
        (others - blame[worst]).abs() <= 8.0 * 8.0 * 5.0,
        "{others} vs {}",
        blame[worst]
    );
    assert!(
        blame[worst] / total > (1.0 + 1.0 / 8.0) / 2.0,
        "it stands out"
    );
    // Its step against the median of all eight, from the raw step durations.
    let mut steps: Vec<f64> = raw.iter().map(|r| r.2).collect();
    steps.sort_by(f64::total_cmp);
    let median = (steps[3] + steps[4]) / 2.0;
    let want = raw[worst].2 / median;
    assert!((v["straggler"]["vs_median"].as_f64().unwrap() - want).abs() < 1e-9);
    assert_eq!(
        raw[worst].0, last,
        "it is also the last at the first SendRecv"
    );
    assert!(v.get("waited_for").is_none(), "one verdict");
}

#[test]
fn dlrm_run_folder_has_ranks_ets_collectives_and_the_straggler() {
    let Some(dir) = dlrm() else { return };
    let v = analyze(&dir);
    assert_eq!(v["run"]["layout"], "trace_handler");
    assert_eq!(
        v["run"]["ranks"],
        serde_json::json!([0, 1, 2, 3, 4, 5, 6, 7])
    );
    assert_eq!(v["files"].as_array().unwrap().len(), 8);
    let et = v["et"].as_array().unwrap();
    assert_eq!(et.len(), 8);
    assert!(et[3]["path"]
        .as_str()
        .unwrap()
        .ends_with("et/dlrm_eg_3.json.gz"));
    check_dlrm_figures(&v, &raw_ranks(&dir));
    check_dlrm_ets(&dir, et);
    let md = tracelight(&["summary", dir.to_str().unwrap()]);
    assert!(md.contains("### Collectives: 8 matched, 0 calls unmatched"));
    // The layout table says what the ET link found, not "pending".
    assert!(
        md.contains("0 linked: the trace has no `Record function id`"),
        "{md}"
    );
}

/// Each rank's ET, read here with `gzip -dc` and serde_json: its node count and pid; the rank's
/// trace: its op count (`cpu_op` + `user_annotation` complete events) and that none carries a
/// `Record function id` (DLRM's traces predate it), so nothing can link and every op says why.
fn check_dlrm_ets(dir: &Path, et: &[Value]) {
    let traces: Vec<(i64, i64, u64, bool)> = std::fs::read_dir(dir.join("kineto"))
        .unwrap()
        .map(|e| {
            let v: Value =
                serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap();
            let ev = v["traceEvents"].as_array().unwrap();
            let ops: Vec<&Value> = ev
                .iter()
                .filter(|e| {
                    e["ph"] == "X" && (e["cat"] == "cpu_op" || e["cat"] == "user_annotation")
                })
                .collect();
            let rf = ops
                .iter()
                .any(|e| !e["args"]["Record function id"].is_null());
            (
                v["distributedInfo"]["rank"].as_i64().unwrap(),
                ops[0]["pid"].as_i64().unwrap(),
                ops.len() as u64,
                rf,
            )
        })
        .collect();
    for e in et {
        let path = e["path"].as_str().unwrap();
        let out = Command::new("gzip")
            .args(["-dc", path])
            .output()
            .expect("gzip");
        let raw: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            e["nodes"].as_u64().unwrap(),
            raw["nodes"].as_array().unwrap().len() as u64,
            "{path}"
        );
        let rank = e["rank"].as_i64().unwrap();
        let (_, pid, ops, rf) = traces.iter().find(|t| t.0 == rank).copied().unwrap();
        assert!(path.ends_with(&format!("dlrm_eg_{rank}.json.gz")), "{path}");
        assert_eq!(
            raw["pid"].as_i64().unwrap(),
            pid,
            "{path}: the ET of rank {rank} is its trace's process"
        );
        let l = &e["link"];
        assert!(!rf);
        assert_eq!(l["kineto_ops"].as_u64().unwrap(), ops);
        assert_eq!(l["linked"], 0);
        assert_eq!(l["kineto_rf_missing"].as_u64().unwrap(), ops);
    }
}

#[test]
fn nemo_layout_folder_assembled_from_the_corpus() {
    let (Some(dlrm), Some(snap)) = (
        dlrm(),
        tracelight_testkit::path("real/snapshots/cs336_silmont_tiny_mem_snapshot.pickle"),
    ) else {
        return;
    };
    let tmp = std::env::temp_dir().join(format!("tracelight-nemo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(tmp.join("traces/device")).unwrap();
    std::fs::create_dir_all(tmp.join("traces/host")).unwrap();
    let raw = raw_ranks(&dlrm);
    for e in std::fs::read_dir(dlrm.join("kineto")).unwrap() {
        let p = e.unwrap().path();
        let r = raw_rank(&p).0;
        std::os::unix::fs::symlink(&p, tmp.join(format!("traces/device/rank-{r}.json"))).unwrap();
        // NeMo names host ETs `.json`; these are gzip inside: content decides.
        let et = dlrm.join(format!("et/dlrm_eg_{r}.json.gz"));
        std::os::unix::fs::symlink(&et, tmp.join(format!("traces/host/rank-{r}.json"))).unwrap();
    }
    std::os::unix::fs::symlink(&snap, tmp.join("memory_rank0.pkl")).unwrap();
    std::fs::write(
        tmp.join("memory_rank0.html"),
        "<!doctype html><p>memory_viz</p>",
    )
    .unwrap();
    std::fs::write(tmp.join("train.py"), "import torch\n").unwrap();
    let v = analyze(&tmp);
    let md = tracelight(&["summary", tmp.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&tmp);
    let run = &v["run"];
    assert_eq!(run["layout"], "nemo");
    assert_eq!(
        run["expected"],
        serde_json::json!(["trace", "execution_trace", "snapshot"])
    );
    let units = run["units"].as_array().unwrap();
    assert_eq!(units.len(), 8);
    assert_eq!(units[0]["files"]["snapshot"], "memory_rank0.pkl");
    assert_eq!(units[0]["missing"], serde_json::json!([]));
    assert_eq!(
        units[5]["files"]["execution_trace"],
        "traces/host/rank-5.json"
    );
    assert_eq!(units[5]["missing"], serde_json::json!(["snapshot"]));
    let skipped: Vec<&str> = run["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, vec!["memory_rank0.html", "train.py"]);
    // The snapshot's replayed peak (crates/core/tests/scripts/snapshot_expected.py) on rank 0.
    assert_eq!(
        v["ranks"][0]["snapshot_peak_active_bytes"],
        3_249_143_816u64
    );
    assert_eq!(v["ranks"][1]["snapshot_peak_active_bytes"], Value::Null);
    check_dlrm_figures(&v, &raw);
    assert!(md.contains("Layout: **nemo**, 8 rank(s)"));
    assert!(md.contains("`memory_rank0.html`: an HTML page, not a profiler artifact"));
}

/// A one-step trace: compute `late` µs longer than 1000, then an all_reduce (PG 0, `seq`) that
/// ends for every rank at 1000 + `latest` + 100 µs after `clock`.
fn cycle_trace(rank: i64, clock: i64, seq: i64, late: i64, latest: i64) -> String {
    let k = |name: &str, ts: i64, dur: i64, extra: &str| {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7{extra}}}}}"#
        )
    };
    let comm = format!(
        r#","Collective name":"allreduce","In msg nelems":1024,"dtype":"Float","Group size":2,"Process Group Name":"0","Seq":{seq}"#
    );
    let ar_start = 1000 + late;
    let ar_end = 1000 + latest + 100;
    format!(
        r#"{{"distributedInfo":{{"rank":{rank},"world_size":2}},"traceEvents":[{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{seq}","pid":1,"tid":1,"ts":{clock},"dur":2000}},{},{}]}}"#,
        k("gemm", clock, 1000 + late, ""),
        k(
            "ncclKernel_AllReduce_RING_LL_Sum_float",
            clock + ar_start,
            ar_end - ar_start,
            &comm
        )
    )
}

#[test]
fn trace_handler_cycles_are_matched_per_cycle_never_mixed() {
    // repeat=2, two workers: rank 1 is 300 µs late in cycle 0, rank 0 is 700 µs late in cycle 1.
    let tmp = std::env::temp_dir().join(format!("tracelight-cycles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    for (name, rank, clock, seq, late, latest) in [
        ("hostA_11.1700000001000", 0, 1_000_000, 0, 0, 300),
        ("hostB_22.1700000001002", 1, 5_000_000, 0, 300, 300),
        ("hostA_11.1700000009000", 0, 9_000_000, 1, 700, 700),
        ("hostB_22.1700000009001", 1, 77_000_000, 1, 0, 700),
    ] {
        let path = tmp.join(format!("{name}.pt.trace.json"));
        std::fs::write(path, cycle_trace(rank, clock, seq, late, latest)).unwrap();
    }
    let v = analyze(&tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(v["run"]["layout"], "trace_handler");
    assert_eq!(v["run"]["cycles"], 2);
    assert_eq!(v["run"]["units"].as_array().unwrap().len(), 4);
    let cycles = v["cycles"].as_array().unwrap();
    for (c, skew, last) in [(0, 300.0, 1), (1, 700.0, 0)] {
        let col = cycles[c]["collectives"].as_array().unwrap();
        assert_eq!(col.len(), 1, "cycle {c}");
        assert_eq!(col[0]["seq"], c as i64);
        assert_eq!(col[0]["skew_us"], skew);
        assert_eq!(col[0]["latest_rank"], last);
        assert_eq!(col[0]["latency_us"], 100.0);
        assert_eq!(cycles[c]["straggler"]["rank"], last);
    }
    // The top level is cycle 0, as for a single-cycle run.
    assert_eq!(v["collectives"][0]["skew_us"], 300.0);
}

#[test]
fn nanochat_stages_pair_trace_snapshot_and_memory_timeline() {
    use tracelight_testkit::path;
    let (Some(t1), Some(t2), Some(tl), Some(snap)) = (
        path("generated/lstm_mem.1795343595561069429.pt.trace.json"),
        path("generated/lstm_mem.1795343595695003232.pt.trace.json"),
        path("generated/resnet_all.1795343593430138415.memory_timeline.json"),
        path("real/snapshots/cs336_silmont_tiny_mem_snapshot.pickle"),
    ) else {
        return;
    };
    let tmp = std::env::temp_dir().join(format!("tracelight-nanochat-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    for (src, name) in [
        (&t1, "stage1-base_trace.json"),
        (&snap, "stage1-base_mem.pickle"),
        (&tl, "stage1-base_memory_timeline.json"),
        (&t2, "stage2-mid_trace.json"),
    ] {
        std::os::unix::fs::symlink(src, tmp.join(name)).unwrap();
    }
    std::fs::write(tmp.join("stage2-mid_mem.html"), "<html></html>").unwrap();
    let v = analyze(&tmp);
    let md = tracelight(&["summary", tmp.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(v["run"]["layout"], "nanochat");
    let units = v["run"]["units"].as_array().unwrap();
    assert_eq!(units.len(), 2);
    assert_eq!(units[0]["stage"], "stage1-base");
    assert_eq!(units[0]["files"]["snapshot"], "stage1-base_mem.pickle");
    assert_eq!(
        units[0]["files"]["memory_timeline"],
        "stage1-base_memory_timeline.json"
    );
    assert_eq!(units[1]["stage"], "stage2-mid");
    assert_eq!(units[1]["missing"], serde_json::json!(["snapshot"]));
    assert_eq!(v["run"]["skipped"][0]["path"], "stage2-mid_mem.html");
    let formats: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["format"].as_str().unwrap())
        .collect();
    assert_eq!(
        formats,
        vec!["kineto", "kineto", "cuda_snapshot", "memory_timeline"]
    );
    let c = &v["cycles"];
    assert_eq!(c[1]["stage"], "stage2-mid");
    assert_eq!(c[0]["snapshot_peak_active_bytes"][0], 3_249_143_816u64);
    // The timeline's peak: the largest sum over categories of any sample, read here.
    let raw: Value = serde_json::from_slice(&std::fs::read(&tl).unwrap()).unwrap();
    let peak = raw[1]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .sum::<i64>()
        })
        .max()
        .unwrap();
    assert_eq!(c[0]["memory_timeline_peak_bytes"][0], peak);
    assert!(md.contains("## Cycles"));
    assert!(md.contains("| 1 | stage2-mid |"));
}
