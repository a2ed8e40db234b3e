#!/usr/bin/env bash
# Builds the `tracelight` Python wheel (crates/py: PyO3 + maturin, abi3 for CPython >= 3.9) into
# target/wheels/, installs it into a virtual environment (.venv, made here when missing, with
# maturin, pyarrow, pandas and pytest from PyPI) and runs the pytest suite against the release CLI
# (target/release/tracelight, built first when missing). scripts/test.sh runs it; alone:
#   bash scripts/python.sh            # build, install, test (the Ray tests skip: no Ray)
#   bash scripts/python.sh --no-test  # build and install only
#   bash scripts/python.sh --ray      # also install Ray (~200 MB, not in CI) and run its tests
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="$(realpath -m "${TRACELIGHT_VENV:-.venv}")"
if [ ! -x "$VENV/bin/python" ]; then
  # Debian's python3 leaves venv (ensurepip) to the python3-venv package.
  if ! python3 -c 'import ensurepip' 2>/dev/null; then
    SUDO=""; if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
  fi
  python3 -m venv "$VENV"
fi
# Skips what is installed already (a warm run does not touch the network).
# mcp: the official Model Context Protocol client that drives `tracelight mcp` in test_mcp.py.
"$VENV/bin/python" -c 'import maturin, pyarrow, pandas, pytest, mcp' 2>/dev/null ||
  "$VENV/bin/pip" install -q maturin pyarrow pandas pytest mcp
# The viewer ships in the wheel for tracelight.show(): the single-file build of the app's release
# build (dist/, made here when missing; test.sh has just made it).
if [ ! -f dist/index.html ]; then
  source scripts/setup.sh
  trunk build --release
fi
node scripts/single_file.mjs
cp dist-single/tracelight.html crates/py/python/tracelight/viewer.html
rm -f target/wheels/tracelight-*.whl
"$VENV/bin/maturin" build --release -q -m crates/py/Cargo.toml -i "$VENV/bin/python" -o target/wheels
"$VENV/bin/pip" install -q --force-reinstall --no-deps target/wheels/tracelight-*.whl
[ "${1:-}" = "--no-test" ] && exit 0
if [ "${1:-}" = "--ray" ]; then
  "$VENV/bin/python" -c 'import ray' 2>/dev/null || "$VENV/bin/pip" install -q ray
fi
[ -x target/release/tracelight ] || cargo build --release -p tracelight-cli
# From outside the source tree, so that the installed wheel is what gets imported.
cd crates/py/python/tests && "$VENV/bin/python" -m pytest -q -p no:cacheprovider .
