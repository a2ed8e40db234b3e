#!/usr/bin/env bash
# Sets up what is missing, then serves the app with trunk on http://127.0.0.1:8080/ (the bundled
# demo trace is one click away on the first screen). Extra arguments go to `trunk serve`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
exec trunk serve --release "$@"
