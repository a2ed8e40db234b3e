#!/usr/bin/env bash
# Reproduces every figure in BENCHMARKS.md: generates the synthetic traces (bench-data/, ignored by
# git), then measures the native parse (speed and peak RSS), the analyses, HTA on the same files,
# and the browser load in headless Chromium (speed and wasm linear memory).
#   bash scripts/bench.sh            # 20 MB, 100 MB and 1 GB synthetic traces
#   SIZES="100" bash scripts/bench.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
SIZES="${SIZES:-20 100 1024}"
mkdir -p bench-data
cargo build -q --release -p tracelight-synth -p tracelight-cli
cargo build -q --release -p tracelight-core --example parse
for mb in $SIZES; do
  f="bench-data/synth-${mb}mb.pt.trace.json"
  [ -f "$f" ] || ./target/release/tracelight-synth "$f" --target-mb "$mb"
done

echo "## native parse (best of 3) and analyses"
for mb in $SIZES; do
  f="bench-data/synth-${mb}mb.pt.trace.json"
  for i in 1 2 3; do /usr/bin/time -f "peak RSS %M KB" ./target/release/examples/parse "$f" --analyze 2>&1; done
done

echo "## HTA $(test -x target/bench-venv/bin/python || python3 -m venv target/bench-venv; target/bench-venv/bin/pip -q install holistictraceanalysis >/dev/null 2>&1; target/bench-venv/bin/python -c 'import importlib.metadata as m; print(m.version("HolisticTraceAnalysis"))')"
for mb in $SIZES; do
  [ "$mb" -gt 200 ] && { echo "skip HTA on ${mb} MB (pandas needs far more memory than this machine has)"; continue; }
  target/bench-venv/bin/python bench/hta_parse.py "bench-data/synth-${mb}mb.pt.trace.json"
done

echo "## browser (headless Chromium, release build)"
trunk build --release >/dev/null 2>&1
files=$(for mb in $SIZES; do echo "bench-data/synth-${mb}mb.pt.trace.json"; done)
echo "### picked file"; VIA=file node tests/e2e/bench_load.mjs $files
echo "### ?url="; node tests/e2e/bench_load.mjs $files
echo "### one thread, native"
for f in $files; do ./target/release/examples/parse "$f" --one-thread; done
