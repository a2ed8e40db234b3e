#!/usr/bin/env python3
"""Records the roofline fixture: one small CPU trace of torch ops of every family the roofline
knows (GEMM, convolution, attention, elementwise, reductions, norms, copies, embedding), each call
wrapped in `record_function("case:NAME")`, beside what torch itself says of the same calls:

- `flops`: `torch.utils.flop_counter.FlopCounterMode`'s total for the call (forward, or forward
  and backward for the `*_bwd` cases). FlopCounterMode counts only GEMMs, convolutions and
  attention; it gives 0 for the other families, whose FLOPs the tests check against formulas.
- `bytes`: the bytes the call must read and write at least, from the tensors themselves:
  `nbytes` of every distinct input tensor plus every output tensor (forward cases only).

    /work/torchvenv/bin/python scripts/gen_roofline.py

Writes `roofline_ops.pt.trace.json.gz` and `roofline_ops.reference.json` into
`crates/core/tests/fixtures/torch-2.15-cpu/` (torch 2.15, CPU only; never run by CI).
`crates/core/tests/roofline.rs` reads both.
"""
import gzip
import json
import os
import shutil

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils.flop_counter import FlopCounterMode

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "core", "tests",
                    "fixtures", "torch-2.15-cpu")
torch.manual_seed(0)


def r(*shape, dtype=torch.float32, grad=False):
    return torch.randn(*shape, dtype=dtype, requires_grad=grad)


def nbytes(*ts):
    seen, n = set(), 0
    for t in ts:
        if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in seen:
            seen.add(t.untyped_storage().data_ptr())
            n += t.nbytes
    return n


def cases():
    """(name, fn, forward tensors for the byte count or None) — fn returns its outputs."""
    a, b = r(256, 512), r(512, 128)
    x, w, bias = r(64, 512), r(256, 512), r(256)
    ba, bb = r(8, 64, 32), r(8, 32, 48)
    c0 = r(8, 64, 48)
    img, k3 = r(4, 3, 32, 32), r(8, 3, 3, 3)
    img2, kg = r(2, 8, 20, 20), r(16, 4, 3, 3)
    q, kk, v = r(2, 4, 128, 32), r(2, 4, 128, 32), r(2, 4, 128, 32)
    e1, e2, e3 = r(64, 1024), r(1024), r(64, 1024)
    h = r(32, 256)
    ln_w, ln_b = r(256), r(256)
    bn_x, bn_rm, bn_rv, bn_w, bn_b = r(8, 16, 10, 10), torch.zeros(16), torch.ones(16), r(16), r(16)
    emb_w, idx = r(1000, 64), torch.randint(0, 1000, (32, 16))
    bf_a, bf_b = r(128, 256, dtype=torch.bfloat16), r(256, 64, dtype=torch.bfloat16)
    yield "mm", lambda: torch.mm(a, b), (a, b)
    yield "mm_bf16", lambda: torch.mm(bf_a, bf_b), (bf_a, bf_b)
    yield "linear", lambda: F.linear(x, w, bias), (x, w, bias)
    yield "bmm", lambda: torch.bmm(ba, bb), (ba, bb)
    yield "baddbmm", lambda: torch.baddbmm(c0, ba, bb), (c0, ba, bb)
    yield "conv2d", lambda: F.conv2d(img, k3, None, stride=2, padding=1), (img, k3)
    yield "conv2d_groups", lambda: F.conv2d(img2, kg, None, stride=1, padding=2, dilation=2,
                                           groups=2), (img2, kg)
    yield "sdpa", lambda: F.scaled_dot_product_attention(q, kk, v), (q, kk, v)
    yield "add", lambda: torch.add(e1, e2), (e1, e2)
    yield "mul", lambda: torch.mul(e1, e3), (e1, e3)
    yield "relu", lambda: torch.relu(h), (h,)
    yield "gelu", lambda: F.gelu(h), (h,)
    yield "sigmoid", lambda: torch.sigmoid(h), (h,)
    yield "sum_dim", lambda: torch.sum(e1, dim=1), (e1,)
    yield "mean_keepdim", lambda: torch.mean(e1, dim=0, keepdim=True), (e1,)
    yield "softmax", lambda: torch.softmax(h, dim=-1), (h,)
    yield "log_softmax", lambda: F.log_softmax(h, dim=-1), (h,)
    yield "layer_norm", lambda: F.layer_norm(h, (256,), ln_w, ln_b), (h, ln_w, ln_b)
    yield "batch_norm_eval", lambda: F.batch_norm(bn_x, bn_rm, bn_rv, bn_w, bn_b, False), (
        bn_x, bn_rm, bn_rv, bn_w, bn_b)
    yield "clone", lambda: h.clone(), (h,)
    yield "to_bf16", lambda: h.to(torch.bfloat16), (h,)
    yield "contiguous", lambda: h.t().contiguous(), (h,)
    yield "cat", lambda: torch.cat([h, h * 1], dim=0), None
    yield "embedding", lambda: F.embedding(idx, emb_w), None
    # Backward: FLOPs only (FlopCounterMode over forward + backward).
    xg, wg, bg = r(64, 512, grad=True), r(256, 512, grad=True), r(256, grad=True)
    yield "linear_bwd", lambda: F.linear(xg, wg, bg).sum().backward(), None
    ig, kgg = r(4, 3, 32, 32, grad=True), r(8, 3, 3, 3, grad=True)
    yield "conv2d_bwd", lambda: F.conv2d(ig, kgg, None, stride=2, padding=1).sum().backward(), None
    qg, kg2, vg = (r(2, 4, 128, 32, grad=True) for _ in range(3))
    yield "sdpa_bwd", lambda: F.scaled_dot_product_attention(qg, kg2, vg).sum().backward(), None


def main():
    ref = {"torch": torch.__version__, "cases": {}}
    todo = list(cases())
    for name, fn, tensors in todo:
        with FlopCounterMode(display=False) as fc:
            out = fn()
        entry = {"flops": int(fc.get_total_flops())}
        if tensors is not None:
            outs = out if isinstance(out, tuple) else (out,)
            entry["bytes"] = nbytes(*tensors) + sum(o.nbytes for o in outs)
        ref["cases"][name] = entry
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for name, fn, _ in todo:
            with record_function("case:" + name):
                fn()
    raw = os.path.join(HERE, "roofline_ops.pt.trace.json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as f, open(raw + ".gz", "wb") as out, \
            gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as g:
        shutil.copyfileobj(f, g)
    os.remove(raw)
    with open(os.path.join(HERE, "roofline_ops.reference.json"), "w") as f:
        json.dump(ref, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(ref["cases"], indent=None)[:2000])


if __name__ == "__main__":
    main()
