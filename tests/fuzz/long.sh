#!/usr/bin/env bash
# tests/fuzz/long.sh TARGET [RUNS]: one long run of one target (default 10,000,000 executions in all) at
# the lowest priority, new inputs collected in tests/fuzz/long/<target>/ (not committed); then the
# corpus is minimized: tests/fuzz/corpus/<target>/ becomes the smallest set of its inputs and the new
# ones covering everything they cover (libFuzzer -merge=1). Prints the numbers docs/fuzzing.md
# records. Needs the targets built (tests/fuzz/smoke.sh).
#
# JOBS=N splits the executions over N processes sharing the new-input directory (libFuzzer
# re-reads it, so each finds what the others found), each with its own seed and log.
set -euo pipefail
cd "$(dirname "$0")"
T=$1
RUNS=${2:-10000000}
JOBS=${JOBS:-1}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
BIN=$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/$T
mkdir -p "long/$T" "artifacts/$T" corpus/"$T"
start=$(date +%s)
pids=()
for j in $(seq 1 "$JOBS"); do
  nice -n 19 "$BIN" "long/$T" "corpus/$T" -runs=$((RUNS / JOBS)) -seed="$j" -timeout=30 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="artifacts/$T/" \
    >"long/$T.$j.log" 2>&1 &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=$?; done
end=$(date +%s)
total=0
for j in $(seq 1 "$JOBS"); do
  echo "job $j: $(grep -E '^stat::number_of_executed_units' "long/$T.$j.log")"
  echo "job $j last status: $(grep -E '#[0-9]+' "long/$T.$j.log" | tail -n1)"
  n=$(grep -E '^stat::number_of_executed_units' "long/$T.$j.log" | grep -oE '[0-9]+$' || echo 0)
  total=$((total + n))
done
echo "executions in all: $total; wall seconds: $((end - start)); exit status: $status"
[ "$status" = 0 ] || exit "$status"

# Minimize: merge the old corpus and the new inputs into an empty directory.
rm -rf "long/$T.min" && mkdir "long/$T.min"
nice -n 19 "$BIN" -merge=1 "long/$T.min" "corpus/$T" "long/$T" >"long/$T.merge.log" 2>&1
rm -rf "corpus/$T" && mv "long/$T.min" "corpus/$T"
echo "corpus: $(find "corpus/$T" -type f | wc -l) files, $(du -sk "corpus/$T" | cut -f1) KiB"
