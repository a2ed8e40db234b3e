#!/usr/bin/env bash
# dist-prof/: the release page of `trunk build --release` with its wasm bound again by
# `wasm-bindgen --keep-debug` (Rust's function names kept, wasm-opt not run), for CPU profiles
# with names: `DIST=dist-prof PROFILE=/tmp/p.cpuprofile VIA=file RUNS=1 node tests/e2e/bench_load.mjs FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
[ -f dist/index.html ] || { echo "build the page first: trunk build --release" >&2; exit 1; }
n=$(basename "$(ls dist/*_bg.wasm)" _bg.wasm)
rm -rf dist-prof /tmp/tl-prof && cp -r dist dist-prof
wasm-bindgen --keep-debug --target web --no-typescript --out-dir /tmp/tl-prof --out-name "$n" \
  target/wasm32-unknown-unknown/wasm-release/tracelight-web.wasm
cp "/tmp/tl-prof/$n.js" "/tmp/tl-prof/${n}_bg.wasm" dist-prof/
# The page's subresource integrity names the optimized files.
sed -i 's/ integrity="[^"]*"//g' dist-prof/index.html
echo "dist-prof/ ready ($n)"
