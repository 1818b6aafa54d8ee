#!/usr/bin/env bash
# npm-install.sh DIR...: installs each Node project from its committed lock (npm ci), again
# only when the lock changed since the last install.
set -euo pipefail
for PEER in "$@"; do
  LOCK_SUM=$(sha256sum "$PEER/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$PEER/node_modules/.lock-sha256" 2>/dev/null)" != "$LOCK_SUM" ]; then
    npm ci --prefix "$PEER" --no-audit --no-fund
    echo "$LOCK_SUM" > "$PEER/node_modules/.lock-sha256"
  fi
done
