#!/usr/bin/env bash
# The Kineto reader as bare wasm in Node, with and without simd128 (the app ships with it):
#   bash bench/wasm_parse.sh FILE [ROUNDS]
# Builds bench/wasm_parse twice (target dirs under target/wasm-parse-bench) and alternates the two
# modules, ROUNDS rounds of one process each (6 parses per process, the best of the last 5 kept).
# The machine's speed drifts between processes here (some run ~1.7x slower throughout): compare the
# best of several rounds, not one.
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=${1:?usage: bench/wasm_parse.sh FILE [ROUNDS]}
ROUNDS=${2:-5}
T=$PWD/target/wasm-parse-bench
build() { # $1: name, $2: RUSTFLAGS
  RUSTFLAGS="$2" CARGO_TARGET_DIR="$T/$1" cargo build --quiet --release --target wasm32-unknown-unknown \
    --manifest-path bench/wasm_parse/Cargo.toml
}
build simd "-C target-feature=+simd128"
build scalar ""
for r in $(seq "$ROUNDS"); do
  for v in simd scalar; do
    node bench/wasm_parse.mjs "$T/$v/wasm32-unknown-unknown/release/wasm_parse_bench.wasm" "$FILE"
  done
done
