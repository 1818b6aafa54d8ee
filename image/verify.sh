#!/usr/bin/env bash
# Usage: image/verify.sh   (make image-verify)
# Builds the image twice, in two different folders, and fails unless every artifact is
# byte-identical.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ROOT=$(repo)
A=$ROOT/.cache/image/verify-a
B=$ROOT/.cache/image/verify-b-elsewhere
rm -rf "$A" "$B"
"$IMAGE_DIR/build.sh" "$A"
"$IMAGE_DIR/build.sh" "$B"
if diff <(cd "$A" && cat SHA256SUMS) <(cd "$B" && cat SHA256SUMS); then
  log "reproducible: both builds are identical"
  cat "$A/SHA256SUMS"
else
  die "the two builds differ (see above)"
fi
