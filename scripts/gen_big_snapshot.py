#!/usr/bin/env python3
"""Writes a CUDA memory snapshot of any size (1 GB and more) for the gigabyte benchmark, streaming
(python3 stdlib only; memory stays small whatever the size).

Usage: python3 scripts/gen_big_snapshot.py --shape synthetic|real --mb 1000 [--out FILE] [--seed 7]

`pickle.dump` of a 1 GB snapshot needs the whole dict in Python first (tens of GB of objects), so
this writes the pickle's opcodes itself, exactly as `pickle.dump(snapshot, f, protocol=4)` lays out
the same dict (EMPTY_DICT/EMPTY_LIST + MEMOIZE, items in batches of 1000 under MARK ... SETITEMS /
APPENDS, a repeated str object fetched from the memo with BINGET), without FRAME opcodes (optional in
protocol 4). `python3 -c "import pickle; pickle.load(open(F, 'rb'))"` reads it back.

Shapes (the allocator schema of torch.cuda.memory._dump_snapshot, one device):
  synthetic  the workload of scripts/gen_bench_snapshot.py at a larger history: alloc /
             free_requested / free_completed / segment_alloc entries with `time_us`, each with a
             fresh list of 21-33 fresh frame dicts (a C++ frame, torch frames, user frames), ~500
             bytes an entry: 1 GB is ~2 M entries.
  real       shaped like a real dump with C++ frames (`select_n_2023-12_4gpu_cpp_frames_snapshot`):
             40-70 frames an entry, C++ (`??`, `CUDACachingAllocator.cpp`, `python_variable.cpp`)
             and Python interleaved, each distinct frame dict written once and fetched from the memo
             after (as torch's pickled dumps do), so an entry is ~300 bytes: 1 GB is ~3.5 M entries.
Segments at the end hold the allocations still live, as gen_bench_snapshot.py builds them.
Deterministic (seeded). bench-data/ is gitignored.
"""
import argparse
import os
import random
import struct

MB = 1 << 20


class Writer:
    """Protocol-4 opcodes with the pickler's memo numbering (MEMOIZE assigns the next index)."""

    def __init__(self, f):
        self.f = f
        self.n = 0  # memo slots used
        self.strs = {}
        self.out = []
        self.size = 0

    def flush(self):
        data = b''.join(self.out)
        self.f.write(data)
        self.size += len(data)
        self.out = []

    def get(self, idx):
        return b'h' + bytes([idx]) if idx < 256 else b'j' + struct.pack('<I', idx)

    def s(self, text):
        """A str: the first time written and memoized, then fetched (the same object in Python)."""
        idx = self.strs.get(text)
        if idx is not None:
            return self.get(idx)
        b = text.encode()
        op = b'\x8c' + bytes([len(b)]) if len(b) < 256 else b'X' + struct.pack('<I', len(b))
        self.strs[text] = self.n
        self.n += 1
        return op + b + b'\x94'

    @staticmethod
    def i(v):
        if 0 <= v < 256:
            return b'K' + bytes([v])
        if 0 <= v < 65536:
            return b'M' + struct.pack('<H', v)
        if -(1 << 31) <= v < (1 << 31):
            return b'J' + struct.pack('<i', v)
        n = (v.bit_length() + 8) // 8
        return b'\x8a' + bytes([n]) + v.to_bytes(n, 'little', signed=True)

    def dict_(self, *pairs):
        """A fresh dict of (key, value) pairs (fewer than 1000): its memo slot is taken first, as
        in the byte stream, then each key and value in order (a value is a function that writes
        its bytes, so whatever it memoizes is numbered after the key)."""
        self.n += 1
        body = []
        for k, v in pairs:
            body.append(self.s(k))
            body.append(v())
        return b'}\x94(' + b''.join(body) + b'u'

    def frame(self, file, line, name):
        self.n += 1
        return (b'}\x94(' + self.s('filename') + self.s(file) + self.s('line') + self.i(line)
                + self.s('name') + self.s(name) + b'u')

    def list_open(self):
        self.n += 1
        return b']\x94'

    @staticmethod
    def batch(items):
        """Items appended to the list below them (pickle's batches: one item APPEND, more APPENDS)."""
        if not items:
            return b''
        if len(items) == 1:
            return items[0] + b'a'
        return b'(' + b''.join(items) + b'e'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--shape', choices=['synthetic', 'real'], default='synthetic')
    ap.add_argument('--mb', type=float, default=1000)
    ap.add_argument('--out', default=None)
    ap.add_argument('--seed', type=int, default=7)
    a = ap.parse_args()
    out = a.out or f'bench-data/big_{a.shape}_{int(a.mb)}mb.pickle'
    rng = random.Random(a.seed)
    target = int(a.mb * 1e6)
    os.makedirs(os.path.dirname(out) or '.', exist_ok=True)
    f = open(out, 'wb')
    w = Writer(f)

    files = [f'/home/user/proj/model/layer{i}.py' for i in range(12)] + ['/home/user/proj/train.py']
    torch_files = ['/venv/lib/python3.11/site-packages/torch/nn/modules/module.py',
                   '/venv/lib/python3.11/site-packages/torch/nn/functional.py',
                   '/venv/lib/python3.11/site-packages/torch/_tensor.py']
    names = ['forward', 'attention', 'mlp', 'norm', 'backward', 'step', 'main', '_call_impl', 'linear']
    cpp = [('??', 'torch::unwind::unwind()'), ('??', 'torch::CapturedTraceback::gather(bool, bool, bool)'),
           ('memory_snapshot.cpp', 'torch::cuda::(anonymous namespace)::gather_with_cpp()'),
           ('CUDACachingAllocator.cpp', 'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(int, unsigned long, CUstream_st*)'),
           ('CUDACachingAllocator.cpp', 'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::free(c10::cuda::CUDACachingAllocator::Native::(anonymous namespace)::Block*)'),
           ('', 'c10::cuda::CUDACachingAllocator::Native::local_raw_delete(void*)'),
           ('', 'c10::StorageImpl::~StorageImpl()'), ('??', 'c10::TensorImpl::~TensorImpl()'),
           ('python_variable.cpp', 'THPVariable_clear(THPVariable*)'), ('??', 'at::native::empty_cuda(c10::ArrayRef<long>, ...)'),
           ('??', 'at::_ops::empty_memory_format::call(...)'), ('??', 'at::native::mm_out_cuda(...)')]
    interp = [('??', '_PyEval_EvalFrameDefault'), ('', 'method_vectorcall'), ('??', 'PyObject_Call'),
              ('??', '_PyFunction_Vectorcall'), ('', 'slot_tp_call'), ('??', '_PyObject_Call_Prepend')]
    # real: a frame dict per distinct (file, line, name), written once and fetched from the memo.
    frame_memo = {}

    def frame_bytes(file, line, name):
        if a.shape == 'real':
            idx = frame_memo.get((file, line, name))
            if idx is not None:
                return w.get(idx)
            frame_memo[(file, line, name)] = w.n
        return w.frame(file, line, name)

    def build_stack(k):
        """Stack k of the pool (its own seeded draw): a fresh list of its frames."""
        g = random.Random(a.seed * 1_000_003 + k)
        head = w.list_open()
        out = []
        if a.shape == 'real':
            for fl, nm in g.sample(cpp[:3], 3) + [g.choice(cpp[3:])]:
                out.append(frame_bytes(fl, 0, nm))
            for _ in range(g.randint(8, 14)):
                for fl, nm in g.sample(interp, 3):
                    out.append(frame_bytes(fl, 0, nm))
                # A few thousand distinct Python frames, as a real model's code has.
                out.append(frame_bytes(g.choice(torch_files + files), 17 * g.randint(1, 20), g.choice(names)))
        else:
            out.append(frame_bytes('??', 0, 'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc'))
            for _ in range(g.randint(8, 12)):
                out.append(frame_bytes(g.choice(torch_files), g.randint(1, 2000), g.choice(names)))
            for _ in range(g.randint(12, 20)):
                out.append(frame_bytes(g.choice(files), g.randint(1, 400), g.choice(names)))
        return head + Writer.batch(out)

    # Entries draw their stack from a pool (a program has a bounded set of allocation sites). The
    # first use of a stack writes it (memoizing its new strings and, in `real`, its frame dicts);
    # later uses write the same opcodes again: a fresh list (and in `synthetic` fresh frame dicts)
    # whose strings and shared frames are memo fetches, so the bytes are those of the second
    # writing and only the memo count moves.
    n_stacks = 20_000 if a.shape == "real" else 5_000
    steady = {}

    def frames():
        k = rng.randrange(n_stacks)
        hit = steady.get(k)
        if hit is not None:
            w.n += hit[1]
            return hit[0]
        first = build_stack(k)
        n = w.n
        again = build_stack(k)
        steady[k] = (again, w.n - n)
        w.n = n
        return first

    # {'segments': [...], 'device_traces': [[...]], 'allocator_settings': {}, 'external_annotations': []}
    # The root dict and its keys come first; pickle writes 'segments' first, but its items are the
    # state at the end: so the trace is written first here under 'device_traces' (dict key order is
    # free in a pickle), then 'segments'.
    w.out.append(b'\x80\x04')
    w.n += 1
    w.out.append(b'}\x94(')
    w.out.append(w.s('device_traces'))
    w.out.append(w.list_open())  # device_traces
    w.out.append(b'(')  # MARK for device_traces' APPENDS
    w.out.append(w.list_open())  # device 0's trace

    t = 1_760_000_000_000_000
    addr_next = 0x7f0000000000
    live = {}
    entries = 0
    batch = []

    def emit(action, addr, size):
        nonlocal entries
        batch.append(w.dict_(('action', lambda: w.s(action)), ('addr', lambda: w.i(addr)),
                             ('size', lambda: w.i(size)), ('stream', lambda: w.i(0)),
                             ('time_us', lambda: w.i(t)), ('frames', frames)))
        entries += 1
        if len(batch) == 1000:
            w.out.append(Writer.batch(batch))
            batch.clear()
            w.flush()

    def new_addr(size):
        nonlocal addr_next
        a_ = addr_next
        addr_next += (size + 511) // 512 * 512 + 512
        if rng.random() < 0.05:
            seg = max(size, 20 * MB)
            emit('segment_alloc', a_, seg)
            addr_next = a_ + seg + 512
        return a_

    def alloc(size):
        nonlocal t
        t += rng.randint(1, 40)
        a_ = new_addr(size)
        live[a_] = size
        emit('alloc', a_, size)
        return a_

    def free(a_):
        nonlocal t
        size = live.pop(a_)
        for act in ('free_requested', 'free_completed'):
            t += rng.randint(1, 10)
            emit(act, a_, size)

    for _ in range(60):
        alloc(rng.choice([4, 8, 16, 32, 64]) * MB)
    # Leave ~1% of the target for the segments.
    while w.size < target * 0.99:
        acts = []
        for _ in range(rng.randint(20, 60)):
            acts.append(alloc(rng.randint(1, 48) * MB))
            for _ in range(rng.randint(0, 4)):
                free(alloc(rng.randint(1, 4096) * 512))
        for x in reversed(acts[rng.randint(0, 2):]):
            free(x)
    w.out.append(Writer.batch(batch))
    batch.clear()
    w.out.append(b'e')  # device_traces' APPENDS (of the one device list)
    w.out.append(w.s('segments'))
    w.out.append(w.list_open())
    segs = []

    def blocks(addr, size):
        head = w.list_open()
        b1 = w.dict_(('address', lambda: w.i(addr)), ('size', lambda: w.i(size)),
                     ('requested_size', lambda: w.i(size)), ('state', lambda: w.s('active_allocated')),
                     ('frames', frames))
        b2 = w.dict_(('address', lambda: w.i(addr + size)), ('size', lambda: w.i(2 * MB)),
                     ('requested_size', lambda: w.i(0)), ('state', lambda: w.s('inactive')),
                     ('frames', w.list_open))
        return head + Writer.batch([b1, b2])

    def pool():
        w.n += 1  # the (0, 0) tuple, memoized after TUPLE2
        return b'K\x00K\x00\x86\x94'

    for addr, size in sorted(live.items()):
        total = size + 2 * MB
        segs.append(w.dict_(
            ('device', lambda: w.i(0)), ('address', lambda: w.i(addr)), ('total_size', lambda: w.i(total)),
            ('allocated_size', lambda: w.i(size)), ('active_size', lambda: w.i(size)),
            ('requested_size', lambda: w.i(size)), ('stream', lambda: w.i(0)),
            ('segment_type', lambda: w.s('large')), ('segment_pool_id', pool),
            ('is_expandable', lambda: b'\x89'), ('frames', w.list_open),
            ('blocks', lambda: blocks(addr, size))))
    for k in range(0, len(segs), 1000):
        w.out.append(Writer.batch(segs[k:k + 1000]))
    w.out.append(w.s('allocator_settings'))
    w.n += 1
    w.out.append(b'}\x94')
    w.out.append(w.s('external_annotations'))
    w.n += 1
    w.out.append(b']\x94')
    w.out.append(b'u.')  # the root's SETITEMS, STOP
    w.flush()
    f.close()
    print(f'{out}: {w.size / 1e6:.1f} MB, {entries} trace entries, {len(segs)} segments, '
          f'{len(frame_memo) or "fresh"} frame dicts, {len(steady)} distinct stacks')


if __name__ == '__main__':
    main()
