#!/usr/bin/env bash
# tests/fuzz/smoke.sh [TARGET...]: builds every fuzz target (cargo-fuzz, stable toolchain, no
# sanitizer; docs/fuzzing.md) and runs each briefly: its committed corpus, then
# SMOKE_RUNS (default 20000) new inputs, at most SMOKE_SECONDS (default 12) per target.
# Any crash, panic, timeout or leak of memory past the limit fails the run; the input that
# did it is kept under tests/fuzz/artifacts/<target>/. The committed corpus is only read: what the
# run finds goes to a scratch directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")"
FUZZ_DIR=$PWD
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$FUZZ_DIR/target}
SMOKE_RUNS=${SMOKE_RUNS:-20000}
SMOKE_SECONDS=${SMOKE_SECONDS:-12}
# A few thousand inputs need no more than opt-level 1, and the build (every crate of the relay,
# client and enclave, instrumented) is much quicker than at the profile's 3, which the long runs
# (long.sh) keep.
export CARGO_PROFILE_RELEASE_OPT_LEVEL=${CARGO_PROFILE_RELEASE_OPT_LEVEL:-1}
# Nor line tables (fifteen binaries, each linking all of it): a crash keeps its input, and the
# `reproduce` command below rebuilds with them. cargo-fuzz asks for them on its command line
# (`--config profile.release.debug="line-tables-only"`, which no profile setting overrides), so
# the flag goes last on rustc's: about 12 % less build time, binaries half the size.
export RUSTFLAGS="${RUSTFLAGS:-} -Cdebuginfo=0"

command -v c++ >/dev/null || { echo "tests/fuzz/smoke.sh: needs a C++ compiler (libFuzzer is built from source)" >&2; exit 1; }
cargo fuzz --version >/dev/null 2>&1 || { echo "tests/fuzz/smoke.sh: needs cargo-fuzz (cargo install --locked cargo-fuzz)" >&2; exit 1; }

# cargo-fuzz has no --locked: check the committed lock first, so a stale one fails here.
cargo metadata --locked --format-version 1 >/dev/null
cargo fuzz build --sanitizer none
BIN_DIR=$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release

if [ $# -gt 0 ]; then TARGETS=("$@"); else mapfile -t TARGETS < <(cargo fuzz list); fi
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
failed=()
for T in "${TARGETS[@]}"; do
  mkdir -p "$SCRATCH/$T/new" "$SCRATCH/$T/artifacts" "corpus/$T"
  corpus_size=$(find "corpus/$T" -type f | wc -l)
  start=$SECONDS
  if "$BIN_DIR/$T" "$SCRATCH/$T/new" "corpus/$T" \
      -runs=$((corpus_size + SMOKE_RUNS)) -max_total_time="$SMOKE_SECONDS" -timeout=30 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$SCRATCH/$T/artifacts/" \
      >"$SCRATCH/$T/log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$SCRATCH/$T/log" | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -o 'cov: [0-9]*' "$SCRATCH/$T/log" | tail -n1 || true)
    printf 'fuzz smoke %-13s ok: %s runs (%s in corpus) in %ss, %s\n' "$T" "$runs" "$corpus_size" $((SECONDS - start)) "$cov"
  else
    failed+=("$T")
    mkdir -p "artifacts/$T"
    cp "$SCRATCH/$T/artifacts/"* "artifacts/$T/" 2>/dev/null || true
    echo "fuzz smoke $T FAILED; the tail of its log, and the inputs kept in tests/fuzz/artifacts/$T/:" >&2
    tail -n 40 "$SCRATCH/$T/log" >&2
    ls -l "artifacts/$T" >&2 || true
    echo "reproduce: (cd tests/fuzz && cargo fuzz run --sanitizer none $T artifacts/$T/<file>)" >&2
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz smoke: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz smoke: ${#TARGETS[@]} targets, no crashes"
