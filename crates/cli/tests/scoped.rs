//! `analyze --json --scope` and `table --scope` equal the unscoped output of the same trace cut
//! by hand to the scope: the H100 MLP recording (three steps, `## forward ##` / `## backward ##`
//! / `## optimizer ##` annotations, module frames) is filtered here, on its raw JSON events and
//! without our reader, to one step and to one annotation occurrence — host events by their `ts`
//! inside the window, kernels by their launching runtime call's `correlation` — and written to a
//! temporary file; the scoped tables of the whole file must equal the whole tables of the cut.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use serde_json::Value;
use std::collections::HashSet;
use std::io::Read;
use std::process::Command;

const MLP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../core/tests/fixtures/torch-2.11-cuda13-h100/gpu_mlp.pt.trace.json.gz"
);

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

fn raw() -> Value {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(MLP).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The `[ts, ts + dur)` of the `nth` (1-based, by ts) host event named `name`.
fn window_of(v: &Value, name: &str, nth: usize) -> (f64, f64) {
    let mut w: Vec<(f64, f64)> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == name && e["ph"] == "X" && e["cat"] == "user_annotation")
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            (ts, ts + e["dur"].as_f64().unwrap())
        })
        .collect();
    w.sort_by(|a, b| a.0.total_cmp(&b.0));
    w[nth - 1]
}

/// The trace with only the events the scope `[lo, hi)` µs holds: host-side events and instants
/// by their ts; kernels, memcpy and memset when the runtime call with their correlation is kept
/// (by their own ts where no call has it); metadata and flows as they are.
fn cut(v: &Value, (lo, hi): (f64, f64), file: &str) -> String {
    let ev = v["traceEvents"].as_array().unwrap();
    let inside = |e: &Value| e["ts"].as_f64().is_some_and(|t| t >= lo && t < hi);
    let device = |e: &Value| {
        matches!(
            e["cat"].as_str(),
            Some("kernel" | "gpu_memcpy" | "gpu_memset")
        )
    };
    let launch = |e: &Value| matches!(e["cat"].as_str(), Some("cuda_runtime" | "cuda_driver"));
    let corr = |e: &Value| e["args"]["correlation"].as_i64();
    let launched: HashSet<i64> = ev.iter().filter(|e| launch(e)).filter_map(corr).collect();
    let kept_calls: HashSet<i64> = ev
        .iter()
        .filter(|e| launch(e) && inside(e))
        .filter_map(corr)
        .collect();
    let keep: Vec<Value> = ev
        .iter()
        .filter(|e| match e["ph"].as_str() {
            Some("M" | "s" | "f") => true,
            _ if device(e) => match corr(e) {
                Some(c) if launched.contains(&c) => kept_calls.contains(&c),
                _ => inside(e),
            },
            _ => inside(e),
        })
        .cloned()
        .collect();
    let mut out = v.clone();
    out["traceEvents"] = Value::Array(keep);
    let path =
        std::env::temp_dir().join(format!("tracelight-scoped-{}-{file}", std::process::id()));
    std::fs::write(&path, serde_json::to_string(&out).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

const TABLES: [&str; 4] = ["ops", "kernels", "categories", "fine_categories"];
/// Tables that follow links out of the region: autograd's from a backward node to its forward
/// op, a source line's to the Python frames around the op (which start before an annotation
/// region). Equal to the cut's where the cut holds both ends: a step. The modules of a forward
/// region are inside it too; a backward region's are checked apart.
const LINKED: [&str; 3] = ["modules", "source_lines", "backward"];

fn analyze(args: &[&str]) -> Value {
    let mut a = vec!["analyze"];
    a.extend_from_slice(args);
    a.push("--json");
    serde_json::from_str(&tracelight(&a)).unwrap()
}

#[test]
fn a_scoped_analysis_equals_the_trace_cut_by_hand() {
    let v = raw();
    for (spec, name, nth) in [
        ("step:2", "ProfilerStep#2", 1),
        ("annotation:## backward ##:3", "## backward ##", 3),
        ("annotation:## forward ##:1", "## forward ##", 1),
    ] {
        let w = window_of(&v, name, nth);
        let file = cut(&v, w, &spec.replace([':', ' ', '#'], "_"));
        let scoped = analyze(&[MLP, "--scope", spec]);
        let by_hand = analyze(&[&file]);
        let linked =
            |k: &&&str| spec.starts_with("step:") || (spec.contains("forward") && **k == "modules");
        for key in TABLES.iter().chain(LINKED.iter().filter(linked)) {
            let key = *key;
            assert!(
                scoped[key].as_array().is_some_and(|a| !a.is_empty())
                    || scoped[key].as_object().is_some_and(|o| !o.is_empty()),
                "{spec}: {key} is empty"
            );
            assert_eq!(scoped[key], by_hand[key], "{spec}: {key}");
        }
        // FLOPs of the calls in the scope; the window rate is over the scope's windows (the cut
        // file of an annotation has no step, so its rate is over its whole span instead).
        let rate = |j: &Value| {
            let mut f = j["flops"].clone();
            let o = f.as_object_mut().unwrap();
            o.remove("achieved_tflops_window");
            o.remove("mfu");
            f
        };
        assert_eq!(rate(&scoped), rate(&by_hand), "{spec}: flops");
        let want = scoped["flops"]["total_flops"].as_f64().unwrap()
            / scoped["scope"]["total_us"].as_f64().unwrap()
            / 1e6;
        let got = scoped["flops"]["achieved_tflops_window"].as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-12 * want.max(1.0),
            "{spec}: {got} vs {want}"
        );
        assert_eq!(scoped["scope"]["spec"], spec);
        assert_eq!(scoped["scope"]["windows"].as_array().map(Vec::len), Some(1));
        // A step is a ProfilerStep window: utilization and its breakdown are the cut file's too,
        // and the text tables (whose memory columns follow what the file records: the cut of a
        // backward region has no CPU allocation) are the same text.
        if spec.starts_with("step:") {
            assert_eq!(
                tracelight(&["table", MLP, "--scope", spec]),
                tracelight(&["table", &file]),
                "{spec}: table"
            );
            assert_eq!(
                tracelight(&["table", MLP, "--scope", spec, "--modules", "--backward"]),
                tracelight(&["table", &file, "--modules", "--backward"]),
                "{spec}: table --modules --backward"
            );
            assert_eq!(scoped["gpu"]["utilization"], by_hand["gpu"]["utilization"]);
            assert_eq!(scoped["steps"], by_hand["steps"]);
        }
        std::fs::remove_file(&file).unwrap();
    }
    // A backward region's modules: no call of their own, and the backward time of every
    // module is the whole trace's (all backward work runs inside the three regions), though the
    // forward ops it pairs with ran outside them.
    let whole = analyze(&[MLP]);
    let bwd = analyze(&[MLP, "--scope", "annotation:## backward ##"]);
    let (m, w) = (
        bwd["modules"].as_array().unwrap(),
        whole["modules"].as_array().unwrap(),
    );
    assert_eq!(m.len(), w.len());
    for (a, b) in m.iter().zip(w) {
        assert_eq!(a["path"], b["path"]);
        assert_eq!(a["calls"], 0, "{}", a["path"]);
        assert_eq!(a["backward_gpu_us"], b["backward_gpu_us"], "{}", a["path"]);
        assert_eq!(
            a["backward_host_us"], b["backward_host_us"],
            "{}",
            a["path"]
        );
        assert_eq!(a["gpu_us"], 0.0, "{}", a["path"]);
    }
    // The three steps partition the kernels launched in them.
    let total = |j: &Value| -> f64 {
        j["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["total_us"].as_f64().unwrap())
            .sum()
    };
    let parts: f64 = (1..=3)
        .map(|k| total(&analyze(&[MLP, "--scope", &format!("step:{k}")])))
        .sum();
    assert!(
        (parts - total(&whole)).abs() < 1e-6,
        "{parts} vs {}",
        total(&whole)
    );
}

#[test]
fn a_scope_the_trace_lacks_is_a_usage_error_naming_the_file() {
    let out = Command::new(env!("CARGO_BIN_EXE_tracelight"))
        .args(["analyze", MLP, "--json", "--scope", "step:9"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(64));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "gpu_mlp.pt.trace.json.gz: no ProfilerStep#9 in this trace (it has 3 steps, #1 to #3)"
        ),
        "{err}"
    );
}
