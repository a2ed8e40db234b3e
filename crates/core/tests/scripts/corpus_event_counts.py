#!/usr/bin/env python3
"""Independent event counts for crates/core/tests/kineto.rs: `traceEvents` entries per Kineto trace
of the shared corpus, as python's json module reads them (`len(data["traceEvents"])`, or `len(data)`
for a bare array of events).

Stdlib only. From the repo root:

    cd ../shared/corpus && python3 $OLDPWD/crates/core/tests/scripts/corpus_event_counts.py \\
        > $OLDPWD/crates/core/tests/scripts/corpus_event_counts.out.json

The files are listed here (inputs, not answers); the output holds numbers only, never corpus bytes.
"""
import gzip
import json
import sys

FILES = [
    'real/kineto/h100_libkineto_before_fix_trace.json',
    'real/kineto/resnet50_2021-01_toplevel_array.worker0.pt.trace.json.gz',
    'real/kineto/resnet50_2021-02_schemaVersion1_no_deviceProperties.worker0.pt.trace.json.gz',
    'real/kineto/resnet50_v100_2021-06_num_workers_0.worker0.1623143089861.pt.trace.json.gz',
    'real/kineto/resnet50_v100_2021-06_num_workers_4.worker0.1623212756351.pt.trace.json.gz',
    'real/kineto/tb_plugin_gpu_metrics_input.json',
    'real/edge/cpu_only_no_rank_no_schemaVersion.json.gz',
    'real/edge/large_integer_u64_rank-70.pt.trace.json.gz',
    'real/edge/tiny_old_categories_inference_rank_1.json.gz',
    'real/hta/a100_80gb_rank0of16.json.gz',
    'real/hta/alexnet_a100_benchmark_trace.json.gz',
    'real/hta/cpu_only_gloo_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz',
    'real/hta/cuda_event_sync_multi_stream_trace.json.gz',
    'real/hta/cuda_event_sync_trace.json.gz',
    'real/hta/cupti_range_profiler_a100_trace.json.gz',
    'real/hta/gp100_gpu_user_annotation_step_based_trace.json.gz',
    'real/hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz',
    'real/hta/mtia_inference_rank_0.json.gz',
    'real/hta/mtia_rank_0.json.gz',
    'real/hta/nccl_data_a100_rank0of2.json.gz',
    'real/hta/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz',
    'real/hta/simple_add_a100_kineto.json.gz',
    'real/hta/triton_example_a100.json.gz',
    'real/hta/v100_rank1of2_profile_memory.json.gz',
    'real/hta/trace_diff/control_a100_rank3of8.json.gz',
    'real/hta/trace_diff/test_v100_rank1of2.json.gz',
    'real/hta/sampled_2of128/rank-0.json.gz',
    'real/hta/sampled_2of128/rank-1.json.gz',
    'real/param/et_pairs/linear_kineto.json.gz',
    'real/param/et_pairs/resnet_kineto.json.gz',
    'real/param/dlrm_8rank/kineto/worker0_step_12.1694128201545.pt.trace.json',
    'real/param/dlrm_8rank/kineto/worker7_step_12.1694128201553.pt.trace.json',
    'generated/lstm_mem.1795343595561069429.pt.trace.json',
    'generated/mlp_wide_flops_et.json',
    'generated/resnet_all.1795343593430138415.pt.trace.json.gz',
]


def events(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt', encoding='utf-8', errors='surrogateescape') as f:
        data = json.load(f)
    return len(data) if isinstance(data, list) else len(data['traceEvents'])


if __name__ == '__main__':
    doc = {
        'generator': 'crates/core/tests/scripts/corpus_event_counts.py (python3 stdlib only)',
        'files': {p: events(p) for p in FILES},
    }
    json.dump(doc, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write('\n')
