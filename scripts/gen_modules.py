#!/usr/bin/env python3
"""Records the module / forward-backward / source-line fixtures: a CPU torch.profiler trace of a
model with nested nn.Modules, beside the answers torch itself (and the autograd graph) gives, so
the tests compare our module tree, forward <-> backward pairs and call stacks with torch's and not
with numbers we wrote down.

    /work/torchvenv/bin/python scripts/gen_modules.py --out crates/core/tests/fixtures/torch-2.15-cpu

CPU is enough (the trace has no kernels; the GPU side of the same analyses is checked on
`torch-2.11-cuda13-h100/gpu_mlp`). The run: `TinyNet` (embed Linear, two `Block`s of
LayerNorm + `Attention` (q, k, v, o Linear) + LayerNorm + `FeedForward` (up Linear, GELU, down
Linear), head Linear), SGD, `schedule(wait=1, warmup=1, active=2)`, record_shapes, with_stack,
with_modules, and `_ExperimentalConfig(verbose=True)` so that torch's own events carry their
Python stack (without it torch 2.15 leaves `FunctionEvent.stack` empty in eager mode and
`key_averages(group_by_stack_n=...)` groups by name alone). Each step is wrapped in
`## forward ##`, `## backward ##`, `## optimizer ##` record_functions.

`modules.reference.json.gz` (gzipped: the per-event list is most of it) holds:
- `rows`: `key_averages()` rows (as in ../shared/corpus/tools/generate.py).
- `rows_by_stack_5`: `key_averages(group_by_stack_n=5)` rows: name, stack (innermost first),
  count, cpu_time_total, self_cpu_time_total (us).
- `events`: every CPU op torch reports (not Python frames): name, start_us (relative to the
  profile's start), duration_us, sequence_nr, fwd_thread and torch's Python stack
  (innermost first, as an index into `stacks`). torch gives a backward op the stack of the forward op it differentiates, so
  the `nn.Module: X` entries of a backward op's stack name the module whose forward it belongs to.
- `modules`: per module instance, by construction from forward hooks: its qualified name
  (`blocks.0.attn.q`), class, the name the profiler gives it (`nn.Module: Linear_3`: class name and
  the instance's index among that class's instances, in order of first call; checked against the
  trace), the path of those names from the root, the number of forward calls in the window, and
  the autograd nodes its forward created (`name`, `sequence_nr`: the nodes reachable from its
  output's grad_fn and not from its inputs'), so each backward node in the trace has a module by
  construction.
"""
import argparse
import gzip
import json
import os
import platform
import shutil
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._C._profiler import _ExperimentalConfig
from torch.profiler import ProfilerActivity, profile, record_function, schedule


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        q = self.q(x).view(b, s, h, d // h).transpose(1, 2)
        k = self.k(x).view(b, s, h, d // h).transpose(1, 2)
        v = self.v(x).view(b, s, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (d // h) ** 0.5)
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        return self.o(y)


class FeedForward(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.norm2 = nn.LayerNorm(d)
        self.ff = FeedForward(d)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ff(self.norm2(x))


class TinyNet(nn.Module):
    def __init__(self, d_in, d, heads, depth, classes):
        super().__init__()
        self.embed = nn.Linear(d_in, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(depth)])
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        h = self.embed(x)
        for b in self.blocks:
            h = b(h)
        return self.head(h.mean(dim=1))


def autograd_nodes(out, inputs):
    """The autograd nodes reachable from `out`'s grad_fn that are not reachable from any input's:
    the nodes this call created."""

    def reach(roots):
        seen, stack = {}, [r for r in roots if r is not None]
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen[id(n)] = n
            stack.extend(f for f, _ in n.next_functions if f is not None)
        return seen

    before = reach([t.grad_fn for t in inputs if isinstance(t, torch.Tensor)])
    after = reach([out.grad_fn] if isinstance(out, torch.Tensor) else [])
    return [
        {"name": n.name(), "sequence_nr": int(n._sequence_nr())}
        for k, n in after.items()
        if k not in before and "AccumulateGrad" not in n.name()
    ]


class Recorder:
    """Forward hooks that name each module as the profiler does and record its autograd nodes."""

    def __init__(self, model):
        self.qual = {m: q for q, m in model.named_modules()}
        self.index = {}  # module -> its index among instances of its class, by first call
        self.count = {}  # class name -> instances seen
        self.stack = []  # profiler names of the modules being called
        self.active = False
        self.calls = {}  # qualname -> {"calls", "nodes": [...]}
        self.paths = {}
        for m in model.modules():
            m.register_forward_pre_hook(self.pre)
            m.register_forward_hook(self.post)

    def name(self, m):
        cls = type(m).__name__
        if m not in self.index:
            self.index[m] = self.count.get(cls, 0)
            self.count[cls] = self.index[m] + 1
        return f"{cls}_{self.index[m]}"

    def pre(self, m, inputs):
        self.stack.append(self.name(m))

    def post(self, m, inputs, out):
        path = "/".join(self.stack)
        self.stack.pop()
        if not self.active:
            return
        q = self.qual[m]
        rec = self.calls.setdefault(q, {"calls": 0, "graphs": []})
        rec["calls"] += 1
        # Only references here: walking the graph now would put thousands of Python frames
        # into the trace. The nodes stay valid after backward.
        rec["graphs"].append((out, inputs))
        self.paths[q] = (path, type(m).__name__)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(2)
    torch.manual_seed(2515)
    model = TinyNet(d_in=24, d=32, heads=4, depth=2, classes=5)
    rec = Recorder(model)
    x = torch.randn(4, 6, 24)
    y = torch.randint(0, 5, (4,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        with record_function("## forward ##"):
            loss = F.cross_entropy(model(x), y)
        with record_function("## backward ##"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("## optimizer ##"):
            opt.step()

    sched = {"wait": 1, "warmup": 1, "active": 2, "repeat": 1}
    cfg = {"record_shapes": True, "with_stack": True, "with_modules": True}
    tmp = tempfile.mkdtemp()
    done = {}

    def ready(prof):
        path = os.path.join(tmp, "modules.json")
        prof.export_chrome_trace(path)
        done["prof"] = prof
        done["path"] = path

    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(**sched), on_trace_ready=ready,
                 experimental_config=_ExperimentalConfig(verbose=True), **cfg) as prof:
        for k in range(4):
            rec.active = k >= 2  # the active steps of the schedule
            step()
            prof.step()
    prof = done["prof"]
    trace = json.load(open(done["path"]))
    names_in_trace = {e["name"][len("nn.Module: "):] for e in trace["traceEvents"]
                      if e.get("cat") == "python_function" and e.get("name", "").startswith("nn.Module: ")}
    modules = []
    for q, r in sorted(rec.calls.items(), key=lambda kv: rec.paths[kv[0]][0]):
        path, cls = rec.paths[q]
        leaf = path.split("/")[-1]
        assert leaf in names_in_trace, f"the profiler does not name {q} {leaf}"
        nodes = [n for out, inputs in r["graphs"] for n in autograd_nodes(out, inputs)]
        modules.append({"qualname": q, "class": cls, "name": leaf, "path": path,
                        "calls": r["calls"], "autograd_nodes": nodes})
    assert names_in_trace == {m["name"] for m in modules}, "module names differ from the trace's"

    t0 = min(e.time_range.start for e in prof.events())
    events, stacks, stack_ids = [], [], {}
    for e in prof.events():
        if getattr(e, "is_python_function", False) or e.device_type != torch.autograd.DeviceType.CPU:
            continue
        events.append({"name": e.name, "start_us": e.time_range.start - t0,
                       "duration_us": e.time_range.end - e.time_range.start,
                       "sequence_nr": e.sequence_nr, "fwd_thread": e.fwd_thread,
                       "stack": stack_ids.setdefault(tuple(e.stack), len(stack_ids))})
    stacks = [list(s) for s, _ in sorted(stack_ids.items(), key=lambda kv: kv[1])]

    def row(e):
        return {"name": e.key, "count": int(e.count), "self_cpu_time_total": float(e.self_cpu_time_total),
                "cpu_time_total": float(e.cpu_time_total), "is_user_annotation": bool(e.is_user_annotation)}

    rows = sorted((row(e) for e in prof.key_averages()), key=lambda r: (-r["self_cpu_time_total"], r["name"]))
    by_stack = []
    for e in prof.key_averages(group_by_stack_n=5):
        r = row(e)
        r["stack"] = list(e.stack)
        by_stack.append(r)
    by_stack.sort(key=lambda r: (-r["cpu_time_total"], r["name"], r["stack"]))
    with open(done["path"], "rb") as f, gzip.open(os.path.join(a.out, "modules.pt.trace.json.gz"), "wb", 9) as g:
        shutil.copyfileobj(f, g)
    ref = {
        "trace_file": "modules.pt.trace.json.gz",
        "rows": rows,
        "rows_by_stack_5": by_stack,
        "events": events,
        "stacks": stacks,
        "modules": modules,
        "schedule": sched,
        "profiler_config": dict(cfg, experimental_config="verbose=True"),
        "workload": "TinyNet: embed Linear(24,32), 2 x Block(LayerNorm, Attention(q,k,v,o Linear, 4 heads), "
                    "LayerNorm, FeedForward(up Linear(32,128), GELU, down Linear(128,32))), head Linear(32,5); "
                    "batch 4 x seq 6; SGD; cross-entropy",
        "env": {"torch_version": torch.__version__, "python": platform.python_version(),
                "platform": platform.platform(), "num_threads": torch.get_num_threads(),
                "generator": "scripts/gen_modules.py"},
    }
    with gzip.open(os.path.join(a.out, "modules.reference.json.gz"), "wt", 9) as f:
        json.dump(ref, f, separators=(",", ":"))
    print(f"{len(events)} ops, {len(modules)} modules, {len(by_stack)} stack rows")


if __name__ == "__main__":
    main()
