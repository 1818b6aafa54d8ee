#!/usr/bin/env bash
# `make run`: model server, enclave and relay on embedded defaults, all on 127.0.0.1.
# Prints how to use it; Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LLM_DIR=${LLM_DIR:-.cache/llm}
RUN_DIR=$ROOT/.cache/run
LLM_PORT=${LLM_PORT:-18080}
ENCLAVE_PORT=${ENCLAVE_PORT:-7070}
RELAY_PORT=${RELAY_PORT:-8787}
mkdir -p "$RUN_DIR"

API_KEY=sk_svc_$(python3 -c 'import secrets; print(secrets.token_hex(16))')
# Dev quotes: a test PKI from a fresh seed signs real DCAP quote structures. Clients trust it
# only through --dev-root; it proves nothing about hardware.
DEV_SEED=$(python3 -c 'import secrets; print(secrets.token_hex(32))')

cat >"$RUN_DIR/enclave.json" <<JSON
{
  "listen": "127.0.0.1:$ENCLAVE_PORT",
  "devQuotes": {"seed": "$DEV_SEED", "writeRootPem": "$RUN_DIR/dev-root.pem"},
  "models": {
    "gpt-oss:20b": {"endpoint": "http://127.0.0.1:$LLM_PORT/v1", "upstreamModel": "smollm2-135m", "maxTokens": 128}
  }
}
JSON
cat >"$RUN_DIR/relay.json" <<JSON
{
  "listen": "127.0.0.1:$RELAY_PORT",
  "enclaveUrl": "http://127.0.0.1:$ENCLAVE_PORT",
  "dataDir": "$ROOT/data",
  "apiKeys": ["$API_KEY"],
  "models": {
    "gpt-oss:20b": {"endpoint": "http://127.0.0.1:$LLM_PORT/v1", "upstreamModel": "smollm2-135m", "maxTokens": 128}
  }
}
JSON
# The balance id of the configured key (relay::auth::key_id): sha256 of the key, 16 hex digits.
KEY_ID=key_$(python3 -c 'import hashlib, sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16])' "$API_KEY")

pids=()
cleanup() {
  trap - EXIT INT TERM
  echo; echo "stopping..."
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  tools/llm/stop.sh "$LLM_DIR" >/dev/null 2>&1 || true
  echo "stopped."
}
trap cleanup EXIT INT TERM

tools/llm/start.sh "$LLM_DIR" "$LLM_PORT" >/dev/null
target/debug/enclave --config "$RUN_DIR/enclave.json" 2>"$RUN_DIR/enclave.log" &
pids+=($!)
target/debug/relay --config "$RUN_DIR/relay.json" 2>"$RUN_DIR/relay.log" &
pids+=($!)

for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$RELAY_PORT/tee/public-key" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$RELAY_PORT/tee/public-key" >/dev/null || { echo "relay/enclave did not start; see $RUN_DIR/*.log"; exit 1; }
# A development balance for the key, so paid calls work at once (1 stablecoin).
target/debug/relay --config "$RUN_DIR/relay.json" admin credit --key-id "$KEY_ID" --currency usdc \
  --amount 1000000 --reference "make run development credit" >/dev/null

cat <<MSG

  Private inference service running (development mode: DEV quotes from a test PKI, not TDX).
    relay    http://127.0.0.1:$RELAY_PORT     (logs: .cache/run/relay.log)
    enclave  http://127.0.0.1:$ENCLAVE_PORT     (logs: .cache/run/enclave.log)
    model    http://127.0.0.1:$LLM_PORT/v1  SmolLM2-135M via llama.cpp, serving gpt-oss:20b

  Try, in another terminal (the client verifies the enclave's quote first; the dev root is
  trusted only because you name it):

    export SVC_RELAY_URL=http://127.0.0.1:$RELAY_PORT SVC_MEASUREMENTS=measurements/dev.json SVC_DEV_ROOT=.cache/run/dev-root.pem
    target/debug/svc --api-key $API_KEY chat "What is the capital of France?"

  the verification document (exit 0 accept, 10 reject; try it without SVC_DEV_ROOT):

    target/debug/svc attest

  and the receipt by the address chat prints:

    target/debug/svc receipt <address>

  the agent (tool loop; no tool upstreams are configured offline, so tools answer "not configured"):

    target/debug/svc agent "What is 2+2?"                      # plaintext: the relay runs the loop
    target/debug/svc agent --encrypted "What is 2+2?"          # sealed: the enclave runs it
    target/debug/svc agent --braid "Compare SOL vs JUP"        # guided reasoning (BRAID)

  Without a key you are a guest with 5 free /agent messages a day. With the key, chat and
  /agent are paid from its prepaid balance; make run credited it with 1 stablecoin
  (1000000 base units). Credit more, check it, and list what it paid for:

    target/debug/relay --config .cache/run/relay.json admin credit --key-id $KEY_ID --currency usdc --amount 1000000
    curl -s -H "Authorization: Bearer $API_KEY" http://127.0.0.1:$RELAY_PORT/api/v1/balance
    curl -s -H "Authorization: Bearer $API_KEY" http://127.0.0.1:$RELAY_PORT/api/v1/usage
    target/debug/svc --api-key $API_KEY agent "What is 2+2?"

  A wallet gets its own key by signing in (docs/billing.md: POST /api/v1/auth/challenge, then
  /api/v1/auth/verify with the ed25519 signature of the challenge message).

  Ctrl-C stops everything.
MSG
wait -n "${pids[@]}"
echo "a service exited; see $RUN_DIR/*.log"
