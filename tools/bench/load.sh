#!/usr/bin/env bash
# Load and memory (issue 18, docs/benchmarks.md "Load and memory"), side by side in one run:
#
#   1. GET /tee/public-key and GET /tee/attestation through the relay and through nginx
#      (Debian's, proxying the same enclave routes with upstream keep-alive), each driven by
#      wrk for LOAD_SECS;
#   2. the relay holding LOAD_CONNS open connections that keep asking: its RSS, the enclave's,
#      and the relay's connections to the enclave.
#
# Uses the release binaries (`cargo build --release --bins --features enclave/dev-quotes`; make
# bench builds them), nginx and wrk (apt: nginx-light wrk; installed here when missing). Stops
# only the processes it started, by pid. Prints markdown rows for docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

LOAD_SECS=${LOAD_SECS:-15}
LOAD_CONNS=${LOAD_CONNS:-10000}
WRK_CONNS=${WRK_CONNS:-64}
BIN=target/release

command -v wrk >/dev/null && command -v nginx >/dev/null \
  || { apt-get update -qq && apt-get install -y -qq nginx-light wrk >/dev/null; }
[ -x "$BIN/relay" ] && [ -x "$BIN/enclave" ] \
  || cargo build --locked --release --bins --features enclave/dev-quotes

WORK=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"  # 10,000 connections need as many descriptors on each side

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 100); do curl -fs -o /dev/null "$1" && return 0; sleep 0.1; done; echo "no answer at $1" >&2; exit 1; }
rss_mib() { awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
hwm_mib() { awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }

EP=$(port); RP=$(port); NP=$(port)
cat >"$WORK/enclave.json" <<JSON
{"listen": "127.0.0.1:$EP", "devQuotes": {"seed": "$(printf '%064d' 7)"}}
JSON
cat >"$WORK/relay.json" <<JSON
{"listen": "127.0.0.1:$RP", "enclaveUrl": "http://127.0.0.1:$EP", "dataDir": "$WORK/relay",
 "rateLimits": {"perKeyPerMinute": 0, "perAddressPerMinute": 0}}
JSON
cat >"$WORK/nginx.conf" <<CONF
worker_processes 2;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 20000; }
http {
  access_log off;
  upstream enclave { server 127.0.0.1:$EP; keepalive 64; }
  server {
    listen 127.0.0.1:$NP;
    location = /tee/public-key {
      proxy_pass http://enclave/public-key;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
    location = /tee/attestation {
      proxy_pass http://enclave/attestation;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
CONF

RUST_LOG=warn "$BIN/enclave" --config "$WORK/enclave.json" 2>"$WORK/enclave.log" & pids+=($!); EPID=$!
wait_http "http://127.0.0.1:$EP/public-key"
RUST_LOG=warn "$BIN/relay" --config "$WORK/relay.json" 2>"$WORK/relay.log" & pids+=($!); RPID=$!
wait_http "http://127.0.0.1:$RP/tee/public-key"
nginx -c "$WORK/nginx.conf" -p "$WORK" -g 'daemon off;' 2>"$WORK/nginx.out" & pids+=($!)
wait_http "http://127.0.0.1:$NP/tee/public-key"

# The two answer the same bytes.
cmp <(curl -fsS "http://127.0.0.1:$RP/tee/public-key") <(curl -fsS "http://127.0.0.1:$NP/tee/public-key") \
  || { echo "relay and nginx answer different keys" >&2; exit 1; }

# wrk's summary → "req/s p50 p99".
drive() {
  wrk -t2 -c"$2" -d"$3"s --latency "$1" >"$WORK/wrk.txt"
  local rps p50 p99
  rps=$(awk '/^Requests\/sec/ {print $2}' "$WORK/wrk.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$WORK/wrk.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$WORK/wrk.txt")
  grep -q "Non-2xx" "$WORK/wrk.txt" && { echo "non-2xx answers from $1" >&2; cat "$WORK/wrk.txt" >&2; exit 1; }
  echo "$rps $p50 $p99"
}

echo "| route | target | req/s | p50 | p99 |"
echo "|---|---|---|---|---|"
for route in /tee/public-key /tee/attestation; do
  for round in 1 2; do
    read -r n_rps n_p50 n_p99 < <(drive "http://127.0.0.1:$NP$route" "$WRK_CONNS" "$LOAD_SECS")
    read -r r_rps r_p50 r_p99 < <(drive "http://127.0.0.1:$RP$route" "$WRK_CONNS" "$LOAD_SECS")
    echo "| $route | nginx (round $round) | $n_rps | $n_p50 | $n_p99 |"
    echo "| $route | relay (round $round) | $r_rps | $r_p50 | $r_p99 |"
    echo "| $route | relay / nginx (round $round) | $(python3 -c "print(f'{$r_rps / $n_rps:.2f}x')") | | |"
  done
done

# Memory at LOAD_CONNS open connections, all asking: first the key (answered by the relay),
# then the attestation (forwarded, one request to the enclave for all callers asking while it
# is in flight).
echo
echo "| at $LOAD_CONNS connections | GET /tee/public-key | GET /tee/attestation (forwarded) |"
echo "|---|---|---|"
rows=()
for route in /tee/public-key /tee/attestation; do
  wrk -t2 -c"$LOAD_CONNS" -d"$((LOAD_SECS + 10))"s --timeout 30s "http://127.0.0.1:$RP$route" >"$WORK/wrk-conns.txt" &
  WRK=$!
  sleep $((LOAD_SECS / 2 + 5))
  open=$(ss -Htn state established "( sport = :$RP )" | wc -l)
  upstream=$(ss -Htnp state established "( dport = :$EP )" | grep -c "pid=$RPID," || true)
  rows+=("$open|$(rss_mib "$RPID") MiB|$(rss_mib "$EPID") MiB|$upstream")
  wait "$WRK" || true
  rows[-1]+="|$(awk '/^Requests\/sec/ {printf "%.0f req/s", $2}' "$WORK/wrk-conns.txt"), $(grep -Eo 'Socket errors:.*' "$WORK/wrk-conns.txt" || echo 'no socket errors')"
done
IFS='|' read -r k_open k_relay k_enclave k_up k_wrk <<<"${rows[0]}"
IFS='|' read -r a_open a_relay a_enclave a_up a_wrk <<<"${rows[1]}"
echo "| client connections open at the relay (sampled) | $k_open | $a_open |"
echo "| relay RSS (sampled) | $k_relay | $a_relay |"
echo "| enclave RSS (sampled) | $k_enclave | $a_enclave |"
echo "| relay connections to the enclave | $k_up | $a_up |"
echo "| wrk | $k_wrk | $a_wrk |"
echo "| peak RSS over the run: relay / enclave | $(hwm_mib "$RPID") MiB / $(hwm_mib "$EPID") MiB | |"
