#!/usr/bin/env python3
"""The TensorBoard profiler plugin's module view of a trace, as JSON: the peer tool's answer the
module view is checked against (`crates/core/tests/modules.rs`).

    python3 -m venv /tmp/tbv && /tmp/tbv/bin/pip install torch-tb-profiler==0.4.3
    /tmp/tbv/bin/python scripts/tb_modules_reference.py TRACE > TRACE_STEM.tb_modules.reference.json

Rows in the plugin's depth-first order: the module path (names without `nn.Module: `), its
occurrences, operators, host duration and self host duration (us; the plugin's self = minus
every child node, ops included), device duration and self device duration. The plugin reports
device duration 0 for eager modules (pytorch/kineto#915): the rows keep what it says.
"""
import json
import sys
import tempfile

from torch_tb_profiler.profiler.data import RunProfileData
from torch_tb_profiler.profiler.module_op import aggegate_module_view


def main():
    data = RunProfileData.parse("w", 0, sys.argv[1], tempfile.mkdtemp())
    data.process()
    stats = aggegate_module_view(data.tid2tree, data.events)
    out = []

    def walk(rows, prefix):
        for s in rows:
            path = prefix + [s.name]
            out.append({"path": "/".join(path), "occurences": s.occurences, "operators": s.operators,
                        "host_duration_us": s.host_duration, "self_host_duration_us": s.self_host_duration,
                        "device_duration_us": s.device_duration,
                        "self_device_duration_us": s.self_device_duration})
            walk(s.children, path)

    walk(stats or [], [])
    json.dump({"tool": "torch-tb-profiler 0.4.3 module_op.aggegate_module_view", "rows": out},
              sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
