#!/usr/bin/env python3
"""Reference numbers from Holistic Trace Analysis for the real GPU traces in shared/corpus/real.

Usage: python3 hta_reference.py [CORPUS_REAL_DIR] > hta_reference.json
(needs `pip install holistictraceanalysis`; written against HTA 0.5.0)

For each trace: HTA's temporal breakdown (idle / compute / non-compute / kernel time, us) and
kernel-type breakdown (COMMUNICATION / MEMORY / COMPUTATION / OTHER sums, us), with
include_last_profiler_step=True so the whole trace is analysed, as Tracelight does.
Failures are recorded as {"error": "..."} so the Rust test can say why a file has no numbers.
"""
import json
import logging
import os
import sys
import traceback

logging.disable(logging.WARNING)

FILES = [
    "hta/a100_80gb_rank0of16.json.gz",
    "hta/alexnet_a100_benchmark_trace.json.gz",
    "hta/cuda_event_sync_multi_stream_trace.json.gz",
    "hta/cuda_event_sync_trace.json.gz",
    "hta/cupti_range_profiler_a100_trace.json.gz",
    "hta/gp100_gpu_user_annotation_step_based_trace.json.gz",
    "hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/nccl_data_a100_rank0of2.json.gz",
    "hta/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta/sampled_2of128/rank-0.json.gz",
    "hta/simple_add_a100_kineto.json.gz",
    "hta/trace_diff/control_a100_rank3of8.json.gz",
    "hta/trace_diff/test_v100_rank1of2.json.gz",
    "hta/triton_example_a100.json.gz",
    "hta/v100_rank1of2_profile_memory.json.gz",
    "kineto/h100_libkineto_before_fix_trace.json",
    "kineto/resnet50_v100_2021-06_num_workers_0.worker0.1623143089861.pt.trace.json.gz",
    "param/dlrm_8rank/kineto/worker0_step_12.1694128201545.pt.trace.json",
    "param/et_pairs/linear_kineto.json.gz",
    # Every other real trace with GPU work (issue 18: every real GPU trace, not a subset).
    "edge/large_integer_u64_rank-70.pt.trace.json.gz",
    "edge/tiny_old_categories_inference_rank_1.json.gz",
    "hta/sampled_2of128/rank-1.json.gz",
    "kineto/resnet50_2021-01_toplevel_array.worker0.pt.trace.json.gz",
    "kineto/resnet50_2021-02_schemaVersion1_no_deviceProperties.worker0.pt.trace.json.gz",
    "kineto/resnet50_v100_2021-06_num_workers_4.worker0.1623212756351.pt.trace.json.gz",
    "kineto/tb_plugin_gpu_metrics_input.json",
    "param/et_pairs/resnet_kineto.json.gz",
] + [
    f"param/dlrm_8rank/kineto/{n}" for n in [
        "worker1_step_12.1694128201556.pt.trace.json",
        "worker2_step_12.1694128201554.pt.trace.json",
        "worker3_step_12.1694128201557.pt.trace.json",
        "worker4_step_12.1694128201547.pt.trace.json",
        "worker5_step_12.1694128201549.pt.trace.json",
        "worker6_step_12.1694128201553.pt.trace.json",
        "worker7_step_12.1694128201553.pt.trace.json",
    ]
]


def main():
    import hta
    from hta.trace_analysis import TraceAnalysis

    base = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "../../../../../shared/corpus/real")
    out = {"hta_version": getattr(hta, "__version__", "0.5.0"), "files": {}}
    for rel in FILES:
        path = os.path.abspath(os.path.join(base, rel))
        rec = {}
        try:
            ta = TraceAnalysis(trace_files={0: path}, trace_dir=os.path.dirname(path),
                               include_last_profiler_step=True)
            tb = ta.get_temporal_breakdown(visualize=False)
            row = tb.iloc[0]
            rec["temporal"] = {k: float(row[k]) for k in
                               ["idle_time(us)", "compute_time(us)", "non_compute_time(us)",
                                "kernel_time(us)"]}
            kt, _ = ta.get_gpu_kernel_breakdown(visualize=False)
            rec["kernel_types"] = {str(r["kernel_type"]): float(r["sum"]) for _, r in kt.iterrows()}
        except Exception as e:  # noqa: BLE001
            rec["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
            rec["trace"] = traceback.format_exc().splitlines()[-3:]
        out["files"][rel] = rec
        print(rel, json.dumps(rec), file=sys.stderr)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
