//! `tracelight diff A B --fail-if …`: the CI gate's exit codes and verdicts on hand-built pairs
//! whose step times are known by construction (B's steps are A's shifted by a known amount, or
//! too few, or too spread to tell), and on unreadable input.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::PathBuf;
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

/// Steps of the given durations (µs), back to back, each with one `aten::mm` whose gemm kernel
/// runs 100 µs; with `peak` bytes, one device allocation of that size in the first step.
fn trace(steps: &[f64], peak: Option<i64>) -> String {
    let mut v = Vec::new();
    let mut t0 = 0.0;
    for (k, d) in steps.iter().enumerate() {
        v.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{k}","pid":1,"tid":1,"ts":{t0},"dur":{d}}}"#));
        v.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{},"dur":8}}"#,
            t0 + 1.0
        ));
        v.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{k}}}}}"#, t0 + 2.0));
        v.push(format!(r#"{{"ph":"X","cat":"kernel","name":"sgemm","pid":0,"tid":7,"ts":{},"dur":100,"args":{{"device":0,"stream":7,"correlation":{k}}}}}"#, t0 + 10.0));
        t0 += d;
    }
    if let Some(p) = peak {
        v.push(format!(r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":3,"args":{{"Device Type":1,"Device Id":0,"Addr":4096,"Bytes":{p},"Total Allocated":{p},"Total Reserved":{p}}}}}"#));
    }
    format!(r#"{{"traceEvents":[{}]}}"#, v.join(","))
}

struct Pair {
    dir: PathBuf,
}

impl Pair {
    fn new(name: &str, a: &str, b: &str) -> Pair {
        let dir =
            std::env::temp_dir().join(format!("tracelight-gate-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.json"), a).unwrap();
        std::fs::write(dir.join("b.json"), b).unwrap();
        Pair { dir }
    }

    fn a(&self) -> String {
        self.dir.join("a.json").to_string_lossy().into_owned()
    }

    fn b(&self) -> String {
        self.dir.join("b.json").to_string_lossy().into_owned()
    }

    fn gate(&self, extra: &[&str]) -> (i32, String, String) {
        let (a, b) = (self.a(), self.b());
        let mut args = vec!["diff", a.as_str(), b.as_str()];
        args.extend_from_slice(extra);
        run(&args)
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Ten steps around 1000 µs; B's are the same ten plus 100 µs, in another order.
const JITTER: [f64; 10] = [0.0, 7.0, -5.0, 3.0, -2.0, 6.0, -4.0, 1.0, 5.0, -3.0];

fn shifted_pair(name: &str) -> Pair {
    let a: Vec<f64> = JITTER.iter().map(|j| 1000.0 + j).collect();
    let mut b: Vec<f64> = JITTER.iter().map(|j| 1100.0 + j).collect();
    b.reverse();
    Pair::new(name, &trace(&a, Some(1 << 30)), &trace(&b, Some(1 << 30)))
}

#[test]
fn a_step_shifted_by_ten_percent_crosses_five_and_stays_within_twenty() {
    let p = shifted_pair("shift");
    let (code, out, err) = p.gate(&[
        "--fail-if",
        "step_time>+5%",
        "--fail-if",
        "peak_memory>+10%",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with("## Performance gate\n\n❌ **failed**: 1 of 2 bounds crossed"),
        "{out}"
    );
    assert!(out.contains("| `step_time>+5%` |"), "{out}");
    assert!(out.contains("| **crossed** |"), "{out}");
    // The full diff follows the verdict.
    assert!(out.contains("## Profile diff"), "{out}");

    let (code, out, _) = p.gate(&["--fail-if=step_time>+20%", "--json"]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let c = &v["gate"]["checks"][0];
    assert_eq!(c["verdict"], "within");
    // By construction B = A + 100 µs as multisets: the Hodges–Lehmann shift is exactly 100 µs,
    // over A's median 1000.5 µs.
    let change = c["change"].as_f64().unwrap();
    assert!((change - 100.0 / 1000.5).abs() < 1e-12, "{change}");
    assert_eq!(c["steps"], serde_json::json!({"a": 10, "b": 10}));
    // The interval: every pairwise difference is 100 + (j_b − j_a); for 10 against 10 the
    // textbook two-sided 5 % critical value of Mann–Whitney's U is 23 (published tables), so
    // the interval runs from the 24th smallest difference to the 24th largest.
    let mut d: Vec<f64> = Vec::new();
    for jb in JITTER {
        for ja in JITTER {
            d.push(100.0 + jb - ja);
        }
    }
    d.sort_by(f64::total_cmp);
    let (lo, hi) = (d[23] / 1000.5, d[100 - 24] / 1000.5);
    let i = &c["interval"];
    assert!(
        (i["lo"].as_f64().unwrap() - lo).abs() < 1e-12,
        "{i} vs {lo}"
    );
    assert!(
        (i["hi"].as_f64().unwrap() - hi).abs() < 1e-12,
        "{i} vs {hi}"
    );
    assert!(i["level"].as_f64().unwrap() >= 0.95);
    // The figure under the same name in the JSON's figures object: medians in µs.
    assert_eq!(v["figures"]["step_time"]["a"], 1000.5);
    assert_eq!(v["figures"]["step_time"]["b"], 1100.5);
}

#[test]
fn a_bound_inside_the_interval_is_too_noisy_to_tell_and_strict_fails_it() {
    let p = shifted_pair("edge");
    // +9.995% with an interval of about ±0.8%: whether it is above 10% cannot be told.
    let (code, out, _) = p.gate(&["--fail-if", "step_time>+10%"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("| too noisy to tell |"), "{out}");
    assert!(
        out.contains("⚠️ **passed, but 1 of 1 could not be told**"),
        "{out}"
    );
    let (code, _, _) = p.gate(&["--fail-if", "step_time>+10%", "--strict"]);
    assert_eq!(code, 1);
}

#[test]
fn widely_spread_steps_are_too_noisy_even_for_a_shift_past_the_bound() {
    let a = [
        1000.0, 1300.0, 900.0, 1200.0, 1000.0, 800.0, 1100.0, 950.0, 1250.0, 850.0,
    ];
    let b: Vec<f64> = a.iter().rev().map(|x| x + 80.0).collect();
    let p = Pair::new("noisy", &trace(&a, None), &trace(&b, None));
    let (code, out, _) = p.gate(&["--fail-if", "step_time>+5%", "--json"]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let c = &v["gate"]["checks"][0];
    assert_eq!(c["verdict"], "too_noisy", "{c}");
    // 80 µs over A's median 1000: the shift is past 5%, the interval reaches below 0.
    assert!((c["change"].as_f64().unwrap() - 0.08).abs() < 1e-12, "{c}");
    assert!(c["interval"]["lo"].as_f64().unwrap() < 0.0);
}

#[test]
fn three_steps_against_three_are_too_short_to_tell() {
    let p = Pair::new(
        "short",
        &trace(&[1000.0, 1001.0, 999.0], None),
        &trace(&[2000.0, 2001.0, 1999.0], None),
    );
    let (code, out, _) = p.gate(&["--fail-if", "step_time>+5%"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("| too short to tell |"), "{out}");
    assert!(out.contains("3 steps against 3: too few"), "{out}");
    assert_eq!(p.gate(&["--fail-if", "step_time>+5%", "--strict"]).0, 1);
    // A one-value figure has no spread: B's 2× mean step crosses at once.
    assert_eq!(p.gate(&["--fail-if", "step_time_mean>+5%"]).0, 1);
}

#[test]
fn peak_memory_bounds_in_percent_bytes_and_absolute() {
    let a: Vec<f64> = JITTER.iter().map(|j| 1000.0 + j).collect();
    let p = Pair::new("mem", &trace(&a, Some(1 << 30)), &trace(&a, Some(3 << 29)));
    // 1 GiB → 1.5 GiB.
    assert_eq!(p.gate(&["--fail-if", "peak_memory>+10%"]).0, 1);
    assert_eq!(p.gate(&["--fail-if", "peak_memory>+60%"]).0, 0);
    assert_eq!(p.gate(&["--fail-if", "peak_memory>+256MiB"]).0, 1);
    assert_eq!(p.gate(&["--fail-if", "peak_memory>+1GiB"]).0, 0);
    assert_eq!(p.gate(&["--fail-if", "peak_memory>1.4GiB"]).0, 1);
    assert_eq!(p.gate(&["--fail-if", "peak_memory>2GiB"]).0, 0);
    // Unchanged step time: within, so only memory fails.
    let (code, out, _) = p.gate(&[
        "--fail-if",
        "step_time>+1%",
        "--fail-if",
        "peak_memory>+10%",
    ]);
    assert_eq!(code, 1);
    assert!(out.contains("1 of 2 bounds crossed"), "{out}");
}

#[test]
fn unreadable_input_exits_2_and_a_bad_bound_64() {
    let p = shifted_pair("bad");
    std::fs::write(p.dir.join("broken.json"), "this is not a profile").unwrap();
    let broken = p.dir.join("broken.json").to_string_lossy().into_owned();
    let a = p.a();
    let (code, _, err) = run(&["diff", &a, &broken, "--fail-if", "step_time>+5%"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("broken.json"), "{err}");
    let (code, _, err) = run(&[
        "diff",
        &a,
        "/nonexistent/b.json",
        "--fail-if",
        "step_time>+5%",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/b.json"), "{err}");
    let (code, _, err) = p.gate(&["--fail-if", "steptime>+5%"]);
    assert_eq!(code, 64, "{err}");
    assert!(err.contains("no figure named \"steptime\""), "{err}");
    let (code, _, err) = p.gate(&["--fail-if"]);
    assert_eq!(code, 64, "{err}");
}
