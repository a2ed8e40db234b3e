#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ (as `cargo fuzz list` names them, so a new reader's target
# is picked up) for SECONDS each (default 600), one at a time at the lowest CPU priority, and
# prints one Markdown row per target for the README's testing section: date, duration, total
# execs, execs/s, peak RSS, result. Not part of CI (scripts/test.sh).
#
#   bash scripts/fuzz_all.sh [SECONDS] [TARGET...]
#
# Needs nightly (`rustup toolchain install nightly --profile minimal`) and
# `cargo install cargo-fuzz --locked`. Seeds are copied in place from the repo's own fixtures
# (the bad-input corpus, the GPU fixtures) and, where present, ../shared/corpus; fuzz/corpus,
# fuzz/artifacts (crashes and the logs) are git-ignored. A crash: `cargo +nightly fuzz tmin TARGET
# fuzz/artifacts/TARGET/crash-…`, then a named test in crates/core/tests/regression.rs.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SECS="${1:-600}"
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  mapfile -t TARGETS < <(cargo +nightly fuzz list)
fi
BAD=crates/core/tests/fixtures/bad
GPU=crates/core/tests/fixtures/torch-2.11-cuda13-h100
SHARED=../shared/corpus

# Small seeds per target (inputs are capped by -max_len anyway).
seed() {
  local t="$1" dir="fuzz/corpus/$1"
  mkdir -p "$dir"
  case "$t" in
    kineto | kineto_reader)
      cp -n "$BAD"/*.json "$dir"/ 2>/dev/null
      cp -n "$SHARED"/real/kineto/h100_libkineto_before_fix_trace.json "$dir"/ 2>/dev/null
      for f in "$GPU"/gpu_matmul.pt.trace.json.gz "$GPU"/gpu_mlp.pt.trace.json.gz; do
        [ -f "$f" ] && zcat "$f" | head -c 8192 > "$dir/$(basename "$f" .gz).head"
      done
      [ "$t" = kineto ] && cp -n "$GPU"/gpu_matmul.pt.trace.json.gz "$dir"/ ;;
    pickle)
      cp -n "$BAD"/*.pickle "$dir"/
      find "$SHARED" -path '*snapshots*' -name '*.pickle' -size -100k -exec cp -n {} "$dir"/ \; 2>/dev/null ;;
    memory_timeline)
      cp -n "$BAD"/memory_timeline_*.json "$GPU"/gpu_mlp.memory_timeline.json "$dir"/
      zcat "$GPU"/gpu_mlp.memory_timeline.raw.json.gz | head -c 8192 > "$dir/raw.head" ;;
    chakra | chakra_et | et)
      [ -f "$GPU"/gpu_mlp.et.json.gz ] && zcat "$GPU"/gpu_mlp.et.json.gz | head -c 16384 > "$dir/et.head"
      find "$SHARED" -name '*.et.json' -size -100k -exec cp -n {} "$dir"/ \; 2>/dev/null ;;
    flight_recorder)
      # Mode byte 0 (raw file) before each gloo dump; mode byte 1 seeds the recipe.
      for f in crates/core/tests/fixtures/fr-torch-2.15-gloo/*/*; do
        case "$f" in *.expected | *.txt | *.py | */expected.json) continue ;; esac
        { printf '\0'; cat "$f"; } > "$dir/$(basename "$(dirname "$f")")_$(basename "$f")"
      done
      printf '\1\3seed' > "$dir/recipe" ;;
    *) printf 'seed' > "$dir/seed" ;;
  esac
}

args_for() {
  case "$1" in
    kineto | kineto_reader) echo "-dict=fuzz/kineto.dict -max_len=8192" ;;
    pickle) echo "-max_len=65536" ;;
    *) echo "-max_len=16384" ;;
  esac
}

mkdir -p fuzz/artifacts/logs
echo "| date | target | duration | total execs | execs/s | peak RSS | result |"
echo "|---|---|---|---|---|---|---|"
for t in "${TARGETS[@]}"; do
  seed "$t"
  log="fuzz/artifacts/logs/$t.log"
  # shellcheck disable=SC2046
  nice -n 19 cargo +nightly fuzz run "$t" "fuzz/corpus/$t" -- $(args_for "$t") \
    -max_total_time="$SECS" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 >"$log" 2>&1
  rc=$?
  stat() { grep -o "stat::$1: *[0-9]*" "$log" | tail -1 | grep -o '[0-9]*$'; }
  execs=$(stat number_of_executed_units)
  eps=$(stat average_exec_per_sec)
  rss=$(stat peak_rss_mb)
  if [ "$rc" -eq 0 ]; then
    result="clean: no crash, timeout, leak or OOM"
  else
    what=$(grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+|panicked at [^ ]+|ERROR: AddressSanitizer: [a-z-]+' "$log")
    unit=$(grep -m1 -oE 'Test unit written to [^ ]+' "$log" | sed 's/Test unit written to //')
    result="exit $rc: ${what:-see $log} ${unit:+($unit)}"
  fi
  echo "| $(date -u +%F) | \`$t\` | ${SECS} s | ${execs:-?} | ${eps:-?} | ${rss:-?} MB | $result |"
done
