#!/usr/bin/env python3
"""HTA's CUDA kernel launch statistics for every real GPU trace in shared/corpus/real.

Usage: python3 hta_launch_reference.py [CORPUS_REAL_DIR] > hta_launch_reference.json
(needs `pip install holistictraceanalysis`; written against HTA 0.5.0)

For each trace, `TraceAnalysis.get_cuda_kernel_launch_stats` (include_memory_events=True, HTA's
default): the number of launch/GPU pairs, and their launch delay (GPU start - launch call end,
negatives clipped to 0 by HTA) as count of zeros, median, p95 and max, in us. Failures are
recorded as {"error": "..."}. `tests/launch_vs_hta.rs` reads the output.
"""
import json
import logging
import os
import sys

logging.disable(logging.WARNING)

FILES = [
    "hta/a100_80gb_rank0of16.json.gz",
    "hta/alexnet_a100_benchmark_trace.json.gz",
    "hta/cuda_event_sync_multi_stream_trace.json.gz",
    "hta/cuda_event_sync_trace.json.gz",
    "hta/gp100_gpu_user_annotation_step_based_trace.json.gz",
    "hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/nccl_data_a100_rank0of2.json.gz",
    "hta/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta/simple_add_a100_kineto.json.gz",
    "hta/trace_diff/control_a100_rank3of8.json.gz",
    "hta/trace_diff/test_v100_rank1of2.json.gz",
    "hta/triton_example_a100.json.gz",
    "hta/v100_rank1of2_profile_memory.json.gz",
    "kineto/resnet50_v100_2021-06_num_workers_0.worker0.1623143089861.pt.trace.json.gz",
    "kineto/resnet50_v100_2021-06_num_workers_4.worker0.1623212756351.pt.trace.json.gz",
    "param/et_pairs/linear_kineto.json.gz",
    "param/et_pairs/resnet_kineto.json.gz",
] + [
    f"param/dlrm_8rank/kineto/{n}" for n in [
        "worker0_step_12.1694128201545.pt.trace.json",
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
    from hta.trace_analysis import TraceAnalysis

    base = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "../../../../../shared/corpus/real")
    out = {"hta_version": "0.5.0", "files": {}}
    for rel in FILES:
        path = os.path.abspath(os.path.join(base, rel))
        rec = {}
        try:
            ta = TraceAnalysis(trace_files={0: path}, trace_dir=os.path.dirname(path),
                               include_last_profiler_step=True)
            df = ta.get_cuda_kernel_launch_stats(visualize=False)[0]
            d = df["launch_delay"].sort_values().tolist()
            n = len(d)
            rec = {
                "pairs": n,
                "zeros": sum(1 for x in d if x <= 0),
                "median_us": float(d[n // 2]) if n else None,
                "p95_us": float(d[min(n * 95 // 100, n - 1)]) if n else None,
                "max_us": float(d[-1]) if n else None,
            }
        except Exception as e:  # noqa: BLE001
            rec["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
        out["files"][rel] = rec
        print(rel, json.dumps(rec), file=sys.stderr)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
