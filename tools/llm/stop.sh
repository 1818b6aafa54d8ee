#!/usr/bin/env bash
# Stop the server started by start.sh DEST: SIGTERM, wait, SIGKILL as a last resort.
set -euo pipefail

DEST=${1:?usage: stop.sh DEST}
PIDFILE=$DEST/llm.pid
TIMEOUT=${LLM_STOP_TIMEOUT:-30}

[ -f "$PIDFILE" ] || { echo "stop.sh: not running (no $PIDFILE)"; exit 0; }
pid=$(cat "$PIDFILE")
if ! kill -0 "$pid" 2>/dev/null; then
  echo "stop.sh: stale pid file (pid $pid gone)"; rm -f "$PIDFILE"; exit 0
fi
kill -TERM "$pid"
for ((i = 0; i < TIMEOUT * 10; i++)); do
  kill -0 "$pid" 2>/dev/null || { rm -f "$PIDFILE"; echo "stop.sh: stopped pid $pid"; exit 0; }
  sleep 0.1
done
echo "stop.sh: pid $pid ignored SIGTERM for ${TIMEOUT}s; sending SIGKILL" >&2
kill -KILL "$pid" 2>/dev/null || true
rm -f "$PIDFILE"
