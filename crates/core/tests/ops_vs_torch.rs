//! The operator table against torch `key_averages()` on the generated corpus
//! (`shared/corpus/generated/**/*.reference.json`, torch 2.15.0, CPU only) and on the repo's own
//! GPU recordings (`tests/fixtures/torch-2.11-cuda13-h100/`, `scripts/gen_gpu.py`, torch 2.11 on
//! an H100), where the device columns (Self/total device time, device memory) and the kernel and
//! GPU-annotation rows are checked too.
//!
//! Every reference row must exist with the same call count; Self CPU and CPU total must agree within
//! 1 % or 2 µs; CPU memory and self CPU memory exactly; FLOPs exactly where our source is torch's
//! own formula; the sum of Self CPU over rows too. With `with_stack=True` (mlp_wide_flops_et,
//! resnet_all) the user annotations' Self CPU comes out right only because `python_function`
//! events take part in the nesting (generated README, rule 4): `Optimizer.step#AdamW.step` was
//! 2258 µs when they were left out, against torch's 227 µs.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use tracelight_core::analysis::ops::{op_table, op_tree, tree_slices, OpOptions, OpTable};
use tracelight_core::ingest::{load_bytes, Loaded};

/// The corpus folder (`tracelight_testkit::root()`, overridable by `TRACELIGHT_CORPUS`).
fn generated() -> String {
    tracelight_testkit::root()
        .join("generated")
        .to_string_lossy()
        .into_owned()
}

/// The repo's own GPU recordings (`scripts/gen_gpu.py` on an H100, torch 2.11): the same reference
/// format plus the device columns a CPU run cannot give.
const GPU_FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/torch-2.11-cuda13-h100"
);

fn references() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![PathBuf::from(generated()), PathBuf::from(GPU_FIXTURES)];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.to_string_lossy().ends_with(".reference.json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn load_trace(dir: &Path, name: &str) -> Box<tracelight_core::model::Trace> {
    let p = dir.join(name);
    let bytes = std::fs::read(&p).unwrap();
    match load_bytes(name, &bytes).unwrap() {
        Loaded::Trace(t) => t,
        other => panic!("expected a trace, got {:?}", other.format()),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 2.0 || (a - b).abs() <= 0.01 * b.abs()
}

struct Config {
    /// torch fills the flops column only with `with_flops=True`; we always derive them.
    with_flops: bool,
}

fn check(
    table: &OpTable,
    rows: &[Value],
    cfg: &Config,
    file: &str,
    by_shape: bool,
    errors: &mut Vec<String>,
) -> usize {
    let mut checked = 0;
    let mut cpu_rows = 0;
    for r in rows {
        let name = r["name"].as_str().unwrap();
        let shapes = r.get("input_shapes").and_then(|v| v.as_str());
        if r.get("device_type").and_then(|v| v.as_str()) == Some("DeviceType.CUDA") {
            checked += check_device_row(table, r, file, by_shape, errors);
            continue;
        }
        cpu_rows += 1;
        let ours = table.rows.iter().find(|o| {
            o.name == name
                && !o.on_device
                && (!by_shape || o.input_shapes.as_deref() == shapes)
                && o.is_user_annotation == r["is_user_annotation"].as_bool().unwrap_or(false)
        });
        let Some(o) = ours else {
            errors.push(format!("{file}: missing row {name} {shapes:?}"));
            continue;
        };
        checked += 1;
        let want = |k: &str| r[k].as_f64().unwrap();
        if o.calls != r["count"].as_u64().unwrap() {
            errors.push(format!(
                "{file}: {name} {shapes:?} calls {} vs {}",
                o.calls, r["count"]
            ));
        }
        let cpu_total = o.cpu_total_ns as f64 / 1e3;
        if !close(cpu_total, want("cpu_time_total")) {
            errors.push(format!(
                "{file}: {name} cpu total {cpu_total} vs {}",
                want("cpu_time_total")
            ));
        }
        let self_cpu = o.self_cpu_ns as f64 / 1e3;
        if !close(self_cpu, want("self_cpu_time_total")) {
            errors.push(format!(
                "{file}: {name} {shapes:?} self cpu {self_cpu} vs {}",
                want("self_cpu_time_total")
            ));
        }
        if o.cpu_mem_bytes != r["cpu_memory_usage"].as_i64().unwrap() {
            errors.push(format!(
                "{file}: {name} {shapes:?} cpu mem {} vs {}",
                o.cpu_mem_bytes, r["cpu_memory_usage"]
            ));
        }
        if o.self_cpu_mem_bytes != r["self_cpu_memory_usage"].as_i64().unwrap() {
            errors.push(format!(
                "{file}: {name} {shapes:?} self cpu mem {} vs {}",
                o.self_cpu_mem_bytes, r["self_cpu_memory_usage"]
            ));
        }
        if cfg.with_flops
            && o.flops_source != tracelight_core::analysis::flops::FlopsSource::FlopCounter
            && (o.flops - want("flops")).abs() > 0.5
        {
            errors.push(format!(
                "{file}: {name} {shapes:?} flops {} vs {}",
                o.flops,
                want("flops")
            ));
        }
        if r.get("self_device_time_total").is_some() {
            let dev = |ns: i64| ns as f64 / 1e3;
            for (what, ours, k) in [
                (
                    "self device",
                    dev(o.self_device_ns),
                    "self_device_time_total",
                ),
                ("device total", dev(o.device_total_ns), "device_time_total"),
            ] {
                if !close(ours, want(k)) {
                    errors.push(format!(
                        "{file}: {name} {shapes:?} {what} {ours} vs {}",
                        want(k)
                    ));
                }
            }
            for (what, ours, k) in [
                (
                    "self device mem",
                    o.self_device_mem_bytes,
                    "self_device_memory_usage",
                ),
                ("device mem", o.device_mem_bytes, "device_memory_usage"),
            ] {
                if ours != r[k].as_i64().unwrap() {
                    errors.push(format!(
                        "{file}: {name} {shapes:?} {what} {ours} vs {}",
                        r[k]
                    ));
                }
            }
        }
    }
    // No extra CPU rows either.
    let extra = table.rows.iter().filter(|o| !o.on_device).count();
    if extra != cpu_rows {
        errors.push(format!("{file}: {extra} rows vs {cpu_rows} in torch"));
    }
    checked
}

/// A device-side row of key_averages (a kernel, memcpy, memset or GPU annotation): calls and Self
/// device time.
fn check_device_row(
    table: &OpTable,
    r: &Value,
    file: &str,
    by_shape: bool,
    errors: &mut Vec<String>,
) -> usize {
    let name = r["name"].as_str().unwrap();
    let ours = table.rows.iter().find(|o| {
        o.name == name
            && o.on_device
            && (!by_shape || o.input_shapes.is_none() || o.input_shapes.as_deref() == Some("[]"))
    });
    let Some(o) = ours else {
        errors.push(format!("{file}: missing device row {name}"));
        return 0;
    };
    if o.calls != r["count"].as_u64().unwrap() {
        errors.push(format!(
            "{file}: device {name} calls {} vs {}",
            o.calls, r["count"]
        ));
    }
    let want = r["self_device_time_total"].as_f64().unwrap();
    if !close(o.self_device_ns as f64 / 1e3, want) {
        errors.push(format!(
            "{file}: device {name} self device {} vs {want}",
            o.self_device_ns as f64 / 1e3
        ));
    }
    1
}

#[test]
fn op_table_matches_torch_key_averages_on_the_generated_corpus() {
    let refs = references();
    // The repo's own recordings are always there; the shared corpus may be absent.
    let own = refs.iter().filter(|p| p.starts_with(GPU_FIXTURES)).count();
    assert!(own >= 6, "only {own} references under {GPU_FIXTURES}");
    if tracelight_testkit::path("generated").is_some() {
        let shared = refs.iter().filter(|p| p.starts_with(generated())).count();
        tracelight_testkit::checked("generated references", shared, 7);
    }
    let mut total = 0;
    let mut errors = Vec::new();
    for rp in refs {
        let r: Value = serde_json::from_slice(&std::fs::read(&rp).unwrap()).unwrap();
        let Some(trace_file) = r["trace_file"].as_str() else {
            continue;
        };
        let dir = rp.parent().unwrap();
        let t = load_trace(dir, trace_file);
        let pc = &r["profiler_config"];
        let cfg = Config {
            with_flops: pc["with_flops"].as_bool().unwrap_or(false),
        };
        let rows = r["rows"].as_array().unwrap();
        // The per-step table's entries (the nesting alone) are the tree's, duplicates merged.
        if tree_slices(&t) != op_tree(&t).slice {
            errors.push(format!(
                "{trace_file}: tree_slices differs from op_tree's entries"
            ));
        }
        let table = op_table(&t, OpOptions::default());
        total += check(&table, rows, &cfg, trace_file, false, &mut errors);
        let sum = r["self_cpu_time_total_sum_us"].as_f64().unwrap();
        if !close(table.self_cpu_total_ns as f64 / 1e3, sum) {
            errors.push(format!(
                "{trace_file}: Self CPU sum {} vs {sum}",
                table.self_cpu_total_ns as f64 / 1e3
            ));
        }
        // torch's "Self CUDA time total": device rows, GPU annotations left out.
        let dev_sum: f64 = rows
            .iter()
            .filter(|x| {
                x["device_type"].as_str() == Some("DeviceType.CUDA")
                    && !x["is_user_annotation"].as_bool().unwrap()
            })
            .map(|x| x["self_device_time_total"].as_f64().unwrap())
            .sum();
        if !close(table.self_device_total_ns as f64 / 1e3, dev_sum) {
            errors.push(format!(
                "{trace_file}: Self device sum {} vs {dev_sum}",
                table.self_device_total_ns as f64 / 1e3
            ));
        }
        if let Some(rows) = r.get("rows_by_input_shape").and_then(|v| v.as_array()) {
            let table = op_table(
                &t,
                OpOptions {
                    group_by_input_shape: true,
                },
            );
            total += check(&table, rows, &cfg, trace_file, true, &mut errors);
        }
    }
    assert!(
        errors.is_empty(),
        "{} mismatches:\n{}",
        errors.len(),
        errors.join("\n")
    );
    assert!(total > 300, "only {total} rows checked");
    println!("{total} rows checked against torch");
}

/// The three rules the GPU recordings taught, on a hand-built trace whose answers follow from
/// torch's `_parse_kineto_results` by hand: (1) CUPTI's "Activity Buffer Request" (pid -1) nests on
/// the main thread (tid = pid) under the op it interrupted and repeats that op's kernels; (2) a
/// runtime call outside any op whose CUPTI correlation equals an op's External id gets that op's
/// kernels; (3) a `[memory]` event inside no CPU event is a `[memory]` row. FLOP rates count
/// each kernel once.
#[test]
fn hand_built_torch_quirks() {
    let ev = [
        // Main thread 10: aten::mm (External id 7) launches a 50 µs kernel.
        r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":10,"tid":10,"ts":100,"dur":100,"args":{"External id":7,"Input Dims":[[64,64],[64,64]],"Input type":["c10::BFloat16","c10::BFloat16"]}}"#,
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":10,"tid":10,"ts":180,"dur":10,"args":{"External id":7,"correlation":500}}"#,
        r#"{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":300,"dur":50,"args":{"External id":7,"correlation":500,"device":0,"stream":7}}"#,
        // The buffer request, written under pid -1, inside aten::mm in time.
        r#"{"ph":"X","cat":"overhead","name":"Activity Buffer Request","pid":-1,"tid":0,"ts":110,"dur":60}"#,
        // A runtime call outside any op whose CUPTI correlation (7) collides with mm's External id.
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaStreamIsCapturing","pid":10,"tid":10,"ts":400,"dur":2,"args":{"cbid":317,"correlation":7}}"#,
        // A device free inside no CPU event.
        r#"{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":10,"tid":10,"ts":500,"args":{"Total Reserved":0,"Total Allocated":0,"Bytes":-512,"Device Id":0,"Device Type":1,"Addr":1}}"#,
        // A thread of another process id so the main thread is told by tid = pid.
        r#"{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":10,"tid":11,"ts":105,"dur":90,"args":{"External id":9}}"#,
    ];
    let json = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
    let Loaded::Trace(t) = load_bytes("quirks.json", json.as_bytes()).unwrap() else {
        panic!("not a trace")
    };
    let table = op_table(&t, OpOptions::default());
    let row = |n: &str| {
        table
            .rows
            .iter()
            .find(|r| r.name == n && !r.on_device)
            .unwrap()
    };
    let abr = row("Activity Buffer Request");
    assert_eq!(
        (abr.calls, abr.self_cpu_ns, abr.self_device_ns),
        (1, 60_000, 50_000)
    );
    let mm = row("aten::mm");
    // 100 − 10 (launch) − 60 (buffer request) µs; device total repeats the kernel.
    assert_eq!(mm.self_cpu_ns, 30_000);
    assert_eq!((mm.self_device_ns, mm.device_total_ns), (50_000, 100_000));
    let cap = row("cudaStreamIsCapturing");
    assert_eq!((cap.self_device_ns, cap.device_total_ns), (50_000, 50_000));
    let empty = row("aten::empty");
    assert_eq!(empty.self_cpu_ns, 90_000);
    let mem = row("[memory]");
    assert_eq!(
        (mem.calls, mem.device_mem_bytes, mem.self_device_mem_bytes),
        (1, -512, -512)
    );
    assert_eq!(table.self_device_total_ns, 50_000);
    // 2·64³ FLOPs over the one 50 µs kernel.
    let f = tracelight_core::analysis::mfu::summarize(&t, 1_000_000);
    let want = 2.0 * 64f64.powi(3) / 50_000.0 / 1e3;
    assert!((f.achieved_tflops_device.unwrap() - want).abs() < 1e-12);
}
