//! `analyze` of execution traces given with their ranks' Kineto traces, out of order: each ET is
//! paired with the trace of its own process (moved here from `src/et.rs` so the `et` module does
//! not import the dispatcher).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use serde_json::Value;
use tracelight_cli::commands::run;

/// Two ranks' ETs and traces given out of order: each ET finds its own rank's trace by pid
/// (rank 0's pid 59811 and rank 1's, read from the files here), and the ET alone still reports
/// its node count and collectives.
#[test]
fn analyze_pairs_each_et_with_the_trace_of_its_process() {
    let Some(dlrm) = tracelight_testkit::path("real/param/dlrm_8rank") else {
        return;
    };
    let et = |r: usize| {
        dlrm.join(format!("et/dlrm_eg_{r}.json.gz"))
            .to_string_lossy()
            .into_owned()
    };
    let dir = std::fs::read_dir(dlrm.join("kineto")).unwrap();
    let mut k: Vec<String> = dir
        .flatten()
        .map(|e| e.path().to_string_lossy().into_owned())
        .collect();
    k.sort();
    let args: Vec<String> = vec![
        "analyze".into(),
        et(1),
        k[0].clone(),
        et(0),
        k[1].clone(),
        "--json".into(),
    ];
    let Ok(out) = run(&args) else { panic!() };
    let v: Value = serde_json::from_str(&out).unwrap();
    let pid_of_trace = |path: &str| -> i64 {
        let text = std::fs::read(path).unwrap();
        let t: Value = serde_json::from_slice(&text).unwrap();
        t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["cat"] == "cpu_op")
            .unwrap()["pid"]
            .as_i64()
            .unwrap()
    };
    let ets = v["et"].as_array().unwrap();
    assert_eq!(ets.len(), 2);
    for f in ets {
        assert_eq!(
            f["pid"].as_i64().unwrap(),
            pid_of_trace(f["trace"].as_str().unwrap())
        );
        let l = &f["link"];
        // These traces predate `Record function id`: every op is reported as missing it.
        assert_eq!(l["linked"], 0);
        assert_eq!(l["kineto_rf_missing"], l["kineto_ops"]);
    }
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 4);
    assert!(files
        .iter()
        .any(|f| f["format"] == "chakra_et" && f["events"] == 1675));
    // Existing fields are still there for the traces.
    assert!(v["ops"].is_array() && v["ranks"].is_array());
    let Ok(md) = run(&["summary".to_owned(), et(0)]) else {
        panic!()
    };
    assert!(
        md.contains("# Execution trace") && md.contains("| allreduce | 3 |"),
        "{md}"
    );
}
