#!/usr/bin/env bash
# The web app's tests (docs/web.md): the bundle rebuilt from its lock and compared byte for byte,
# the page's crypto and quote verifier against the Rust known answers and corpus, and the pages
# in Debian's Chromium (driven by playwright-core) against the stack `make run` starts. Needs
# the debug binaries (`make build`) and LLM_BASE_URL (the suite's model server).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
tools/npm-install.sh relay/web tests/chain
cd relay/web
node build.mjs --check
# One file at a time: the browser file starts a whole stack.
exec node --test --test-concurrency=1 test/
