#!/usr/bin/env bash
# peers.sh DIR: the Python peers of the discovery, proxy and operations tests, each set in a
# venv of its own under DIR, installed from the pinned requirements in tests/peers/ (again only
# when those changed).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-.cache/peers}
mkdir -p "$DIR"
for SET in requirements requirements-a2a-v03 requirements-openai requirements-metrics requirements-webhooks; do
  REQ=tests/peers/$SET.txt
  VENV=$DIR/$SET
  SUM=$(sha256sum "$REQ" | cut -d' ' -f1)
  if [ "$(cat "$VENV/.req-sha256" 2>/dev/null)" != "$SUM" ]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQ"
    echo "$SUM" > "$VENV/.req-sha256"
  fi
done
