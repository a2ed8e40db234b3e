#!/usr/bin/env bash
# Sets up what is missing, then runs every check CI runs: formatting, the web crate's import rules,
# clippy (native and wasm32), native tests (core, CLI, generator), the wasm tests in headless
# Chromium, a release build of the app, the end-to-end tests (node's test runner +
# playwright-core driving /usr/bin/chromium), and the Python wheel with its pytest suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh

step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
NATIVE=(-p tracelight-core -p tracelight-cli -p tracelight-synth -p tracelight-digest -p tracelight-testkit)

step "cargo fmt --check"
cargo fmt --all -- --check

step "import rules of crates/web (tests/arch)"
node --test tests/arch/

step "clippy (native)"
cargo clippy "${NATIVE[@]}" --all-targets -- -D warnings
step "clippy (wasm32 web app)"
cargo clippy -p tracelight-web --target wasm32-unknown-unknown --all-targets -- -D warnings

step "native tests"
cargo test "${NATIVE[@]}"

step "wasm tests in headless Chromium"
# wasm-bindgen-test-runner drives chromedriver; Chromium needs --no-sandbox as root.
export CHROMEDRIVER=/usr/bin/chromedriver
export WASM_BINDGEN_TEST_TIMEOUT=120
# The runner reads crates/web/webdriver.json (Chromium flags) from the package directory.
cargo test -p tracelight-web --target wasm32-unknown-unknown

step "release build of the app"
trunk build --release

step "end-to-end tests (headless Chromium)"
# The single-file build first: the CLI embeds it for `tracelight view` (crates/cli/build.rs).
node scripts/single_file.mjs
cargo build --release -p tracelight-cli
node --test tests/e2e/

step "Python wheel (maturin) and its pytest suite against the CLI"
cargo clippy -p tracelight-py --all-targets -- -D warnings
bash scripts/python.sh
