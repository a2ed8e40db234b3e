#!/usr/bin/env python3
"""Independent expected values for crates/core/tests/snapshot.rs and memory_timeline.rs.

Stdlib only (pickle, json, gzip; no torch). Per snapshot and device: the state sums over segments and
blocks, trace entry / action counts, and the peaks of a literal transcription of torch's MemoryViz.js
(`annotate_snapshot` eliding free_requested+free_completed into `free`, then `process_alloc_data`,
for allocations and for segments). For memory timelines: torch's `_coalesce_timeline` applied to raw
files, and the peak total with its per-category breakdown.

Usage, from `shared/corpus` (paths are recorded as given, relative to the corpus):

    python3 snapshot_expected.py --out OUT.json FILE...   # one JSON object, keyed by path
    python3 snapshot_expected.py FILE...                  # one JSON line per file

The checked-in answers are `tests/scripts/snapshot_expected.out.json`, written by (from the repo
root) `cd ../shared/corpus && python3 $OLDPWD/crates/core/tests/scripts/snapshot_expected.py
--out $OLDPWD/crates/core/tests/scripts/snapshot_expected.out.json real/snapshots/*.pickle
generated/snapshots/*.pickle generated/resnet_all.*.memory_timeline.json
generated/resnet_all.*.memory_timeline.raw.json.gz real/hta/memory_timeline.raw.json.gz`;
`snapshot.rs` and `memory_timeline.rs` read it. It holds numbers only, never corpus bytes.
"""
import gzip
import json
import pickle
import sys


def annotate(snap):
    traces = []
    for dt in snap.get('device_traces', []):
        new = []
        for t in dt:
            t = dict(t)
            if t['action'] == 'free_completed' and new:
                prev = new[-1]
                if prev['action'] == 'free_requested' and prev.get('addr') == t.get('addr'):
                    prev['action'] = 'free'
                    continue
            new.append(t)
        traces.append(new)
    for seg in snap['segments']:
        addr = seg['address']
        for b in seg['blocks']:
            b['addr'] = addr
            if 'frames' not in b:
                b['requested_size'] = b.get('requested_size') or b['size']
            addr += b['size']
    return traces


def process_alloc_data(snap, traces, device, plot_segments):
    elements, initially, actions, addr_to_alloc = [], [], [], {}
    alloc = 'segment_alloc' if plot_segments else 'alloc'
    free, free_completed = ('segment_free', 'segment_free') if plot_segments else ('free', 'free_completed')
    for e in (traces[device] if device < len(traces) else []):
        if e['action'] == alloc:
            elements.append(e)
            addr_to_alloc[e['addr']] = len(elements) - 1
            actions.append(len(elements) - 1)
        elif e['action'] in (free, free_completed):
            if e['addr'] in addr_to_alloc:
                actions.append(addr_to_alloc.pop(e['addr']))
            else:
                elements.append(e)
                initially.append(len(elements) - 1)
                actions.append(len(elements) - 1)
    for seg in snap['segments']:
        if seg['device'] != device:
            continue
        if plot_segments:
            if seg['address'] not in addr_to_alloc:
                elements.append({'size': seg['total_size']})
                initially.append(len(elements) - 1)
        else:
            for b in seg['blocks']:
                if b['state'] == 'active_allocated' and b['addr'] not in addr_to_alloc:
                    elements.append({'size': b['requested_size']})
                    initially.append(len(elements) - 1)
    initially.reverse()
    if not actions and initially:
        actions.append(initially.pop())
    # add_allocation() of every initially-allocated element puts it in `current` first.
    current = set(initially)
    total = sum(elements[i]['size'] for i in initially)
    max_size = 0
    for elem in actions:
        size = elements[elem]['size']
        if elem in current:
            current.discard(elem)
            total -= size
        else:
            current.add(elem)
            total += size
        max_size = max(total, max_size)
    return max_size


def snapshot_expected(path):
    snap = pickle.load(open(path, 'rb'))
    traces = annotate(snap)
    raw = snap.get('device_traces', [])
    devices = sorted(set(range(len(raw))) | {s['device'] for s in snap['segments']})
    out = []
    for d in devices:
        segs = [s for s in snap['segments'] if s['device'] == d]
        blocks = {}
        largest = 0
        for s in segs:
            for b in s['blocks']:
                blocks[b['state']] = blocks.get(b['state'], 0) + 1
                if b['state'] == 'inactive':
                    largest = max(largest, b['size'])
        actions = {}
        for e in (raw[d] if d < len(raw) else []):
            actions[e['action']] = actions.get(e['action'], 0) + 1
        out.append({
            'device': d, 'segments': len(segs),
            'reserved_bytes': sum(s['total_size'] for s in segs),
            'allocated_bytes': sum(s.get('allocated_size', 0) for s in segs),
            'active_bytes': sum(s.get('active_size', 0) for s in segs),
            'requested_bytes': sum(s.get('requested_size', 0) for s in segs),
            'largest_free_block_bytes': largest, 'blocks': blocks,
            'trace_entries': len(raw[d]) if d < len(raw) else 0, 'actions': actions,
            'peak_active_bytes': process_alloc_data(snap, traces, d, False),
            'peak_reserved_bytes': process_alloc_data(snap, traces, d, True),
        })
    return {'file': path, 'devices': out}


def coalesce_raw(rows):
    times, sizes, t_min = [], [], -1
    for t, action, numbytes, cat in rows:
        if t != -1:
            t = int(t / 1000)
        if t_min == -1 or (t < t_min and t > 0):
            t_min = t
        if not times:
            times.append(t)
            sizes.append([0] * 9)
        elif t != times[-1]:
            times.append(t)
            sizes.append(sizes[-1].copy())
        sizes[-1][cat + 1] += numbytes
    return [t_min if t < 0 else t for t in times], sizes


def timeline_expected(path):
    opener = gzip.open if path.endswith('.gz') else open
    data = json.load(opener(path, 'rt'))
    if path.endswith('.raw.json.gz') or path.endswith('.raw.json'):
        times, sizes = coalesce_raw(data)
        records = len(data)
    else:
        times, sizes = data
        records = len(times)
    totals = [sum(s) for s in sizes]
    peak = max(totals)
    i = totals.index(peak)
    return {'file': path, 'records': records, 'samples': len(times), 'peak_total_bytes': peak,
            'peak_index': i, 'peak_time_us': times[i], 'at_peak': sizes[i][1:]}


def expected(p):
    return snapshot_expected(p) if p.endswith('.pickle') else timeline_expected(p)


if __name__ == '__main__':
    args = sys.argv[1:]
    if args[:1] == ['--out']:
        out, paths = args[1], args[2:]
        doc = {
            'generator': 'crates/core/tests/scripts/snapshot_expected.py (python3 stdlib only)',
            'files': {p: expected(p) for p in sorted(paths)},
        }
        with open(out, 'w') as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write('\n')
    else:
        for p in args:
            print(json.dumps(expected(p), sort_keys=True))
