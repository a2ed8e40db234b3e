#!/usr/bin/env bash
# Installs what building, serving and testing Tracelight need, skipping whatever is already present:
# the wasm32 target, trunk 0.21.14, wasm-bindgen-cli at exactly Cargo.lock's wasm-bindgen version,
# Debian chromium + chromium-driver, and the npm dev tools (binaryen's wasm-opt, playwright-core).
# Sourced by serve.sh and test.sh; safe to run again (a warm run takes seconds).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }
# trunk 0.21.14 rejects NO_COLOR=1 ("invalid value '1' for '--no-color'").
if [ -n "${NO_COLOR:-}" ]; then export NO_COLOR=true; fi
export TRUNK_OFFLINE=true
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if ! trunk --version 2>/dev/null | grep -q '^trunk 0\.21\.14$'; then
  log "installing trunk 0.21.14 (about 10 minutes on 2 cores)"
  cargo install --locked trunk@0.21.14
fi

WB_VERSION="$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)"
if ! wasm-bindgen --version 2>/dev/null | grep -q " $WB_VERSION\$"; then
  log "installing wasm-bindgen-cli $WB_VERSION (pinned to Cargo.lock)"
  # The CLI's own lock can name a crate version the registry no longer has: fall back to unlocked.
  cargo install --locked wasm-bindgen-cli --version "$WB_VERSION" || cargo install wasm-bindgen-cli --version "$WB_VERSION"
fi
if ! grep -q "wasm_bindgen = \"$WB_VERSION\"" Trunk.toml; then
  echo "Trunk.toml pins a wasm_bindgen other than Cargo.lock's $WB_VERSION: update it" >&2
  exit 1
fi

if ! [ -x /usr/bin/chromium ] || ! [ -x /usr/bin/chromedriver ]; then
  log "installing Debian chromium and chromium-driver"
  SUDO=""; if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

if ! [ -x node_modules/.bin/wasm-opt ] || ! [ -d node_modules/playwright-core ]; then
  log "installing npm dev tools (binaryen 132, playwright-core; no browser download)"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
fi

# trunk 0.21.14 takes a tool from PATH when its version is the pinned one, else from its cache
# (~/.cache/trunk/<tool>-<version>/), and downloads only when neither has it. Copies of the pinned
# tools in its cache make plain `trunk build --release` and `trunk serve` work from any shell,
# without scripts/ on PATH and without a download (the npm binaryen package is self-contained:
# bin/wasm-opt is node plus binaryen compiled to wasm).
TRUNK_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/trunk"
WO_VERSION="$(awk -F'"' '/^wasm_opt = /{print $2}' Trunk.toml)"
if ! "$TRUNK_CACHE/wasm-opt-$WO_VERSION/bin/wasm-opt" --version 2>/dev/null | grep -q "($WO_VERSION)"; then
  log "copying wasm-opt ($WO_VERSION) into trunk's tool cache $TRUNK_CACHE"
  mkdir -p "$TRUNK_CACHE"
  rm -rf "$TRUNK_CACHE/wasm-opt-$WO_VERSION"
  cp -a node_modules/binaryen "$TRUNK_CACHE/wasm-opt-$WO_VERSION"
fi
if ! "$TRUNK_CACHE/wasm-bindgen-$WB_VERSION/wasm-bindgen" --version 2>/dev/null | grep -q " $WB_VERSION\$"; then
  log "copying wasm-bindgen $WB_VERSION into trunk's tool cache $TRUNK_CACHE"
  mkdir -p "$TRUNK_CACHE/wasm-bindgen-$WB_VERSION"
  cp "$(command -v wasm-bindgen)" "$TRUNK_CACHE/wasm-bindgen-$WB_VERSION/wasm-bindgen"
fi

if [ ! -f web/demo/demo.pt.trace.json.gz ]; then
  log "generating the demo trace"
  cargo run -q --release -p tracelight-synth -- web/demo/demo.pt.trace.json.gz --steps 10 --layers 6
fi
