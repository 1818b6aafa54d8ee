#!/usr/bin/env bash
# Start serve.py in the background from an install.sh DEST; wait until /health is 200.
# Other LLM_* env vars (LLM_CTX, LLM_THREADS, ...) pass through to serve.py.
set -euo pipefail

DEST=${1:?usage: start.sh DEST [PORT]}
PORT=${2:-${LLM_PORT:-8080}}
HOST=${LLM_HOST:-127.0.0.1}
TIMEOUT=${LLM_START_TIMEOUT:-120}
HERE=$(cd "$(dirname "$0")" && pwd)
DEST=$(cd "$DEST" && pwd)
PY=$DEST/venv/bin/python
PIDFILE=$DEST/llm.pid
LOG=$DEST/llm.log
URL=http://$HOST:$PORT

die() { echo "start.sh: error: $*" >&2; exit 1; }
[ -x "$PY" ] || die "no venv at $DEST/venv; run install.sh $DEST first"
export LLM_MODEL=${LLM_MODEL:-$DEST/models/SmolLM2-135M-Instruct.Q4_1.gguf}
[ -f "$LLM_MODEL" ] || die "model not found: $LLM_MODEL; run install.sh $DEST first"

if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
  die "already running (pid $(cat "$PIDFILE")); stop.sh $DEST first"
fi

# urllib instead of curl: the venv's python is the one dependency we know exists.
health() {
  "$PY" -c 'import sys, urllib.request
try: sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=2).status == 200 else 1)
except Exception: sys.exit(1)' "$URL/health"
}
health && die "something already answers on $URL"

# setsid + nohup: the server outlives this script and the caller's terminal.
LLM_HOST=$HOST LLM_PORT=$PORT setsid nohup "$PY" "$HERE/serve.py" >"$LOG" 2>&1 </dev/null &
echo $! >"$PIDFILE"
pid=$!

echo -n "start.sh: waiting for $URL/health "
start=$SECONDS
until health; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo; rm -f "$PIDFILE"; tail -n 20 "$LOG" >&2; die "server exited during startup (log: $LOG)"
  fi
  if (( SECONDS - start >= TIMEOUT )); then
    echo; tail -n 20 "$LOG" >&2; kill "$pid" 2>/dev/null || true; rm -f "$PIDFILE"
    die "not healthy after ${TIMEOUT}s (log: $LOG)"
  fi
  echo -n .; sleep 1
done
echo " ok ($((SECONDS - start))s, pid $pid)"
echo "$URL"
