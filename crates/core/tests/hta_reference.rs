//! The HTA temporal breakdown against Holistic Trace Analysis itself on the real GPU traces.
//!
//! Expected values produced by HTA 0.5.0 (pip `holistictraceanalysis`, Python 3.11) with
//! `tests/scripts/hta_reference.py` (`include_last_profiler_step=True`); its raw output is
//! `tests/scripts/hta_reference.out.json`. Each of kernel span, idle, compute and non-compute must
//! agree within 1 % of the span (HTA rounds timestamps to whole µs, we keep ns).
//!
//! What is compared is [`temporal_hta_compat`], which selects the events HTA keeps (see its doc:
//! HTA drops GPU work whose launching CPU call is absent when a trace has two or more
//! ProfilerSteps — 872 of 7747 GPU events in `a100_80gb_rank0of16`, 5 % of compute — and counts
//! `cuda_sync` events on GPU streams as non-compute). [`temporal`] (the DESIGN definition: all
//! kernels, memcpy and memset) is checked only for self-consistency.
//!
//! Files where HTA gives no usable number (`None` below) and why:
//! - `hta/cupti_range_profiler_a100_trace.json.gz`: HTA raises IndexError — no event HTA keeps
//!   has a stream, so `merged_kernels.iloc[0]` fails on an empty frame; we report an empty
//!   breakdown.
//! - `kineto/h100_libkineto_before_fix_trace.json`: HTA's `assert idle_time <= kernel_time`
//!   fails. Its only kernel lasts 0.02 µs; HTA's integer-µs parsing turns that `dur` into -1, so
//!   the span is negative. We keep ns and report a 20 ns span.
//! - `hta/triton_example_a100.json.gz`: HTA is wrong — a `cpu_op` (the Triton launcher) carries a
//!   `stream` arg, and HTA selects "GPU" events by `stream != -1`, so it counts that 94 µs CPU op
//!   as GPU compute; the real kernel runs 1.8 µs, which is what we report.

#![allow(clippy::unwrap_used)]

use tracelight_core::analysis::gpu::{temporal, temporal_hta_compat};
use tracelight_core::ingest::{load_bytes, Loaded};

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus/real");

/// (file, [kernel_time, idle, compute, non_compute] in µs from HTA 0.5.0).
const HTA: &[(&str, Option<[f64; 4]>)] = &[
    (
        "hta/a100_80gb_rank0of16.json.gz",
        Some([1229072.0, 848216.0, 179676.0, 201180.0]),
    ),
    (
        "hta/alexnet_a100_benchmark_trace.json.gz",
        Some([12996011.0, 12929684.0, 10637.0, 55690.0]),
    ),
    (
        "hta/cuda_event_sync_multi_stream_trace.json.gz",
        Some([19506.0, 19132.0, 371.0, 3.0]),
    ),
    (
        "hta/cuda_event_sync_trace.json.gz",
        Some([263.0, 207.0, 49.0, 7.0]),
    ),
    ("hta/cupti_range_profiler_a100_trace.json.gz", None), // HTA failed: IndexError: single positional indexer is out-of-bounds
    (
        "hta/gp100_gpu_user_annotation_step_based_trace.json.gz",
        Some([7737.0, 7446.0, 290.0, 1.0]),
    ),
    (
        "hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        Some([8911.0, 8780.0, 96.0, 35.0]),
    ),
    (
        "hta/nccl_data_a100_rank0of2.json.gz",
        Some([660550.0, 506512.0, 113012.0, 41026.0]),
    ),
    (
        "hta/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
        Some([480029.0, 12143.0, 464915.0, 2971.0]),
    ),
    (
        "hta/sampled_2of128/rank-0.json.gz",
        Some([1222847.0, 675191.0, 210320.0, 337336.0]),
    ),
    (
        "hta/simple_add_a100_kineto.json.gz",
        Some([108919.0, 108903.0, 16.0, 0.0]),
    ),
    (
        "hta/trace_diff/control_a100_rank3of8.json.gz",
        Some([464594.0, 76007.0, 281336.0, 107251.0]),
    ),
    (
        "hta/trace_diff/test_v100_rank1of2.json.gz",
        Some([744514.0, 51692.0, 514576.0, 178246.0]),
    ),
    ("hta/triton_example_a100.json.gz", None), // HTA counts a cpu_op as GPU work (above); HTA said span 94, compute 94
    (
        "hta/v100_rank1of2_profile_memory.json.gz",
        Some([1732965.0, 732352.0, 620516.0, 380097.0]),
    ),
    ("kineto/h100_libkineto_before_fix_trace.json", None), // HTA failed: AssertionError:
    (
        "kineto/resnet50_v100_2021-06_num_workers_0.worker0.1623143089861.pt.trace.json.gz",
        Some([996477.0, 392919.0, 591532.0, 12026.0]),
    ),
    (
        "param/dlrm_8rank/kineto/worker0_step_12.1694128201545.pt.trace.json",
        Some([13009.0, 6419.0, 1034.0, 5556.0]),
    ),
    (
        "param/et_pairs/linear_kineto.json.gz",
        Some([1008570.0, 637587.0, 369343.0, 1640.0]),
    ),
];

#[test]
fn temporal_breakdown_matches_hta_0_5_0_on_real_gpu_traces() {
    if !std::path::Path::new(REAL).exists() {
        println!("note: {REAL} not found; skipping");
        return;
    }
    let mut errors = Vec::new();
    let mut checked = 0;
    for (file, want) in HTA {
        let bytes = std::fs::read(format!("{REAL}/{file}")).unwrap();
        let Ok(Loaded::Trace(t)) = load_bytes(file, &bytes) else {
            panic!("{file} must load as a trace")
        };
        let got = temporal_hta_compat(&t);
        // The DESIGN-definition breakdown is self-consistent on every file too.
        let design = temporal(&t);
        assert_eq!(
            design.kernel_span_ns,
            design.busy_ns + design.idle_ns,
            "{file}"
        );
        let ours = [
            got.kernel_span_ns as f64 / 1e3,
            got.idle_ns as f64 / 1e3,
            got.compute_ns as f64 / 1e3,
            got.non_compute_ns as f64 / 1e3,
        ];
        assert_eq!(got.kernel_span_ns, got.busy_ns + got.idle_ns, "{file}");
        assert_eq!(got.busy_ns, got.compute_ns + got.non_compute_ns, "{file}");
        let Some(want) = want else { continue };
        checked += 1;
        let tol = 0.01 * want[0];
        for (k, label) in ["span", "idle", "compute", "non_compute"]
            .iter()
            .enumerate()
        {
            if (ours[k] - want[k]).abs() > tol.max(2.0) {
                errors.push(format!(
                    "{file}: {label} ours {:.1} vs HTA {:.1}",
                    ours[k], want[k]
                ));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(checked >= 15);
}
