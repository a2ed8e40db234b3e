#!/usr/bin/env python3
"""Times Holistic Trace Analysis parsing one Kineto trace (the peer measured in BENCHMARKS.md).

Usage: python3 bench/hta_parse.py TRACE.json  -> one JSON line: seconds to a ready TraceAnalysis,
its peak RSS, and the events HTA kept.
"""
import json
import logging
import os
import resource
import sys
import tempfile
import time

logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402

path = os.path.abspath(sys.argv[1])
d = tempfile.mkdtemp()
os.symlink(path, os.path.join(d, "rank-0.json" + (".gz" if path.endswith(".gz") else "")))
t0 = time.perf_counter()
ta = TraceAnalysis(trace_dir=d)
secs = time.perf_counter() - t0
df = ta.t.get_trace(0)
print(json.dumps({
    "file": os.path.basename(path),
    "hta_seconds": round(secs, 3),
    "mb_per_s": round(os.path.getsize(path) / 1e6 / secs, 1),
    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    "rows": int(len(df)),
}))
