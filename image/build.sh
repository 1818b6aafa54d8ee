#!/usr/bin/env bash
# Usage: image/build.sh [OUTDIR]   (make image; default OUTDIR image/out)
#
# Builds every artifact of the enclave image from the pinned inputs and this source tree:
#   OVMF.fd        TDVF firmware (IntelTdxX64 from the pinned edk2 source; see firmware.sh)
#   vmlinuz        the pinned Debian kernel, as shipped
#   initrd.cpio    deterministic newc archive: /init = static enclave, modules, measured config
#   cmdline        the fixed kernel command line (QEMU -append)
#   launch.sh      the QEMU command for a TDX host
#   measurements.json, SHA256SUMS
#   test/initrd.cpio  an UNPUBLISHED variant whose configuration also lists the test suite's
#                     provisioner key (tests/src/lib.rs), so the boot test can provision it
# Two runs give identical bytes (make image-verify).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ROOT=$(repo)
OUT=$(mkdir -p "${1:-$ROOT/image/out}" && cd "${1:-$ROOT/image/out}" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
MUSL=x86_64-unknown-linux-musl

log "[1/7] verifying pinned inputs in $IMAGE_INPUTS"
verify_inputs

log "[2/7] firmware (TDVF; cached by input hash, the first build takes minutes)"
"$IMAGE_DIR/firmware.sh" "$WORK/fw"
cp "$WORK/fw/OVMF.fd" "$OUT/OVMF.fd"

log "[3/7] kernel and modules from the pinned .deb"
"$IMAGE_DIR/kernel.sh" "$WORK/kernel"
cp "$WORK/kernel/vmlinuz" "$OUT/vmlinuz"

log "[4/7] enclave binary: static ($MUSL), --locked, paths remapped, no build id"
# Each output folder builds in its own target dir, so image-verify also proves that the
# build directory does not leak into the binary.
TARGET=$OUT/.target
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
rustup target list --installed | grep -qx "$MUSL" || rustup target add "$MUSL"
# ring (rustls) compiles a little C: Debian's musl-gcc wrapper does it for the musl target.
command -v musl-gcc >/dev/null || { apt-get update -qq && apt-get install -y -qq musl-tools >/dev/null; }
export CC_x86_64_unknown_linux_musl=musl-gcc
(cd "$ROOT" && \
  RUSTFLAGS="--remap-path-prefix=$ROOT=/src --remap-path-prefix=$CARGO_HOME=/cargo --remap-path-prefix=$TARGET=/target -C link-arg=-Wl,--build-id=none -C target-feature=+crt-static" \
  CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=symbols SOURCE_DATE_EPOCH=0 \
  cargo build --locked --release -p enclave --target "$MUSL" --target-dir "$TARGET")
ENCLAVE=$TARGET/$MUSL/release/enclave

log "[5/7] initramfs (sorted, uid/gid 0, fixed inodes, one fixed mtime)"
# mkinitramfs and svc (for `svc measure`): built here, or the ones in IMAGE_TOOLS. tools/test.sh
# passes those its test build made, so an image built beside running tests never rewrites the
# binaries they start.
TOOLS=${IMAGE_TOOLS:-$ROOT/target/debug}
[[ -n ${IMAGE_TOOLS:-} ]] || (cd "$ROOT" && cargo build --locked -q -p image-build -p client --bins)
# A constant, not the commit time: committing the published measurements must not change them.
EPOCH=${SOURCE_DATE_EPOCH:-1735689600}
mods=()
while read -r m; do [[ -n $m ]] && mods+=(--module "$WORK/kernel/$m"); done <"$WORK/kernel/modules.order"
"$TOOLS/mkinitramfs" --out "$OUT/initrd.cpio" --init "$ENCLAVE" \
  --config "$IMAGE_DIR/enclave.json" --mtime "$EPOCH" "${mods[@]}"

# The test variant: the same binary and modules, the configuration plus the test provisioner
# (whose private key is public in this repository: never publish or deploy this variant).
TEST_PROVISIONER=2h5kxRtRLaQ99vMgcTmyZ914bUYBjB5fWifi95mi9v4Y
mkdir -p "$OUT/test"
python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c["provisioners"] = c.get("provisioners", []) + [sys.argv[2]]; print(json.dumps(c, indent=2))' \
  "$IMAGE_DIR/enclave.json" "$TEST_PROVISIONER" >"$WORK/enclave-test.json"
"$TOOLS/mkinitramfs" --out "$OUT/test/initrd.cpio" --init "$ENCLAVE" \
  --config "$WORK/enclave-test.json" --mtime "$EPOCH" "${mods[@]}"

log "[6/7] command line and launch command"
cp "$IMAGE_DIR/cmdline" "$OUT/cmdline"
sed "s|@CMDLINE@|$(cat "$IMAGE_DIR/cmdline")|" "$IMAGE_DIR/launch.sh.in" >"$OUT/launch.sh"
chmod 0755 "$OUT/launch.sh"

log "[7/7] measurements and SHA256SUMS"
"$TOOLS/svc" measure "$OUT" --measurements-json >"$OUT/measurements.json"
(cd "$OUT" && sha256sum OVMF.fd vmlinuz initrd.cpio cmdline launch.sh measurements.json >SHA256SUMS)
log "done: $OUT"
cat "$OUT/SHA256SUMS" >&2
