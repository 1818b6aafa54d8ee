#!/usr/bin/env bash
# Runs every test: the formatting and lint checks, the Rust suites (nextest) with the real model
# server up for the end-to-end suite, the fuzz targets' smoke run and the web app's tests.
#
# Time on a fresh 2-core machine (docs/benchmarks.md, "CI time"): the reproducible image and the
# fuzz targets are the two big builds, and only a few tests need them, while the end-to-end suite
# mostly waits on the processes it starts. So those two builds run in the background at the
# lowest CPU priority while the suites run, and the tests that need the image run after it.
set -euo pipefail
cd "$(dirname "$0")/.."
LLM_DIR=${LLM_DIR:-.cache/llm}
PORT=${LLM_TEST_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
LOGS=$(mktemp -d)
step() { printf '[test.sh %5ss] %s\n' "$SECONDS" "$*"; }
# What this script started, stopped however it ends (each by its own id or process group).
PEERS='' BACKGROUND='' LINT=''
stop_all() {
  [ -z "$PEERS" ] || kill "$PEERS" 2>/dev/null || true
  [ -z "$LINT" ] || kill -- "-$LINT" 2>/dev/null || true
  [ -z "$BACKGROUND" ] || kill -- "-$BACKGROUND" 2>/dev/null || true
  tools/llm/stop.sh "$LLM_DIR" >/dev/null 2>&1 || true
}
trap stop_all EXIT

# The tests that read the built image (SVC_IMAGE_DIR): they run once the background build is done.
# (The end-to-end tests are one binary, `e2e::e2e`, with a module per file.)
IMAGE_TESTS='(package(e2e) & test(/^(image_boot|launch_td|enclave_tools|cli_json)::/)) | (package(shared) & test(/^rtmr0::/))'

# Debian packages first, all in the foreground: apt takes one caller at a time, and the image
# build in the background installs its own few (nasm, kmod, musl-tools) while nothing else does.
# The age CLI is the real peer client/tests/age_cli.rs decrypts files from; Chromium runs the
# web app's browser tests; QEMU boots the image.
command -v age >/dev/null || { apt-get update -qq && apt-get install -y -qq age; }
command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
image/qemu-install.sh

# The peers, fetched while the tests compile (network, not CPU): the real npm clients (x402, MCP,
# OpenAI) and the local Solana chain (Surfpool) from their committed locks, installed again only
# when a lock changed; the Python peers (a2a-sdk 1.3 and 0.3, openapi-spec-validator,
# schemathesis, the OpenAI SDK, prometheus-client), each set in a venv from its pinned
# requirements.
step "formatting; the lints in the background (log: $LOGS/lint.log)"
cargo fmt --all -- --check
cargo fmt --manifest-path tests/fuzz/Cargo.toml -- --check
# Clippy shares nothing with the test build, so it runs beside everything else, at the lowest
# CPU priority and in a target directory of its own (it never waits on the build's lock); the
# suites mostly wait on the processes they start. Its verdict is read at the end.
# A background job is a session of its own (setsid, so it can be stopped as a group), and with
# the scheduler's autogroups a session's `nice` counts only inside it: each job also lowers its
# whole session's priority (/proc/self/autogroup), so it takes only CPU the rest leaves idle.
export LOGS
setsid bash -c '
  echo 19 >/proc/self/autogroup 2>/dev/null || true
  nice -n 19 cargo clippy --locked --workspace --all-targets --all-features --target-dir target/clippy \
    -- -D warnings >"$LOGS/lint.log" 2>&1
  echo $? >"$LOGS/lint.status"
' &
LINT=$!

step "installing the peers in the background"
{ tools/npm-install.sh tests/x402-peer tests/chain tests/mcp-peer tests/openai-peer relay/web \
    && tools/peers.sh .cache/peers; } >"$LOGS/peers.log" 2>&1 &
PEERS=$!

# Every test binary and the workspace's binaries (which the end-to-end tests and the web app's
# browser tests start), before the background builds start so they do not compete. Built in
# one invocation with the tests, Cargo gives the binaries the tests' features (dev-dependencies
# included), so nextest then reuses all of it.
command -v cargo-nextest >/dev/null || cargo install --locked cargo-nextest
NEXTEST=(cargo nextest run --locked --workspace --all-features)
step "compiling the binaries and the tests"
cargo build --locked --workspace --all-features --bins --tests
"${NEXTEST[@]}" --no-run
wait "$PEERS" || { cat "$LOGS/peers.log" >&2; echo "[test.sh] installing the peers failed" >&2; exit 1; }
PEERS=
export SVC_PEERS_DIR=$PWD/.cache/peers

step "building the image and the fuzz targets in the background (logs: $LOGS)"
# Its own process group (setsid), so an early exit stops the whole build and nothing else.
export IMAGE_TOOLS=$PWD/target/debug
# The image's status file is written the moment it is built, so its tests need not wait for the
# fuzz build that follows it.
setsid bash -c '
  echo 19 >/proc/self/autogroup 2>/dev/null || true
  nice -n 19 image/build.sh image/out >"$LOGS/image.log" 2>&1
  echo $? >"$LOGS/image.status.tmp" && mv "$LOGS/image.status.tmp" "$LOGS/image.status"
  { cargo fuzz --version >/dev/null 2>&1 || nice -n 19 cargo install --locked cargo-fuzz --version 0.13.2; } \
    >>"$LOGS/fuzz.log" 2>&1 && nice -n 19 tests/fuzz/smoke.sh >>"$LOGS/fuzz.log" 2>&1
  echo $? >"$LOGS/fuzz.status"
' &
BACKGROUND=$!
export SVC_IMAGE_DIR=$PWD/image/out

# svc's state (wallet certificates, the TCB floor, MCP spending) for this run only, not ~/.local.
export SVC_STATE_DIR=${SVC_STATE_DIR:-$(mktemp -d)}

# The model server stays quick enough while tests run if it keeps one thread for itself.
export LLM_THREADS=${LLM_THREADS:-1}
tools/llm/start.sh "$LLM_DIR" "$PORT" >/dev/null
export LLM_BASE_URL="http://127.0.0.1:$PORT/v1"

status=0
step "the Rust suites, except the tests that need the image"
# (nextest skips doctests; the crates have none, so nothing is left out.)
"${NEXTEST[@]}" --no-fail-fast -E "not ($IMAGE_TESTS)" || status=$?

step "the web app (relay/web)"
# The corpus exporter its verifier test compares against, from the build above (else it builds
# one with other features).
export SVC_ATTEST_CORPUS_BIN=$PWD/target/debug/attest-corpus
tools/web-test.sh || status=$?

# A failed background part: its log's tail, and the run fails.
failed_part() {
  echo "[test.sh] the $1 build failed ($2); its log:" >&2
  tail -n 60 "$LOGS/$1.log" >&2 || true
  status=1
}

step "waiting for the image"
while [ ! -e "$LOGS/image.status" ] && kill -0 "$BACKGROUND" 2>/dev/null; do sleep 2; done
code=$(cat "$LOGS/image.status" 2>/dev/null || echo 1)
if [ "$code" = 0 ]; then
  step "the tests that need the image (the fuzz build goes on beside them)"
  "${NEXTEST[@]}" --no-fail-fast -E "$IMAGE_TESTS" || status=$?
else
  failed_part image "$code"
fi

step "waiting for the lints and the fuzz smoke run"
wait "$LINT" "$BACKGROUND" || true
for part in lint fuzz; do
  code=$(cat "$LOGS/$part.status" 2>/dev/null || echo 1)
  [ "$code" = 0 ] || failed_part "$part" "$code"
done
grep -h '^fuzz smoke' "$LOGS/fuzz.log" 2>/dev/null || true
step "done (status $status)"
exit $status
