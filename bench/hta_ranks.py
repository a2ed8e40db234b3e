#!/usr/bin/env python3
"""Times Holistic Trace Analysis loading a multi-rank run (the peer of `tracelight analyze DIR`
on traces and on digests in BENCHMARKS.md, "Digests").

Usage: python3 bench/hta_ranks.py TRACE_DIR -> one JSON line: seconds to a ready TraceAnalysis of
every rank in the folder, seconds for its temporal breakdown across ranks, peak RSS (this process
and the parser processes HTA starts), ranks loaded.
"""
import json
import logging
import os
import resource
import sys
import time

logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402

d = os.path.abspath(sys.argv[1])
t0 = time.perf_counter()
ta = TraceAnalysis(trace_dir=d)
load = time.perf_counter() - t0
t1 = time.perf_counter()
tb = ta.get_temporal_breakdown(visualize=False)
breakdown = time.perf_counter() - t1
size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
print(json.dumps({
    "dir": d,
    "bytes": size,
    "ranks": len(ta.t.traces),
    "hta_load_seconds": round(load, 3),
    "hta_temporal_breakdown_seconds": round(breakdown, 3),
    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    "children_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
    "breakdown_rows": int(len(tb)),
}))
