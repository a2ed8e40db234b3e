"""The TensorBoard plugin's own step breakdown on the corpus traces, for step_breakdown.rs.

Runs torch-tb-profiler 0.4.3 (pip `torch-tb-profiler`; its OverallParser, the algorithm behind the
plugin's Overview "Step Time Breakdown") on each Kineto trace listed below and writes, per trace,
the plugin's steps (after its own adjustment: a step ends where the GPU work its host step launched
ends, and starts no earlier than the previous step's end) and the per-step cost of each role in
µs, to tb_plugin_reference.out.json beside this script.

    python3 -m venv /tmp/tbvenv && /tmp/tbvenv/bin/pip install torch-tb-profiler==0.4.3
    /tmp/tbvenv/bin/python crates/core/tests/scripts/tb_plugin_reference.py ../shared/corpus

Never run in CI (it needs the plugin); the output is checked in.
"""

import gzip
import json
import logging
import sys
from pathlib import Path

logging.disable(logging.WARNING)
from torch_tb_profiler.profiler.data import RunProfileData  # noqa: E402
from torch_tb_profiler.profiler.event_parser import ProfileRole  # noqa: E402
from torch_tb_profiler.profiler.overall_parser import OverallParser  # noqa: E402

# The plugin keeps only the steps' costs; its (adjusted) step windows are what it aggregates over.
_aggregate = OverallParser.aggregate
STEPS = []


def _keep_steps(self, steps, role_ranges):
    STEPS[:] = list(steps)
    return _aggregate(self, steps, role_ranges)


OverallParser.aggregate = _keep_steps

# The traces of the plugin's own era (2021: categories `Operator`, `Runtime`, `Kernel`, `Memcpy`,
# `Memset`). On newer traces the plugin's category map (torch_tb_profiler/profiler/trace.py) has no
# `cuda_runtime`, `cuda_driver` or `python_function`, it drops `user_annotation` events but for
# the step and c10d names, and it calls an NCCL kernel communication only when launched under an
# `nccl:*` op: its breakdown there is not the TensorBoard definition applied to the trace.
FILES = [
    "real/kineto/resnet50_2021-02_schemaVersion1_no_deviceProperties.worker0.pt.trace.json.gz",
    "real/kineto/resnet50_v100_2021-06_num_workers_0.worker0.1623143089861.pt.trace.json.gz",
    "real/kineto/resnet50_v100_2021-06_num_workers_4.worker0.1623212756351.pt.trace.json.gz",
    "real/kineto/tb_plugin_gpu_metrics_input.json",
]
ROLES = ["kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other"]


def main(corpus: Path) -> None:
    out = {"plugin": "torch-tb-profiler 0.4.3", "files": {}}
    for rel in FILES:
        p = corpus / rel
        raw = gzip.open(p).read() if p.suffix == ".gz" else p.read_bytes()
        data = RunProfileData.from_json("worker0", 0, json.loads(raw))
        data.process()
        steps = []
        for name, (lo, hi), costs in zip(data.steps_names, STEPS, data.steps_costs):
            c = costs.costs
            steps.append(
                {
                    "name": name,
                    "start_us": lo,
                    "end_us": hi,
                    **{f"{r}_us": c[i] for i, r in enumerate(ROLES)},
                    "total_us": c[ProfileRole.Total],
                }
            )
        out["files"][rel] = {"steps": steps}
        print(rel, len(steps), file=sys.stderr)
    dst = Path(__file__).with_name("tb_plugin_reference.out.json")
    dst.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
