#!/usr/bin/env python3
"""HTA's TraceDiff on its own trace_diff pair, for `tests/diff_vs_hta.rs`.

Usage: python3 hta_trace_diff_reference.py [CORPUS_REAL_DIR] > hta_trace_diff_reference.out.json
(needs `pip install holistictraceanalysis`; written against HTA 0.5.0)

`TraceDiff.compare_traces(control, test, control_iteration=all, test_iteration=all,
device_type=GPU)`: per kernel (and memcpy/memset) name, the count and total duration (us) on each
side over every ProfilerStep iteration of each trace (HTA's default is the first iteration only).
Each trace sits alone in a temporary folder of symlinks, as HTA reads one folder per trace.
"""
import json
import logging
import os
import sys
import tempfile

logging.disable(logging.WARNING)

from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff  # noqa: E402

real = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../../../../shared/corpus/real")
files = {"a": "hta/trace_diff/control_a100_rank3of8.json.gz", "b": "hta/trace_diff/test_v100_rank1of2.json.gz"}
tmp = tempfile.mkdtemp()
traces = {}
for side, rel in files.items():
    d = os.path.join(tmp, side)
    os.makedirs(d)
    os.symlink(os.path.abspath(os.path.join(real, rel)), os.path.join(d, os.path.basename(rel)))
    traces[side] = LabeledTrace(label=side, trace_dir=d)
ia, ib = traces["a"].iterations(), traces["b"].iterations()
df = TraceDiff.compare_traces(traces["a"], traces["b"], control_iteration=ia, test_iteration=ib, device_type=DeviceType.GPU)
rows = [
    {"name": name, "a_counts": int(r["a_counts"]), "a_us": float(r["a_total_duration"]),
     "b_counts": int(r["b_counts"]), "b_us": float(r["b_total_duration"])}
    for name, r in df.iterrows()
]
json.dump({"files": files, "iterations": {"a": ia, "b": ib}, "kernels": rows}, sys.stdout, indent=0)
print()
