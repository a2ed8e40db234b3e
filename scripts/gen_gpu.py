#!/usr/bin/env python3
"""Records the repo's own GPU fixtures: real torch.profiler traces, a CUDA caching-allocator
snapshot and a memory timeline from small training runs on a CUDA device, each beside the answers
torch itself gives for the same window, so the tests compare our analytics with torch's and not
with numbers we wrote down.

    python3 scripts/gen_gpu.py --out DIR [--big]

Needs torch with a CUDA device (it refuses to run on CPU). The reference format follows
`../shared/corpus/tools/generate.py` (`NAME.reference.json`: key_averages rows sorted by Self CPU,
`rows_by_input_shape`, the profiler config, env) and adds the device columns that a CPU run
cannot give: `self_device_time_total`, `device_time_total` (us), `self_device_memory_usage`,
`device_memory_usage` (bytes) and `device_type` per row. Runs:

- `gpu_mlp`: MLP + AdamW in fp32, CPU+CUDA activities, record_shapes, profile_memory, with_stack,
  with_flops; also export_memory_timeline (cuda:0) and an ExecutionTraceObserver trace.
- `gpu_lm_bf16`: a small decoder LM under bf16 autocast (tensor cores, fused attention), one
  `.item()` per step (a synchronization point), a data-loader stand-in that sleeps on the CPU.
- `gpu_matmul`: a bf16 8192^3 matmul loop; the reference adds its speed measured with CUDA events
  outside the profiler, so achieved TFLOPS / MFU can be checked against the device's own clock.
- `gpu_lm_bf16.snapshot.pickle`: `torch.cuda.memory._dump_snapshot` after three steps of the LM
  with `_record_memory_history` on from an empty allocator; its reference holds what the allocator
  itself reports at the dump (`memory_allocated`, `memory_reserved`, `max_memory_allocated`,
  `memory_stats`).
- `--big`: the LM for many profiled steps, for BENCHMARKS.md (not a fixture).
"""
import argparse
import gzip
import json
import os
import platform
import shutil
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ExecutionTraceObserver, ProfilerActivity, profile, record_function

DEV = "cuda"


class MLP(nn.Module):
    def __init__(self, d_in, hidden, d_out, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.GELU()]
            d = hidden
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(d, d_out)

    def forward(self, x):
        return self.head(self.body(x))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class LM(nn.Module):
    def __init__(self, vocab, d, heads, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.out = nn.Linear(d, vocab)

    def forward(self, tok):
        h = self.emb(tok)
        for b in self.blocks:
            h = b(h)
        return self.out(self.ln(h))


def mlp_workload(seed, dev=DEV):
    torch.manual_seed(seed)
    m = MLP(512, 1024, 16, depth=3).to(dev)
    x = torch.randn(256, 512, device=dev)
    y = torch.randint(0, 16, (256,), device=dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)

    def step():
        with record_function("## forward ##"):
            loss = F.cross_entropy(m(x), y)
        with record_function("## backward ##"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("## optimizer ##"):
            opt.step()

    return step, f"MLP 512-1024x3-16 GELU, batch 256, AdamW, fp32 on {dev}"


def lm_workload(seed, batch=8, seq=256):
    torch.manual_seed(seed)
    vocab = 4096
    m = LM(vocab, d=512, heads=8, layers=4).to(DEV)
    opt = torch.optim.AdamW(m.parameters(), lr=3e-4, fused=True)
    g = torch.Generator().manual_seed(seed)

    def step():
        with record_function("## data ##"):
            tok = torch.randint(0, vocab, (batch, seq + 1), generator=g)
            time.sleep(0.002)  # a data loader that keeps the GPU waiting
            tok = tok.to(DEV, non_blocking=False)
        with record_function("## forward ##"):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = m(tok[:, :-1])
                loss = F.cross_entropy(logits.float().reshape(-1, vocab), tok[:, 1:].reshape(-1))
        with record_function("## backward ##"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("## optimizer ##"):
            opt.step()
        return loss.item()  # the synchronization point a step logger adds

    return step, "decoder LM vocab 4096, d 512, 8 heads, 4 layers, seq 256, batch 8, bf16 autocast, fused AdamW"


def attr(e, *names):
    for n in names:
        v = getattr(e, n, None)
        if v is not None:
            return v
    return 0


def row(e, with_shapes=False):
    r = {
        "name": e.key,
        "count": int(e.count),
        "self_cpu_time_total": float(e.self_cpu_time_total),
        "cpu_time_total": float(e.cpu_time_total),
        "self_device_time_total": float(attr(e, "self_device_time_total", "self_cuda_time_total")),
        "device_time_total": float(attr(e, "device_time_total", "cuda_time_total")),
        "self_cpu_memory_usage": int(e.self_cpu_memory_usage),
        "cpu_memory_usage": int(e.cpu_memory_usage),
        "self_device_memory_usage": int(attr(e, "self_device_memory_usage", "self_cuda_memory_usage")),
        "device_memory_usage": int(attr(e, "device_memory_usage", "cuda_memory_usage")),
        "flops": int(e.flops or 0),
        "is_user_annotation": bool(getattr(e, "is_user_annotation", False)),
        "device_type": str(e.device_type),
    }
    if with_shapes:
        r["input_shapes"] = str(e.input_shapes)
    return r


def references(prof):
    ka = prof.key_averages()
    rows = sorted((row(e) for e in ka), key=lambda r: (-r["self_cpu_time_total"], r["name"]))
    ks = prof.key_averages(group_by_input_shape=True)
    ref = {
        "rows": rows,
        "self_cpu_time_total_sum_us": sum(r["self_cpu_time_total"] for r in rows),
        "self_device_time_total_sum_us": sum(r["self_device_time_total"] for r in rows),
        "n_rows": len(rows),
        "rows_by_input_shape": sorted(
            (row(e, True) for e in ks),
            key=lambda r: (-r["self_cpu_time_total"], r["name"], r["input_shapes"])),
    }
    table = ka.table(sort_by="self_cpu_time_total", row_limit=-1, max_name_column_width=80)
    return ref, table


def env_info():
    p = torch.cuda.get_device_properties(0)
    return {
        "num_threads": torch.get_num_threads(),
        "torch_version": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": torch.cuda.get_device_name(0),
        "sm_count": p.multi_processor_count,
        "device_memory_bytes": p.total_memory,
        "generator": "scripts/gen_gpu.py",
    }


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)


def gz(path):
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(path)
    return os.path.basename(path) + ".gz"


CFG = dict(record_shapes=True, profile_memory=True, with_stack=True, with_flops=True)


def profiled(out, name, step, desc, steps, cfg, extras=(), warm=3, sync_each=True, cuda=True,
             sched=True):
    """Warm up outside the profiler, then profile `steps` steps as one schedule cycle
    (warmup 1, active `steps`: the trace has ProfilerStep#N like a tensorboard_trace_handler run)
    and export it from on_trace_ready, with torch's key_averages of that same window.
    `sched=False`: a plain `with profile()` block and no prof.step(), exported after it (no
    ProfilerStep, and CUPTI's first buffer request falls inside the window)."""
    for _ in range(warm):
        step()
    if cuda:
        torch.cuda.synchronize()
    notes, files = [], []
    et = None
    kw = dict(cfg)
    if "et" in extras:
        et = ExecutionTraceObserver().register_callback(os.path.join(out, name + ".et.json"))
        kw["execution_trace_observer"] = et
    result = {}

    def ready(prof):
        trace = os.path.join(out, name + ".pt.trace.json")
        prof.export_chrome_trace(trace)
        files.insert(0, gz(trace))
        if "memory_timeline" in extras:
            for suffix in (".memory_timeline.json", ".memory_timeline.raw.json.gz"):
                p = os.path.join(out, name + suffix)
                try:
                    prof.export_memory_timeline(p, device="cuda:0" if cuda else "cpu")
                    files.append(os.path.basename(p))
                except Exception as e:  # report, never hide
                    notes.append(f"export_memory_timeline({suffix}) failed: {type(e).__name__}: {e}")
        ref, table = references(prof)
        with open(os.path.join(out, name + ".table.txt"), "w") as f:
            f.write(table)
        result["ref"] = ref

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    if sched:
        sched = dict(wait=0, warmup=1, active=steps, repeat=1)
        with profile(activities=acts, schedule=torch.profiler.schedule(**sched),
                     on_trace_ready=ready, **kw) as prof:
            for i in range(steps + 1):
                step()
                if sync_each and cuda:
                    torch.cuda.synchronize()
                prof.step()
    else:
        sched = None
        with profile(activities=acts, **kw) as prof:
            for i in range(steps):
                step()
                if sync_each and cuda:
                    torch.cuda.synchronize()
        ready(prof)
    if et is not None:
        et.unregister_callback()
        if os.path.exists(os.path.join(out, name + ".et.json")):
            files.append(gz(os.path.join(out, name + ".et.json")))
        else:
            notes.append("ExecutionTraceObserver wrote no file")
    ref = result["ref"]
    ref.update({
        "trace_file": files[0], "files": files + [name + ".table.txt"], "workload_desc": desc,
        "exporter": "export_chrome_trace from on_trace_ready", "schedule": sched,
        "steps": steps, "profiler_config": cfg, "notes": notes, "env": env_info(),
        "activities": [str(a) for a in acts],
    })
    return ref


def matmul_run(out):
    n, reps = 8192, 10
    a = torch.randn(n, n, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=DEV, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        a @ b
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / reps
    measured_tflops = 2 * n**3 / (ms * 1e-3) / 1e12

    def step():
        for _ in range(reps):
            torch.mm(a, b)

    for name, sched in (("gpu_matmul_plain", False), ("gpu_matmul", True)):
        ref = profiled(out, name, step, f"bf16 {n}^3 torch.mm x{reps} per step", 2,
                       dict(record_shapes=True, with_flops=True), warm=1, sched=sched)
        ref["cuda_event"] = {"n": n, "ms_per_matmul": ms, "tflops": measured_tflops,
                             "flops_per_matmul": 2 * n**3}
        write_json(os.path.join(out, name + ".reference.json"), ref)
    return ref


def snapshot_run(out, seed, name="gpu_lm_bf16", batch=4, seq=128, steps=3, stacks="python",
                 max_entries=200000):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    torch.cuda.memory._record_memory_history(max_entries=max_entries, stacks=stacks)
    step, desc = lm_workload(seed, batch=batch, seq=seq)
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    path = os.path.join(out, name + ".snapshot.pickle")
    torch.cuda.memory._dump_snapshot(path)
    st = torch.cuda.memory_stats()
    ref = {
        "file": name + ".snapshot.pickle",
        "workload_desc": desc + f" ({steps} steps, batch {batch}, seq {seq}, stacks={stacks})",
        "allocated_bytes_before_history": base,
        "memory_allocated": torch.cuda.memory_allocated(),
        "memory_reserved": torch.cuda.memory_reserved(),
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "memory_stats": {k: v for k, v in st.items()
                         if k.startswith(("allocated_bytes.all", "reserved_bytes.all",
                                          "active_bytes.all", "segment.all", "allocation.all",
                                          "num_"))},
        "env": env_info(),
    }
    torch.cuda.memory._record_memory_history(enabled=None)
    return ref


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("gen_gpu.py records GPU traces: no CUDA device here")
    os.makedirs(a.out, exist_ok=True)
    todo = {
        # First: CUPTI's buffer request lands in this window (an "Activity Buffer Request" row).
        "gpu_mlp_plain": lambda: profiled(a.out, "gpu_mlp_plain", *mlp_workload(1), 3, CFG,
                                          sched=False),
        "gpu_mlp": lambda: profiled(a.out, "gpu_mlp", *mlp_workload(1), 3, CFG,
                                    extras=("et", "memory_timeline")),
        "gpu_lm_bf16": lambda: profiled(a.out, "gpu_lm_bf16", *lm_workload(2), 3,
                                        dict(CFG, with_stack=False), sync_each=False),
        "gpu_matmul": lambda: matmul_run(a.out),
        # The same MLP on the CPU with this torch: tells a torch-version rule from a GPU one.
        "cpu_mlp_stack": lambda: profiled(a.out, "cpu_mlp_stack", *mlp_workload(1, "cpu"), 2, CFG,
                                          cuda=False),
        "snapshot": lambda: snapshot_run(a.out, 3),
    }
    if a.big:
        # A snapshot the size of a real run's (C++ frames too), for BENCHMARKS.md.
        todo["snapshot_big"] = lambda: snapshot_run(a.out, 5, "gpu_lm_big", batch=16, seq=512,
                                                    steps=120, stacks="all", max_entries=100000)
        todo["gpu_lm_big"] = lambda: profiled(a.out, "gpu_lm_big", *lm_workload(4, batch=16), 60,
                                              CFG, sync_each=False)
    for name, fn in todo.items():
        if a.only and a.only not in name:
            continue
        t0 = time.time()
        try:
            ref = fn()
            stem = {"snapshot": "gpu_lm_bf16.snapshot",
                    "snapshot_big": "gpu_lm_big.snapshot"}.get(name, name)
            write_json(os.path.join(a.out, stem + ".reference.json"), ref)
            print(f"{name}: ok in {time.time() - t0:.1f} s", flush=True)
        except Exception as e:
            import traceback
            traceback.print_exc()
            print(f"{name}: FAILED {type(e).__name__}: {e}", flush=True)


if __name__ == "__main__":
    main()
