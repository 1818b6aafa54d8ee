#!/usr/bin/env bash
# tests/fuzz/seeds.sh [TARGET...]: regenerates the seed inputs (examples/seeds.rs, which reads the DCAP
# sample quotes from ../shared/test-vectors) and merges into tests/fuzz/corpus/<target>/ those that
# add coverage to what the corpus already covers. Needs the targets built (tests/fuzz/smoke.sh or
# `cargo fuzz build --sanitizer none`).
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
BIN_DIR=$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
cargo run --locked --quiet --example seeds -- "$SCRATCH"
if [ $# -gt 0 ]; then TARGETS=("$@"); else mapfile -t TARGETS < <(cargo fuzz list); fi
for T in "${TARGETS[@]}"; do
  mkdir -p "corpus/$T"
  [ -d "$SCRATCH/$T" ] || { echo "no seeds for $T" >&2; exit 1; }
  "$BIN_DIR/$T" -merge=1 "corpus/$T" "$SCRATCH/$T" >"$SCRATCH/$T.log" 2>&1 || { tail -n 30 "$SCRATCH/$T.log" >&2; exit 1; }
  echo "$T: $(grep -o 'MERGE-OUTER: [0-9]* new files.*' "$SCRATCH/$T.log")"
done
