//! `tracelight diff A B --folded`: the differential flame graph's stacks on a hand-built pair
//! whose every weight is known by construction — one op's kernel 2× slower, a convolution backend
//! renamed under its parent (op and kernel), one op new in B — with 4 steps in A and 2 in B, so
//! the per-step division is exercised too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

fn x(cat: &str, name: &str, ts: f64, dur: f64, tid: u32, args: &str) -> String {
    format!(
        r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":1,"tid":{tid},"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
    )
}

/// An op of 8 µs at `ts` with a 5 µs launch at `ts + 1` whose kernel runs `kdur` µs.
fn op(v: &mut Vec<String>, name: &str, kernel: &str, ts: f64, kdur: f64, corr: usize) {
    v.push(x("cpu_op", name, ts, 8.0, 1, ""));
    v.push(x(
        "cuda_runtime",
        "cudaLaunchKernel",
        ts + 1.0,
        5.0,
        1,
        &format!(r#""correlation":{corr}"#),
    ));
    v.push(x(
        "kernel",
        kernel,
        ts + 10.0,
        kdur,
        7,
        &format!(r#""device":0,"stream":7,"correlation":{corr}"#),
    ));
}

/// `steps` steps of 1000 µs: `aten::mm` (gemm kernel of `mm_us`), `aten::conv2d` >
/// `aten::_convolution` > the backend's op and kernel (50 µs), and, when `relu`, `aten::relu`
/// (10 µs elementwise kernel).
fn trace(steps: usize, mm_us: f64, backend: (&str, &str), relu: bool) -> String {
    let mut v = Vec::new();
    for k in 0..steps {
        let t0 = k as f64 * 1000.0;
        let c = k * 10;
        v.push(x(
            "user_annotation",
            &format!("ProfilerStep#{k}"),
            t0,
            1000.0,
            1,
            "",
        ));
        op(
            &mut v,
            "aten::mm",
            "ampere_sgemm_128x64_nn",
            t0 + 10.0,
            mm_us,
            c,
        );
        v.push(x("cpu_op", "aten::conv2d", t0 + 300.0, 40.0, 1, ""));
        v.push(x("cpu_op", "aten::_convolution", t0 + 301.0, 30.0, 1, ""));
        op(&mut v, backend.0, backend.1, t0 + 302.0, 50.0, c + 1);
        if relu {
            op(
                &mut v,
                "aten::relu",
                "vectorized_elementwise_kernel",
                t0 + 600.0,
                10.0,
                c + 2,
            );
        }
    }
    format!(r#"{{"traceEvents":[{}]}}"#, v.join(","))
}

struct Pair(PathBuf);

impl Pair {
    fn new(name: &str) -> Pair {
        let dir =
            std::env::temp_dir().join(format!("tracelight-folded-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = trace(
            4,
            100.0,
            ("aten::cudnn_convolution", "cudnn_fprop_kernel"),
            false,
        );
        let b = trace(
            2,
            200.0,
            ("aten::miopen_convolution", "MIOpenConvFwd"),
            true,
        );
        std::fs::write(dir.join("a.json"), a).unwrap();
        std::fs::write(dir.join("b.json"), b).unwrap();
        Pair(dir)
    }

    /// The folded lines as stack → (A, B).
    fn folded(&self, extra: &[&str]) -> BTreeMap<String, (i64, i64)> {
        let (a, b) = (self.0.join("a.json"), self.0.join("b.json"));
        let out = Command::new(env!("CARGO_BIN_EXE_tracelight"))
            .arg("diff")
            .arg(&a)
            .arg(&b)
            .arg("--folded")
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let mut m = BTreeMap::new();
        for line in text.lines() {
            // difffolded.pl's format: the stack, then A's count, then B's.
            let mut it = line.rsplitn(3, ' ');
            let b: i64 = it.next().unwrap().parse().unwrap();
            let a: i64 = it.next().unwrap().parse().unwrap();
            let stack = it.next().unwrap().to_owned();
            assert!(m.insert(stack, (a, b)).is_none(), "a stack twice: {line}");
        }
        m
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn device_weight_per_step_with_the_renamed_backend_matched_and_the_new_op_from_zero() {
    let p = Pair::new("device");
    let m = p.folded(&["--weight", "device"]);
    let want: BTreeMap<String, (i64, i64)> = [
        // 2× slower: 100 µs → 200 µs per step (A's 400 µs over 4 steps, B's 400 µs over 2).
        (
            "ProfilerStep*;aten::mm;cudaLaunchKernel;ampere_sgemm_128x64_nn",
            (100_000, 200_000),
        ),
        // A's cudnn op and kernel carry B's names: one stack, unchanged weight.
        (
            "ProfilerStep*;aten::conv2d;aten::_convolution;aten::miopen_convolution;cudaLaunchKernel;MIOpenConvFwd",
            (50_000, 50_000),
        ),
        // New in B.
        (
            "ProfilerStep*;aten::relu;cudaLaunchKernel;vectorized_elementwise_kernel",
            (0, 10_000),
        ),
    ]
    .into_iter()
    .map(|(s, w)| (s.to_owned(), w))
    .collect();
    assert_eq!(m, want);
    // The device weight is the default when both sides ran kernels.
    assert_eq!(p.folded(&[]), want);
}

#[test]
fn without_renames_the_backend_is_one_stack_gone_and_one_new() {
    let p = Pair::new("norenames");
    let m = p.folded(&["--weight", "device", "--no-renames"]);
    assert_eq!(
        m["ProfilerStep*;aten::conv2d;aten::_convolution;aten::cudnn_convolution;cudaLaunchKernel;cudnn_fprop_kernel"],
        (50_000, 0)
    );
    assert_eq!(
        m["ProfilerStep*;aten::conv2d;aten::_convolution;aten::miopen_convolution;cudaLaunchKernel;MIOpenConvFwd"],
        (0, 50_000)
    );
}

#[test]
fn cpu_weight_is_host_self_time_per_step() {
    let p = Pair::new("cpu");
    let m = p.folded(&["--weight", "cpu"]);
    // Each op is 8 µs holding a 5 µs launch: 3 µs self.
    assert_eq!(m["ProfilerStep*;aten::mm"], (3_000, 3_000));
    assert_eq!(m["ProfilerStep*;aten::mm;cudaLaunchKernel"], (5_000, 5_000));
    assert_eq!(m["ProfilerStep*;aten::relu"], (0, 3_000));
    // conv2d 40 µs holds _convolution 30 µs: 10 µs self; _convolution holds the 8 µs op: 22.
    assert_eq!(m["ProfilerStep*;aten::conv2d"], (10_000, 10_000));
    assert_eq!(
        m["ProfilerStep*;aten::conv2d;aten::_convolution"],
        (22_000, 22_000)
    );
    // The step's own time: 1000 − 8 (mm) − 40 (conv2d) in A, and − 8 (relu) more in B.
    assert_eq!(m["ProfilerStep*"], (952_000, 944_000));
    // Every µs of each step is somewhere: the self times sum to the step.
    let (sa, sb) = m.values().fold((0, 0), |(x, y), (a, b)| (x + a, y + b));
    assert_eq!((sa, sb), (1_000_000, 1_000_000));
}

/// The CI gate on the same pair: the gemm kernel's time doubled (category.gemm +100 %), the
/// renamed convolution did not move (category.convolution 0 %), the new elementwise kernel has
/// no A to be relative to, and the steps themselves are 1000 µs on both sides.
#[test]
fn the_gate_on_the_pair_fails_on_the_doubled_gemm_only() {
    let p = Pair::new("gate");
    let (a, b) = (p.0.join("a.json"), p.0.join("b.json"));
    let gate = |bounds: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tracelight"));
        c.arg("diff").arg(&a).arg(&b);
        for x in bounds {
            c.arg("--fail-if").arg(x);
        }
        let out = c.arg("--json").output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code().unwrap(), v["gate"]["checks"].clone())
    };
    let (code, checks) = gate(&["category.gemm>+50%"]);
    assert_eq!(code, 1);
    assert_eq!(checks[0]["verdict"], "crossed");
    assert_eq!(checks[0]["change"], 1.0);
    let (code, checks) = gate(&["category.gemm>+150%", "category.convolution>+1%"]);
    assert_eq!(code, 0);
    assert_eq!(checks[1]["change"], 0.0);
    // 0 → 10 µs: a relative change is undefined, a change in µs is not.
    let (code, checks) = gate(&["category.elementwise>+5%"]);
    assert_eq!(
        (code, &checks[0]["verdict"]),
        (0, &serde_json::json!("not_comparable"))
    );
    assert_eq!(gate(&["category.elementwise>+5us"]).0, 1);
    // Steps unchanged (4 of 1000 µs against 2): too short to tell, never crossed.
    let (code, checks) = gate(&["step_time>+1%"]);
    assert_eq!(
        (code, &checks[0]["verdict"]),
        (0, &serde_json::json!("too_short"))
    );
}

/// `--step-a I --step-b J`: one step of A against one step of B. A's first step is a warm-up (its
/// gemm kernel 500 µs, then 100 µs), B's steps run 200 µs: over every step the kernel is 200 µs
/// per step on both sides; step 1 of A against step 0 of B is 100 against 200; step 0 of A (the
/// warm-up) against step 1 of B is 500 against 200. A step a side does not have is refused.
#[test]
fn one_step_of_a_against_one_step_of_b() {
    let steps = |mm: &[f64]| -> String {
        let mut v = Vec::new();
        for (k, us) in mm.iter().enumerate() {
            let t0 = k as f64 * 1000.0;
            v.push(x(
                "user_annotation",
                &format!("ProfilerStep#{k}"),
                t0,
                1000.0,
                1,
                "",
            ));
            op(
                &mut v,
                "aten::mm",
                "ampere_sgemm_128x64_nn",
                t0 + 10.0,
                *us,
                k,
            );
        }
        format!(r#"{{"traceEvents":[{}]}}"#, v.join(","))
    };
    let dir = std::env::temp_dir().join(format!("tracelight-folded-{}-steps", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = Pair(dir.clone());
    std::fs::write(dir.join("a.json"), steps(&[500.0, 100.0, 100.0, 100.0])).unwrap();
    std::fs::write(dir.join("b.json"), steps(&[200.0, 200.0])).unwrap();
    let k = "ProfilerStep*;aten::mm;cudaLaunchKernel;ampere_sgemm_128x64_nn";
    let dev = ["--weight", "device"];
    assert_eq!(p.folded(&dev)[k], (200_000, 200_000));
    assert_eq!(
        p.folded(&[&dev[..], &["--step-a", "1", "--step-b", "0"]].concat())[k],
        (100_000, 200_000)
    );
    assert_eq!(
        p.folded(&[&dev[..], &["--step-a=0", "--step-b=1"]].concat())[k],
        (500_000, 200_000)
    );
    // Only A picked: B keeps its per-step mean.
    assert_eq!(
        p.folded(&[&dev[..], &["--step-a", "2"]].concat())[k],
        (100_000, 200_000)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_tracelight"))
        .args([
            "diff",
            dir.join("a.json").to_str().unwrap(),
            dir.join("b.json").to_str().unwrap(),
            "--folded",
            "--step-b",
            "2",
        ])
        .output()
        .unwrap();
    // A usage error (EX_USAGE), naming the steps B has.
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("B has no step 2: its steps are 0 to 1"));
}
