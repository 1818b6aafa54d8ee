#!/usr/bin/env bash
# Runs every test with the real model server up for the end-to-end suite, then stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
LLM_DIR=${LLM_DIR:-.cache/llm}
PORT=${LLM_TEST_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}

# The age CLI, the real peer that client/tests/age_cli.rs decrypts files from (Debian's `age`).
command -v age >/dev/null || { apt-get update -qq && apt-get install -y -qq age; }

# The reproducible image and QEMU, for the boot test and the published-measurements check.
image/qemu-install.sh
image/build.sh image/out
export SVC_IMAGE_DIR=$PWD/image/out

# The real x402 npm client the x402 end-to-end test pays with, from the committed lock; installed
# again only when the lock changed since the last install.
# The local Solana chain (Surfpool) the chain tests run on, the same way.
tools/npm-install.sh tests/x402-peer tests/chain tests/mcp-peer tests/openai-peer

# The Python peers of the discovery, proxy and operations tests (a2a-sdk 1.3 and 0.3,
# openapi-spec-validator, schemathesis, the OpenAI SDK, prometheus-client), each set in a venv
# from its pinned requirements.
tools/peers.sh .cache/peers
export SVC_PEERS_DIR=$PWD/.cache/peers
# svc's state (wallet certificates, the TCB floor, MCP spending) for this run only, not ~/.local.
export SVC_STATE_DIR=${SVC_STATE_DIR:-$(mktemp -d)}

# The fuzz targets' smoke run (tests/fuzz/smoke.sh, docs/fuzzing.md): every target built with
# cargo-fuzz on the pinned stable toolchain (cached under tests/fuzz/target) and run briefly over its
# committed corpus and a few thousand new inputs. cargo-fuzz is installed from crates.io when
# missing, at the version docs/fuzzing.md records.
cargo fuzz --version >/dev/null 2>&1 || cargo install --locked cargo-fuzz --version 0.13.2
tests/fuzz/smoke.sh

# The model server stays quick enough while tests run if it keeps one thread for itself.
export LLM_THREADS=${LLM_THREADS:-1}
tools/llm/start.sh "$LLM_DIR" "$PORT" >/dev/null
trap 'tools/llm/stop.sh "$LLM_DIR" >/dev/null 2>&1 || true' EXIT
export LLM_BASE_URL="http://127.0.0.1:$PORT/v1"

status=0
if cargo nextest --version >/dev/null 2>&1; then
  # nextest skips doctests; the crates have none, so nothing is left out.
  cargo nextest run --locked --workspace --all-features --no-fail-fast || status=$?
else
  cargo test --locked --workspace --all-features --no-fail-fast || status=$?
fi
# The web app (relay/web): node's test runner, whose summary closes the output.
tools/web-test.sh || status=$?
exit $status
