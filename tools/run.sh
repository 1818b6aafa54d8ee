#!/usr/bin/env bash
# `make run`: model server, enclave and relay on embedded defaults, all on 127.0.0.1.
# Prints how to use it; Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LLM_DIR=${LLM_DIR:-.cache/llm}
# RUN_DIR and DATA_DIR (and the ports) may be set elsewhere: tests/tests/make_run.rs runs this
# script twice on one pair of them. RUN_MODEL_URL: a model server already running (then none is
# started or stopped here).
RUN_DIR=${RUN_DIR:-$ROOT/.cache/run}
DATA_DIR=${DATA_DIR:-$ROOT/data}
# The relay keeps everything in DATA_DIR (SQLite): a DATABASE_URL exported for `make test` must
# not send it to a shared database, where a new key holder secret could not start over.
unset DATABASE_URL
LLM_PORT=${LLM_PORT:-18080}
MODEL_URL=${RUN_MODEL_URL:-http://127.0.0.1:$LLM_PORT/v1}
ENCLAVE_PORT=${ENCLAVE_PORT:-7070}
RELAY_PORT=${RELAY_PORT:-8787}
mkdir -p "$RUN_DIR"

# What a run makes is kept for the next (README.md): the API key here, and below the
# key holder's secrets, so a second run opens the wallets, the pool and the deposit wallets the
# first one sealed into data/. `rm -rf data .cache/run` starts over.
[ -s "$RUN_DIR/api-key" ] || (umask 077; python3 -c 'import secrets; print("sk_svc_" + secrets.token_hex(16))' >"$RUN_DIR/api-key")
API_KEY=$(cat "$RUN_DIR/api-key")
# Dev quotes: a test PKI from a fresh seed signs real DCAP quote structures. Clients trust it
# only through --dev-root; it proves nothing about hardware.
DEV_SEED=$(python3 -c 'import secrets; print(secrets.token_hex(32))')

# Custody (docs/custody.md): a provisioner key the enclave's configuration lists, and the key
# holder's secrets (a fresh KEK), encrypted at rest with the real age CLI to a fresh identity.
command -v age >/dev/null || { apt-get update -qq && apt-get install -y -qq age >/dev/null; }
# Made once and kept. A new KEK cannot open what an older one sealed, so data/ made under
# another KEK is moved aside (and said); the freshness witness's heads (DESIGN §13) belong to
# the KEK's books and start over with it.
if [ ! -s "$RUN_DIR/secrets.age" ] || [ ! -s "$RUN_DIR/provisioner.pub" ] || [ ! -s "$RUN_DIR/age-identity.txt" ]; then
  rm -f "$RUN_DIR/provisioner.key" "$RUN_DIR/provisioner.pub" "$RUN_DIR/age-identity.txt" "$RUN_DIR/secrets.age" \
    "$RUN_DIR/secrets.age.witness.json"
  if [ -d "$DATA_DIR" ]; then
    aside="$DATA_DIR.before-$(date +%Y%m%d-%H%M%S)"
    mv "$DATA_DIR" "$aside"
    echo "$DATA_DIR/ was sealed under a key holder secret this checkout no longer has: moved to $aside/"
  fi
  target/debug/svc provisioner-key "$RUN_DIR/provisioner.key" 2>/dev/null >"$RUN_DIR/provisioner.pub"
  age-keygen -o "$RUN_DIR/age-identity.txt" 2>/dev/null
  KEK=$(python3 -c 'import base64, secrets; print(base64.b64encode(secrets.token_bytes(32)).decode())')
  printf '{"version": 1, "kek": "%s", "credentials": {}}' "$KEK" \
    | age -r "$(age-keygen -y "$RUN_DIR/age-identity.txt")" -o "$RUN_DIR/secrets.age"
  unset KEK
fi
PROVISIONER=$(cat "$RUN_DIR/provisioner.pub")

# The local swap world (docs/swaps.md): a Surfpool chain, two mints, a pool behind the router
# stand-in, and a demo payer. Its one JSON line says where everything is.
tools/npm-install.sh tests/chain >/dev/null
pids=()
rm -f "$RUN_DIR/sandbox.json"
target/debug/swap-sandbox "$RUN_DIR/demo-payer.json" "$RUN_DIR/x402-fee-payer.json" >"$RUN_DIR/sandbox.json" 2>"$RUN_DIR/sandbox.log" &
pids+=($!)
for _ in $(seq 1 300); do
  [ -s "$RUN_DIR/sandbox.json" ] && break
  sleep 0.1
done
[ -s "$RUN_DIR/sandbox.json" ] || { echo "the local chain did not start; see $RUN_DIR/sandbox.log (needs Node.js 20+ and npm)"; kill "${pids[@]}"; exit 1; }
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$RUN_DIR/sandbox.json" "$1"; }
RPC_URL=$(field rpcUrl); ROUTER_URL=$(field routerUrl); USDC=$(field usdc); TOKEN=$(field token)
PAY_TO=$(field payTo)
# The demo payer's secret key as 64 hex digits, the form the x402 npm client takes.
PAYER_HEX=$(python3 -c 'import json, sys; print(bytes(json.load(open(sys.argv[1]))[:32]).hex())' "$RUN_DIR/demo-payer.json")
# The demo payer's address: it also owns the demo's managed wallet.
OWNER=$(python3 -c 'import json, sys; a="123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"; n=int.from_bytes(bytes(json.load(open(sys.argv[1]))[32:]), "big"); s=""
while n: n, r = divmod(n, 58); s = a[r] + s
print(s)' "$RUN_DIR/demo-payer.json")
fresh_address() {
  python3 -c 'import secrets; a="123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"; n=int.from_bytes(secrets.token_bytes(32), "big"); s=""
while n: n, r = divmod(n, 58); s = a[r] + s
print(s)'
}
DESTINATION=$(fresh_address); SHIELD_TO=$(fresh_address)

cat >"$RUN_DIR/enclave.json" <<JSON
{
  "listen": "127.0.0.1:$ENCLAVE_PORT",
  "devQuotes": {"seed": "$DEV_SEED", "writeRootPem": "$RUN_DIR/dev-root.pem"},
  "provisioners": ["$PROVISIONER"],
  "swaps": {"rpcUrl": "$RPC_URL", "routerUrl": "$ROUTER_URL", "routerApi": "swap", "payoutQuietBlocks": 5},
  "models": {
    "gpt-oss:20b": {"endpoint": "$MODEL_URL", "upstreamModel": "smollm2-135m", "maxTokens": 128}
  }
}
JSON
cat >"$RUN_DIR/relay.json" <<JSON
{
  "listen": "127.0.0.1:$RELAY_PORT",
  "enclaveUrl": "http://127.0.0.1:$ENCLAVE_PORT",
  "dataDir": "$DATA_DIR",
  "apiKeys": ["$API_KEY"],
  "agents": {
    "rpcUrl": "$RPC_URL", "routerUrl": "$ROUTER_URL", "explorerTxUrl": "https://explorer.solana.com/tx/{signature}?cluster=custom&customUrl=$RPC_URL",
    "mints": {
      "$USDC": {"symbol": "USDC", "decimals": 6, "buckets": [1000000, 10000000, 100000000], "minAmount": 100000, "maxAmount": 1000000000},
      "$TOKEN": {"symbol": "TKN", "decimals": 9, "buckets": [1000000000, 10000000000], "minAmount": 1000000, "maxAmount": 1000000000000}
    },
    "wallets": {"webhookAllow": ["127.0.0.1:9"]}
  },
  "deposits": {
    "rpcUrl": "$RPC_URL", "network": "localnet", "pollSecs": 2,
    "mints": {"$USDC": {"currency": "usdc", "minAmount": 1000}, "$TOKEN": {"currency": "svc"}}
  },
  "currencyPrices": {"svc": {"agentPricePerCall": 1000000, "teeProcessPricePerCall": 1000000}},
  "web": {"devRootPem": "$RUN_DIR/dev-root.pem", "devMeasurements": "$ROOT/measurements/dev.json"},
  "x402": {
    "rpcUrl": "$RPC_URL", "feePayerKeyFile": "$RUN_DIR/x402-fee-payer.json",
    "payTo": "$PAY_TO", "asset": "$USDC", "network": "solana-devnet"
  },
  "models": {
    "gpt-oss:20b": {"endpoint": "$MODEL_URL", "upstreamModel": "smollm2-135m", "maxTokens": 128}
  }
}
JSON
# The balance id of the configured key (relay::auth::key_id): sha256 of the key, 16 hex digits.
KEY_ID=key_$(python3 -c 'import hashlib, sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16])' "$API_KEY")

cleanup() {
  trap - EXIT INT TERM
  echo; echo "stopping..."
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${RUN_MODEL_URL:-}" ] || tools/llm/stop.sh "$LLM_DIR" >/dev/null 2>&1 || true
  echo "stopped."
}
trap cleanup EXIT INT TERM

[ -n "${RUN_MODEL_URL:-}" ] || tools/llm/start.sh "$LLM_DIR" "$LLM_PORT" >/dev/null
target/debug/enclave --config "$RUN_DIR/enclave.json" 2>"$RUN_DIR/enclave.log" &
pids+=($!)
target/debug/relay --config "$RUN_DIR/relay.json" 2>"$RUN_DIR/relay.log" &
pids+=($!)

for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$RELAY_PORT/tee/public-key" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$RELAY_PORT/tee/public-key" >/dev/null || { echo "relay/enclave did not start; see $RUN_DIR/*.log"; exit 1; }
# The key holder verifies the enclave (dev root, dev measurements) and releases the bundle to
# every new enclave key, as it would in production.
target/debug/svc --relay "http://127.0.0.1:$RELAY_PORT" --measurements measurements/dev.json \
  --dev-root "$RUN_DIR/dev-root.pem" keyholder --secrets "$RUN_DIR/secrets.age" \
  --identity "$RUN_DIR/age-identity.txt" --provisioner-key "$RUN_DIR/provisioner.key" 2>"$RUN_DIR/keyholder.log" &
pids+=($!)
# A development balance for the key, so paid calls work at once (1 stablecoin).
target/debug/relay --config "$RUN_DIR/relay.json" admin credit --key-id "$KEY_ID" --currency usdc \
  --amount 1000000 --reference "make run development credit" >/dev/null
# Managed wallets' pool (docs/wallets.md): made by the enclave once it is provisioned, and given
# SOL for fees and rent by a local-chain airdrop, as an operator would fund it.
POOL=""
for _ in $(seq 1 100); do
  POOL=$(curl -sf "http://127.0.0.1:$RELAY_PORT/agents/v1/reserves?mint=$USDC" 2>/dev/null \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["pool"])' 2>/dev/null) && [ -n "$POOL" ] && break
  sleep 0.2
done
if [ -n "$POOL" ]; then
  curl -sf "$RPC_URL" -H 'content-type: application/json' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"requestAirdrop\",\"params\":[\"$POOL\",10000000000]}" >/dev/null \
    || echo "could not fund the wallets' pool $POOL; encrypt and withdraw answer pool_unfunded"
else
  echo "the wallets' pool was not made (is the enclave provisioned? see $RUN_DIR/keyholder.log)"
fi

cat <<MSG

  Open http://127.0.0.1:$RELAY_PORT/ in a browser: the chat page verifies the enclave itself and
  seals every prompt (docs/web.md); http://127.0.0.1:$RELAY_PORT/account signs in with a wallet.

  Private inference service running (development mode: DEV quotes from a test PKI, not TDX).
    relay    http://127.0.0.1:$RELAY_PORT     (logs: .cache/run/relay.log)
    keyholder  provisions the enclave      (logs: .cache/run/keyholder.log)
    enclave  http://127.0.0.1:$ENCLAVE_PORT     (logs: .cache/run/enclave.log)
    model    $MODEL_URL  SmolLM2-135M via llama.cpp, serving gpt-oss:20b

  Try, in another terminal (the client verifies the enclave's quote first; the dev root is
  trusted only because you name it):

    export SVC_RELAY_URL=http://127.0.0.1:$RELAY_PORT SVC_MEASUREMENTS=measurements/dev.json SVC_DEV_ROOT=.cache/run/dev-root.pem
    target/debug/svc --api-key $API_KEY chat "What is the capital of France?"

  the verification document (exit 0 accept, 10 reject; try it without SVC_DEV_ROOT):

    target/debug/svc attest

  and the receipt by the address chat prints:

    target/debug/svc receipt <address>

  custody (docs/custody.md): the key holder (logs: .cache/run/keyholder.log) verified the
  enclave and released its secrets bundle: svc attest says "provisioned: yes". The enclave
  seals objects (a wallet key) that the relay stores and that survive its restarts:

    target/debug/relay --config .cache/run/relay.json admin objects new --kind signing-key
    target/debug/relay --config .cache/run/relay.json admin objects open --id <id>

  the agent (tool loop; no tool upstreams are configured offline, so tools answer "not configured"):

    target/debug/svc agent "What is 2+2?"                      # plaintext: the relay runs the loop
    target/debug/svc agent --encrypted "What is 2+2?"          # sealed: the enclave runs it
    target/debug/svc agent --braid "Compare SOL vs JUP"        # guided reasoning (BRAID)

  private swaps (docs/swaps.md) on the local chain: a quote, then one private swap of 10 USDC
  into TKN from the demo payer to a fresh destination (svc checks the enclave's signed
  commitment and the funding transaction before it signs, then follows the session and
  verifies its receipt):

    target/debug/svc --api-key $API_KEY swap quote --from $USDC --to $TOKEN --amount 10000000
    target/debug/svc --api-key $API_KEY swap oneshot --payer-key .cache/run/demo-payer.json \\
      --from $USDC --to $TOKEN --amount 10000000 --destination $DESTINATION --rpc-url $RPC_URL
    curl -s "http://127.0.0.1:$RELAY_PORT/agents/v1/anonymity-set?mint=$USDC"

  any OpenAI SDK (docs/proxy.md): svc proxy verifies the enclave, then serves the OpenAI API
  on localhost, sealing every request and checking every receipt (base_url
  http://127.0.0.1:8000/v1):

    target/debug/svc --api-key $API_KEY proxy --listen 127.0.0.1:8000 &
    curl -s http://127.0.0.1:8000/v1/chat/completions -H 'content-type: application/json' \\
      -d '{"model": "gpt-oss:20b", "messages": [{"role": "user", "content": "Hi"}]}'

  x402 (docs/billing.md "x402"): pay per call with the real npm client (@x402/fetch), settled
  on the local chain by the relay's built-in facilitator; the demo payer pays 0.005 USDC for
  one swap quote (a guest's /agent is free 5 times a day, then paid the same way):

    tools/npm-install.sh tests/x402-peer
    node tests/x402-peer/pay.mjs --method GET --no-replay --rpc $RPC_URL --key $PAYER_HEX --allow-asset $USDC \\
      --url "http://127.0.0.1:$RELAY_PORT/agents/v1/quote?fromMint=$USDC&toMint=$TOKEN&amount=1000000"
    curl -s http://127.0.0.1:$RELAY_PORT/.well-known/x402

  deposits (docs/billing.md "Deposits"): the key's deposit wallet, whose key only the enclave
  holds, with its token account per accepted mint; a transfer of USDC or TKN (the service
  token here) to it from any wallet is credited once finalized (about ten seconds here); the
  demo payer holds 10 TKN; send X-Currency: svc to pay from the service token:

    target/debug/svc --api-key $API_KEY deposit
    target/debug/svc --api-key $API_KEY deposit --send 2000000000 --mint $TOKEN \\
      --payer-key .cache/run/demo-payer.json --rpc-url $RPC_URL
    target/debug/svc --api-key $API_KEY deposit --list
    curl -s -H "Authorization: Bearer $API_KEY" http://127.0.0.1:$RELAY_PORT/api/v1/balance

  managed wallets (docs/wallets.md): a wallet whose key only the enclave holds, owned by the
  demo payer's key (every fund-moving request is signed with it and checked by the enclave).
  Fund it from the demo payer, move 2 USDC into its private balance (a session to poll), pay
  1 USDC out to a fresh address, swap 1 USDC into TKN for a destination, shield 1 USDC to
  another fresh address through the pool (four transactions, about a minute; follow the
  sessions with svc swap status), then read its balances and the enclave-signed statement of
  reserves (its webhooks go to 127.0.0.1:9, where nothing listens, so they are retried):

    target/debug/svc --api-key $API_KEY wallet create --webhook-url http://127.0.0.1:9/hook --owner-pubkey $OWNER
    target/debug/svc --api-key $API_KEY wallet fund <walletId> --mint $USDC --amount 5000000 \\
      --payer-key .cache/run/demo-payer.json --rpc-url $RPC_URL
    target/debug/svc --api-key $API_KEY wallet encrypt <walletId> --mint $USDC --amount 2000000 --owner-key .cache/run/demo-payer.json
    target/debug/svc --api-key $API_KEY wallet withdraw <walletId> --mint $USDC --amount 1000000 --to $DESTINATION \\
      --owner-key .cache/run/demo-payer.json
    target/debug/svc --api-key $API_KEY wallet swap <walletId> --from-mint $USDC --to-mint $TOKEN --amount 1000000 \\
      --to $DESTINATION --owner-key .cache/run/demo-payer.json
    target/debug/svc --api-key $API_KEY wallet shield <walletId> --mint $USDC --amount 1000000 --to $SHIELD_TO \\
      --owner-key .cache/run/demo-payer.json
    target/debug/svc --api-key $API_KEY swap status <sessionId>
    target/debug/svc --api-key $API_KEY wallet balance <walletId> --mints $USDC
    target/debug/svc wallet reserves --mint $USDC

  An AI agent acting as the wallet's owner uses svc mcp, a local MCP server over stdio that
  signs the wallet tools with the owner key (docs/mcp.md); list its tools with the MCP SDK:

    node tests/mcp-peer/mcp.mjs --stdio '["target/debug/svc", "--api-key", "$API_KEY", "mcp", "--owner-key", ".cache/run/demo-payer.json", "--allow-destination", "$DESTINATION"]'

  discovery (docs/discovery.md, docs/mcp.md): the A2A card, capabilities, OpenAPI, and the MCP
  server (node tests/mcp-peer/mcp.mjs needs: tools/npm-install.sh tests/mcp-peer):

    curl -s http://127.0.0.1:$RELAY_PORT/.well-known/agent-card.json
    curl -s http://127.0.0.1:$RELAY_PORT/agents/v1/capabilities
    curl -s http://127.0.0.1:$RELAY_PORT/openapi.json
    node tests/mcp-peer/mcp.mjs --url http://127.0.0.1:$RELAY_PORT/mcp/v1 --key $API_KEY

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
