#!/usr/bin/env bash
# The native sharded reader on K threads (issue 30), simdjson's one-thread DOM parse of the same
# file in the same minutes, and a 10 GB trace read natively. Meant for a many-core machine:
#
#   cargo build --release -p tracelight-core --example parse && cargo build --release -p tracelight-synth
#   bash bench/scaling.sh        # BENCHMARKS.md, "Scaling with K"
#
# PARSE and SYNTH name the two programs (defaults: target/release/examples/parse and
# target/release/tracelight-synth); python3 needs pysimdjson. GB sets the large file's size (0
# skips it). Each `parse` line is first byte → model ready in decoded MB/s; wall time and peak RSS
# are the child's (getrusage).
set -u
PARSE=${PARSE:-target/release/examples/parse}
SYNTH=${SYNTH:-target/release/tracelight-synth}
D=${D:-/tmp/tl-scale}
GB=${GB:-10}
KS=${KS:-1 2 4 8 16}
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

F=$D/synth-1g.pt.trace.json
if [ ! -f "$F" ]; then
  echo "== generating $F"
  run "$SYNTH" "$F" --target-mb 1000
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
if [ "$GB" != 0 ]; then
  G=$D/synth-${GB}g.pt.trace.json
  echo "== generating $G"
  run "$SYNTH" "$G" --target-mb $((GB * 1000))
  ls -l "$G"
  k=$(nproc)
  echo "== tracelight on $G, K=$k, then K=1"
  run "$PARSE" "$G" --threads "$k"
  run "$PARSE" "$G" --threads 1
fi
