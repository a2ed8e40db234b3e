"""Digests of every rank on Ray, then the run's analysis from the digests alone.

    python -m tracelight.ray DIGEST_OUT TRACE_GLOB [--address ADDR] [--json]

One Ray task per trace (``tracelight.digest``), run where Ray places it: the traces must be
readable from every node at the same path (shared storage), and ``DIGEST_OUT`` writable from
every node. Then the driver reads ``DIGEST_OUT`` as a run (``tracelight.load``, the same code as
``tracelight analyze DIR``): collectives matched across ranks, the straggler, the rank waited for.

On a cluster: ``--address auto`` (or ``ray://head:10001``, or ``RAY_ADDRESS``) joins it; the
nodes need the ``tracelight`` wheel (installed, or ``runtime_env={"pip": [wheel]}`` through
:func:`digest_all`'s ``runtime_env``). Without an address, a local Ray starts on this machine.
"""

import argparse
import glob
import json
import os
import sys
import time
from typing import Any, Dict, List, Optional

import tracelight


def unique_stems(paths: List[str]) -> List[str]:
    """A digest name per trace, as ``tracelight digest`` gives them: the file's stem, with
    ``-1``, ``-2``… added where two traces share a name (``a/rank-0.json``, ``b/rank-0.json``)."""
    out: List[str] = []
    for p in paths:
        base = tracelight.digest_stem(os.path.basename(p))
        st, k = base, 1
        while st in out:
            st, k = f"{base}-{k}", k + 1
        out.append(st)
    return out


def _start(address: Optional[str], num_cpus: Optional[int],
           runtime_env: Optional[Dict[str, Any]] = None) -> None:
    import ray

    if not ray.is_initialized():
        ray.init(address=address, num_cpus=num_cpus, runtime_env=runtime_env,
                 log_to_driver=False, include_dashboard=False)


def digest_all(
    traces: List[str],
    out_dir: str,
    address: Optional[str] = None,
    num_cpus: Optional[int] = None,
    runtime_env: Optional[Dict[str, Any]] = None,
) -> List[Dict[str, Any]]:
    """Digests every trace as one Ray task each (1 CPU per task); returns what each wrote.

    Starts Ray (``ray.init(address=..., num_cpus=...)``) unless it is running already.
    """
    import ray

    _start(address, num_cpus, runtime_env)

    @ray.remote(num_cpus=1)
    def one(path: str, out: str, stem: str) -> Dict[str, Any]:
        import tracelight as tl

        return tl.digest(path, out, stem=stem)

    os.makedirs(out_dir, exist_ok=True)
    refs = [one.remote(p, out_dir, s) for p, s in zip(traces, unique_stems(traces))]
    return ray.get(refs)


def run(out_dir: str, pattern: str, address: Optional[str] = None,
        num_cpus: Optional[int] = None) -> Dict[str, Any]:
    """Digests the traces matching ``pattern`` on Ray into ``out_dir`` and returns the run's
    ``analyze()`` object read from the digests (plus ``ray``: counts, bytes and seconds)."""
    traces = sorted(glob.glob(pattern, recursive=True))
    if not traces:
        raise FileNotFoundError(f"no trace matches {pattern!r}")
    ts = time.perf_counter()
    _start(address, num_cpus)
    t0 = time.perf_counter()
    written = digest_all(traces, out_dir, address=address, num_cpus=num_cpus)
    t1 = time.perf_counter()
    result = tracelight.load(out_dir).analyze()
    t2 = time.perf_counter()
    result["ray"] = {
        "traces": len(traces),
        "trace_bytes": sum(w["source_bytes"] for w in written),
        "digest_bytes": sum(w["bytes"] for w in written),
        "ray_start_s": t0 - ts,
        "digest_s": t1 - t0,
        "analyze_s": t2 - t1,
    }
    return result


def _print(result: Dict[str, Any]) -> None:
    r = result["ray"]
    print(f"{r['traces']} traces, {r['trace_bytes']:,} B -> {r['digest_bytes']:,} B of digests "
          f"({100 * r['digest_bytes'] / max(r['trace_bytes'], 1):.2f} %) in {r['digest_s']:.1f} s "
          f"(Ray started in {r['ray_start_s']:.1f} s); run analysed from the digests in "
          f"{r['analyze_s']:.2f} s")
    print(f"ranks: {len(result.get('ranks', []))}, collectives matched: "
          f"{len(result.get('collectives', []))}")
    s, none = result.get("straggler"), result.get("no_straggler")
    if s:
        print(f"straggler: rank {s['rank']} (found by {s['method'].replace('_', ' ')})")
        for r in s.get("reasons", []):
            print(f"  - {r['text']}")
    elif none:
        print(none["text"])


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tracelight.ray", description=__doc__.split("\n")[0])
    ap.add_argument("digest_out", help="folder for the digests (shared storage on a cluster)")
    ap.add_argument("trace_glob", help="traces, e.g. '/shared/run42/**/*.pt.trace.json.gz'")
    ap.add_argument("--address", default=os.environ.get("RAY_ADDRESS"),
                    help="Ray cluster to join (auto, ray://host:10001); default: a local Ray")
    ap.add_argument("--num-cpus", type=int, default=None, help="CPUs of a local Ray")
    ap.add_argument("--json", action="store_true", help="print the run's analyze object")
    a = ap.parse_args(argv)
    try:
        result = run(a.digest_out, a.trace_glob, address=a.address, num_cpus=a.num_cpus)
    except (tracelight.TraceError, FileNotFoundError) as e:
        print(f"tracelight.ray: {e}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
