#!/usr/bin/env bash
# The native sharded reader on K threads (issue 30), simdjson's one-thread DOM parse of the same
# file in the same minutes, and a 10 GB trace read natively. Meant for a many-core machine:
#
#   cargo build --release -p tracelight-core --example parse && cargo build --release -p tracelight-synth
#   bash bench/scaling.sh        # BENCHMARKS.md, "Scaling with K"
#
# PARSE and SYNTH name the two programs (defaults: target/release/examples/parse and
# target/release/tracelight-synth); python3 needs pysimdjson. GB sets the large file's size (0
# skips it); MB the first file's size. WASM (the page's module, dist/*_bg.wasm) adds the page's
# sharded reader on K worker threads in Node (bench/node_shards.mjs; NODE names node), CLI (the
# release `tracelight`) adds `analyze --json` on the first file, ONE_ON_BIG=0 skips the large
# file's one-thread read. Each `parse` line is first byte → model ready in decoded MB/s; wall time and peak RSS
# are the child's (getrusage).
set -u
PARSE=${PARSE:-target/release/examples/parse}
SYNTH=${SYNTH:-target/release/tracelight-synth}
D=${D:-/tmp/tl-scale}
GB=${GB:-10}
KS=${KS:-1 2 4 8 16}
MB=${MB:-1000}
WASM=${WASM:-}
NODE=${NODE:-node}
CLI=${CLI:-}
ONE_ON_BIG=${ONE_ON_BIG:-1}
mkdir -p "$D"
echo "== machine"; nproc; grep -m1 'model name' /proc/cpuinfo; free -g | head -2

run() { # runs "$@", then prints its wall time and peak RSS
  python3 -c '
import resource, subprocess, sys, time
t = time.perf_counter()
subprocess.run(sys.argv[1:], check=False)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"  wall {time.perf_counter() - t:.2f} s, peak RSS {rss:.0f} MB", flush=True)
' "$@"
}

F=$D/synth-${MB}m.pt.trace.json
if [ ! -f "$F" ]; then
  echo "== generating $F"
  run "$SYNTH" "$F" --target-mb "$MB"
fi
ls -l "$F"; cat "$F" >/dev/null
echo "== simdjson (pysimdjson, one thread, DOM parse), same file"
python3 bench/simdjson_parse.py "$F" 3
echo "== tracelight: K threads (K=1: the one-thread reader the page runs)"
for round in 1 2; do
  for k in $KS; do
    echo "K=$k round $round"
    run "$PARSE" "$F" --threads "$k"
  done
done
echo "== simdjson again"
python3 bench/simdjson_parse.py "$F" 2
if [ -n "$WASM" ]; then
  echo "== the page's reader: crates/web/js/shards.js and the page's wasm on K worker threads (Node)"
  run "$NODE" bench/node_shards.mjs "$WASM" "$F" "$KS" 3
fi
if [ -n "$CLI" ]; then
  echo "== tracelight analyze $F --json (every core)"
  run sh -c '"$0" analyze "$1" --json | wc -c' "$CLI" "$F"
fi
if [ "$GB" != 0 ]; then
  G=$D/synth-${GB}g.pt.trace.json
  echo "== generating $G"
  run "$SYNTH" "$G" --target-mb $((GB * 1000))
  ls -l "$G"
  k=$(nproc)
  echo "== tracelight on $G, K=$k, then K=1"
  run "$PARSE" "$G" --threads "$k"
  [ "$ONE_ON_BIG" = 1 ] && run "$PARSE" "$G" --threads 1
  if [ -n "$WASM" ]; then
    echo "== the page's reader on $G, K=$k (Node)"
    run "$NODE" bench/node_shards.mjs "$WASM" "$G" "$k" 1
  fi
fi
