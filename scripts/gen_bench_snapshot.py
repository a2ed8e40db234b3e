#!/usr/bin/env python3
"""Writes a large synthetic CUDA memory snapshot for the memory benchmark (python3 stdlib only).

Usage: python3 scripts/gen_bench_snapshot.py [--entries 100000] [--out bench-data/bench_snapshot.pickle]

The file has the allocator schema (`torch.cuda.memory._dump_snapshot`): `segments` with `blocks`, and
one `device_traces` list of `alloc` / `free_requested` / `free_completed` / `segment_alloc` entries with
`time_us` and a fresh list of frame dicts per entry (as real dumps have, which is what makes them big):
about 50 MB for 100k entries. A training-loop-like workload: parameters allocated first and kept,
then per step activations that grow and are freed in reverse, plus many small temporaries.
Deterministic (seeded). bench-data/ is gitignored.
"""
import argparse
import os
import pickle
import random

MB = 1 << 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--entries', type=int, default=100_000)
    ap.add_argument('--out', default='bench-data/bench_snapshot.pickle')
    ap.add_argument('--seed', type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    files = [f'/home/user/proj/model/layer{i}.py' for i in range(12)] + ['/home/user/proj/train.py']
    torch_files = ['/venv/lib/python3.11/site-packages/torch/nn/modules/module.py',
                   '/venv/lib/python3.11/site-packages/torch/nn/functional.py',
                   '/venv/lib/python3.11/site-packages/torch/_tensor.py']
    names = ['forward', 'attention', 'mlp', 'norm', 'backward', 'step', 'main', '_call_impl', 'linear']

    def frames():
        # Fresh dicts per entry, like a real dump: C++ frames, torch frames, then user frames.
        out = [{'filename': '??', 'line': 0, 'name': 'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc'}]
        for _ in range(rng.randint(8, 12)):
            out.append({'filename': rng.choice(torch_files), 'line': rng.randint(1, 2000), 'name': rng.choice(names)})
        for _ in range(rng.randint(12, 20)):
            out.append({'filename': rng.choice(files), 'line': rng.randint(1, 400), 'name': rng.choice(names)})
        return out

    trace = []
    t = 1_760_000_000_000_000  # epoch µs
    addr_next = 0x7f0000000000
    live = {}  # addr -> size
    segments = []  # (addr, size)

    def new_addr(size):
        nonlocal addr_next
        a_ = addr_next
        addr_next += (size + 511) // 512 * 512 + 512
        if rng.random() < 0.05:
            seg = max(size, 20 * MB)
            segments.append((a_, seg))
            trace.append({'action': 'segment_alloc', 'addr': a_, 'size': seg, 'stream': 0, 'time_us': t, 'frames': frames()})
            addr_next = a_ + seg + 512
        return a_

    def alloc(size):
        nonlocal t
        t += rng.randint(1, 40)
        a_ = new_addr(size)
        live[a_] = size
        trace.append({'action': 'alloc', 'addr': a_, 'size': size, 'stream': 0, 'time_us': t, 'frames': frames()})
        return a_

    def free(a_):
        nonlocal t
        size = live.pop(a_)
        for act in ('free_requested', 'free_completed'):
            t += rng.randint(1, 10)
            trace.append({'action': act, 'addr': a_, 'size': size, 'stream': 0, 'time_us': t, 'frames': frames()})

    params = [alloc(rng.choice([4, 8, 16, 32, 64]) * MB) for _ in range(60)]
    while len(trace) < a.entries:
        acts = []
        for _ in range(rng.randint(20, 60)):
            acts.append(alloc(rng.randint(1, 48) * MB))
            for _ in range(rng.randint(0, 4)):
                tmp = alloc(rng.randint(1, 4096) * 512)
                free(tmp)
            if len(trace) >= a.entries:
                break
        for x in reversed(acts):
            if x in live:
                free(x)
            if len(trace) >= a.entries:
                break
    trace = trace[:a.entries]

    # Final state: every live allocation in its own segment, with a cached free tail.
    segs = []
    for addr, size in sorted(live.items()):
        total = size + 2 * MB
        segs.append({
            'device': 0, 'address': addr, 'total_size': total, 'allocated_size': size, 'active_size': size,
            'requested_size': size, 'stream': 0, 'segment_type': 'large', 'segment_pool_id': (0, 0),
            'is_expandable': False, 'frames': [],
            'blocks': [
                {'address': addr, 'size': size, 'requested_size': size, 'state': 'active_allocated', 'frames': frames()},
                {'address': addr + size, 'size': 2 * MB, 'requested_size': 0, 'state': 'inactive', 'frames': []},
            ],
        })
    snap = {'segments': segs, 'device_traces': [trace], 'allocator_settings': {}, 'external_annotations': []}
    os.makedirs(os.path.dirname(a.out) or '.', exist_ok=True)
    with open(a.out, 'wb') as f:
        pickle.dump(snap, f, protocol=4)
    print(f'{a.out}: {os.path.getsize(a.out) / 1e6:.1f} MB, {len(trace)} trace entries, {len(segs)} segments')


if __name__ == '__main__':
    main()
