//! `tracelight trend DIR`: a hand-built series whose changes are known by construction — runs of
//! ten steps, one run shifted by exactly +100 µs (a change point), one by 1 µs (noise: not one),
//! one of a single step (too short to tell), one a run folder of two ranks — in name order.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tracelight"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Steps of the given durations (µs), each with one `aten::mm` whose gemm kernel runs `gemm` µs;
/// with `peak` bytes, one device allocation of that size.
fn trace(steps: &[f64], gemm: f64, peak: Option<i64>) -> String {
    let mut v = Vec::new();
    let mut t0 = 0.0;
    for (k, d) in steps.iter().enumerate() {
        v.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{k}","pid":1,"tid":1,"ts":{t0},"dur":{d}}}"#));
        v.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{},"dur":8}}"#,
            t0 + 1.0
        ));
        v.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{k}}}}}"#, t0 + 2.0));
        v.push(format!(r#"{{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":{},"dur":{gemm},"args":{{"device":0,"stream":7,"correlation":{k}}}}}"#, t0 + 10.0));
        t0 += d;
    }
    if let Some(p) = peak {
        v.push(format!(r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":3,"args":{{"Device Type":1,"Device Id":0,"Addr":4096,"Bytes":{p},"Total Allocated":{p},"Total Reserved":{p}}}}}"#));
    }
    format!(r#"{{"traceEvents":[{}]}}"#, v.join(","))
}

const JITTER: [f64; 10] = [0.0, 7.0, -5.0, 3.0, -2.0, 6.0, -4.0, 1.0, 5.0, -3.0];

fn steps(base: f64) -> Vec<f64> {
    JITTER.iter().map(|j| base + j).collect()
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn series(name: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("tracelight-trend-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let w = |p: &Path, s: String| std::fs::write(p, s).unwrap();
    w(
        &d.join("2026-11-01.json"),
        trace(&steps(1000.0), 100.0, Some(1 << 30)),
    );
    // Steps 1 µs longer: well inside the jitter, not a change point.
    w(
        &d.join("2026-11-02.pt.trace.json"),
        trace(&steps(1001.0), 100.0, Some(1 << 30)),
    );
    // +100 µs: the gemm kernel grew by as much; a change point.
    let mut r = steps(1101.0);
    r.reverse();
    w(&d.join("2026-11-03.json"), trace(&r, 200.0, Some(3 << 29)));
    // A run folder of two ranks, same steps as the run before.
    std::fs::create_dir_all(d.join("2026-11-04")).unwrap();
    for k in 0..2 {
        w(
            &d.join(format!("2026-11-04/rank-{k}.json")),
            trace(&steps(1101.0), 200.0, None),
        );
    }
    // One step against the 20 before: the most extreme ordering has probability 1/21 > 2.5 %,
    // so no 95 % interval can tell.
    w(&d.join("2026-11-05.json"), trace(&[900.0], 200.0, None));
    w(&d.join("notes.txt"), "not a run".into());
    Dir(d)
}

#[test]
fn the_series_is_in_name_order_with_the_shift_marked_as_the_only_change_point() {
    let d = series("json");
    let (code, out, err) = run(&["trend", d.0.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let runs = v["runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "2026-11-01",
            "2026-11-02",
            "2026-11-03",
            "2026-11-04",
            "2026-11-05"
        ]
    );
    assert_eq!(v["change_points"], serde_json::json!(["2026-11-03"]));
    // Medians: the jitter's median is 0.5 µs.
    let med: Vec<f64> = runs
        .iter()
        .map(|r| r["step_time"]["median_us"].as_f64().unwrap())
        .collect();
    assert_eq!(med, [1000.5, 1001.5, 1101.5, 1101.5, 900.0]);
    // 11-02 against 11-01: B = A + 1 µs as multisets, so the shift is exactly 1 µs, its interval
    // reaches both sides of 0.
    let p = &runs[1]["vs_previous"];
    assert_eq!(p["shift_us"], 1.0);
    assert!(p["interval_us"][0].as_f64().unwrap() < 0.0, "{p}");
    assert_eq!(p["change_point"], false);
    // 11-03: exactly +100 µs, interval clear of 0.
    let p = &runs[2]["vs_previous"];
    assert_eq!(p["shift_us"], 100.0);
    assert!(p["interval_us"][0].as_f64().unwrap() > 0.0, "{p}");
    assert!((p["rel"].as_f64().unwrap() - 100.0 / 1001.5).abs() < 1e-12);
    // The run folder: two ranks, 20 rank-steps, no shift against the run before.
    assert_eq!(
        (runs[3]["ranks"].as_u64(), runs[3]["steps"].as_u64()),
        (Some(2), Some(20))
    );
    assert_eq!(runs[3]["vs_previous"]["shift_us"], 0.0);
    assert_eq!(runs[4]["vs_previous"]["too_short"], true);
    // Top kernel per step, breakdown and peak memory per run.
    assert_eq!(
        runs[0]["top_kernels"][0],
        serde_json::json!({"name": "ampere_sgemm_128x64_nn", "us_per_step": 100.0})
    );
    assert_eq!(runs[2]["top_kernels"][0]["us_per_step"], 200.0);
    assert_eq!(runs[3]["top_kernels"][0]["us_per_step"], 200.0);
    assert_eq!(runs[2]["breakdown_us"]["kernel"], 200.0);
    assert_eq!(runs[0]["peak_memory_bytes"], 1 << 30);
    assert_eq!(runs[2]["peak_memory_bytes"], 3 << 29);
    assert_eq!(runs[3]["peak_memory_bytes"], serde_json::Value::Null);
}

#[test]
fn the_markdown_marks_the_change_point_and_says_when_too_short() {
    let d = series("md");
    let (code, out, _) = run(&["trend", d.0.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.starts_with("## Trend over 5 runs\n"), "{out}");
    assert!(out.contains("): **2026-11-03**."), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("| **2026-11-03** |"))
        .unwrap();
    assert!(row.contains("| ▲ +100.0 µs (+9.99%;"), "{row}");
    let row = out
        .lines()
        .find(|l| l.starts_with("| 2026-11-05 |"))
        .unwrap();
    assert!(row.contains("| too short to tell |"), "{row}");
}

#[test]
fn an_unreadable_run_exits_2_naming_it_and_one_run_is_not_a_trend() {
    let d = series("bad");
    std::fs::write(d.0.join("2026-11-06.json"), "not a profile").unwrap();
    let (code, _, err) = run(&["trend", d.0.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("2026-11-06.json"), "{err}");
    let one = d.0.join("only");
    std::fs::create_dir_all(&one).unwrap();
    std::fs::write(one.join("a.json"), trace(&steps(1000.0), 100.0, None)).unwrap();
    let (code, _, err) = run(&["trend", one.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("at least two runs"), "{err}");
}

/// The same series as digests (`tracelight digest`, one per trace; the run folder's ranks into a
/// folder of their own): the trend over the digests is the trend over the traces — names, step
/// medians, shifts, change points, top kernels, peak memory.
#[test]
fn a_folder_of_digests_trends_as_its_traces() {
    let d = series("digests");
    let out =
        std::env::temp_dir().join(format!("tracelight-trend-{}-digested", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let _guard = Dir(out.clone());
    for f in [
        "2026-11-01.json",
        "2026-11-02.pt.trace.json",
        "2026-11-03.json",
        "2026-11-05.json",
    ] {
        let (code, _, err) = run(&[
            "digest",
            d.0.join(f).to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{f}: {err}");
    }
    let ranks: Vec<String> = (0..2)
        .map(|k| {
            d.0.join(format!("2026-11-04/rank-{k}.json"))
                .display()
                .to_string()
        })
        .collect();
    let sub = out.join("2026-11-04");
    let (code, _, err) = run(&["digest", &ranks[0], &ranks[1], "-o", sub.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let json = |dir: &Path| -> serde_json::Value {
        let (code, out, err) = run(&["trend", dir.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let (t, g) = (json(&d.0), json(&out));
    assert_eq!(g["change_points"], serde_json::json!(["2026-11-03"]));
    assert_eq!(g["change_points"], t["change_points"]);
    let (tr, gr) = (t["runs"].as_array().unwrap(), g["runs"].as_array().unwrap());
    assert_eq!(gr.len(), 5);
    for (a, b) in tr.iter().zip(gr) {
        assert_eq!(a["name"], b["name"]);
        for k in [
            "steps",
            "ranks",
            "step_time",
            "top_kernels",
            "vs_previous",
            "peak_memory_bytes",
        ] {
            assert_eq!(a[k], b[k], "{}: {k}", a["name"]);
        }
    }
}
