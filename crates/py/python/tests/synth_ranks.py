"""Hand-built multi-rank Kineto traces whose answer is known by construction, for the run tests.

Rank ``r`` of ``world`` runs ``steps`` steps; each step is one gemm kernel (launched by
``aten::mm``) then one NCCL all_reduce over all ranks (``Process Group Name`` "0", ``Seq`` = the
step). Rank ``slow`` computes ``slow_extra_us`` longer, so every other rank waits for it in every
all_reduce: it is the rank waited for, and each collective's arrival skew is ``slow_extra_us``
plus the spread of the others' jitter. Every rank's clock starts at the same time.
"""

import json
from pathlib import Path

GEMM = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3"
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def rank_trace(rank: int, world: int, steps: int, slow: int, slow_extra_us: float) -> dict:
    ev = []
    corr = 0
    step_us = 1000.0 + slow_extra_us
    for k in range(steps):
        t0 = k * step_us
        compute = 300.0 + (rank % 7) * 3.0 + (slow_extra_us if rank == slow else 0.0)
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{k}",
                   "pid": 1, "tid": 1, "ts": t0, "dur": step_us - 1.0})
        # The gemm: op, launch, kernel.
        corr += 1
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                   "ts": t0 + 1.0, "dur": 10.0})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": t0 + 2.0, "dur": 5.0, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": GEMM, "pid": 0, "tid": 7,
                   "ts": t0 + 10.0, "dur": compute,
                   "args": {"device": 0, "stream": 7, "correlation": corr}})
        # The all_reduce: every rank's kernel ends when the slowest rank has arrived.
        corr += 1
        start = t0 + 10.0 + compute + 1.0
        last = t0 + 10.0 + 300.0 + 18.0 + slow_extra_us + 1.0
        end = max(start, last) + 50.0
        args = {"Collective name": "allreduce", "In msg nelems": 1 << 20,
                "Out msg nelems": 1 << 20, "dtype": "Float", "Group size": world,
                "Process Group Name": "0", "Seq": k}
        ev.append({"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": 1, "tid": 1,
                   "ts": t0 + 20.0, "dur": 8.0, "args": dict(args)})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": t0 + 21.0, "dur": 5.0, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": NCCL, "pid": 0, "tid": 20,
                   "ts": start, "dur": end - start,
                   "args": {"device": 0, "stream": 20, "correlation": corr, **args}})
    return {"schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world},
            "traceEvents": ev}


def write_ranks(out: Path, world: int, steps: int = 3, slow: int = 0,
                slow_extra_us: float = 200.0) -> list:
    """Writes ``rank-R.pt.trace.json`` for every rank into ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in range(world):
        p = out / f"rank-{r}.pt.trace.json"
        p.write_text(json.dumps(rank_trace(r, world, steps, slow, slow_extra_us)))
        paths.append(p)
    return paths


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="write hand-built rank traces (BENCHMARKS.md)")
    ap.add_argument("out")
    ap.add_argument("--world", type=int, default=256)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--slow", type=int, default=137)
    a = ap.parse_args()
    write_ranks(Path(a.out), a.world, steps=a.steps, slow=a.slow)
