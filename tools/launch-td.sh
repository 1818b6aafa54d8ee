#!/usr/bin/env bash
# launch-td.sh [OPTIONS]: boots the enclave image as an Intel TDX guest on this host, after
# checking the image (every file against its SHA256SUMS; optionally its measurements against
# the published file) and the host (KVM with TDX on, QEMU >= 10.1). systemd runs it as
# svc-enclave-host.service (tools/systemd/); docs/operations.md step 2.
#
# The QEMU arguments are those of the image's own launch.sh (image/launch.sh.in), so the TD
# gets the RTMR0 of the host profile captured with them (docs/auditing.md §6). Only the
# memory, the vCPUs, the host port and the quote service's port can be changed here; memory
# and vCPUs make another host profile, whose RTMR0 must be captured and published first.
#
# Options (the environment variable of each, for the unit's EnvironmentFile, in brackets):
#   --image DIR               the image folder: image/out copied to this host [SVC_IMAGE_DIR]
#   --memory SIZE             guest memory, as QEMU's -m (default 4G) [SVC_TD_MEMORY]
#   --cpus N                  vCPUs (default 2) [SVC_TD_CPUS]
#   --port PORT               host port on 127.0.0.1 forwarded to the enclave's 7070 (default
#                             7070; one per enclave on a host) [SVC_TD_PORT]
#   --qgs-port PORT           vsock port of the host's quote generation service (default 4050)
#                             [SVC_QGS_PORT]
#   --expect-measurements F   refuse an image whose measurements.json is not F, the file
#                             clients verify against [SVC_EXPECT_MEASUREMENTS]
#   --dry-run                 check the image, print the QEMU command one argument per line,
#                             and exit (no host checks)
set -euo pipefail

die() { echo "launch-td.sh: $*" >&2; exit 1; }

IMAGE=${SVC_IMAGE_DIR:-}
MEMORY=${SVC_TD_MEMORY:-4G}
CPUS=${SVC_TD_CPUS:-2}
PORT=${SVC_TD_PORT:-7070}
QGS_PORT=${SVC_QGS_PORT:-4050}
EXPECT=${SVC_EXPECT_MEASUREMENTS:-}
DRY_RUN=0
while [ $# -gt 0 ]; do
  case $1 in
    --image) IMAGE=${2:?--image needs a folder}; shift 2 ;;
    --memory) MEMORY=${2:?--memory needs a size}; shift 2 ;;
    --cpus) CPUS=${2:?--cpus needs a number}; shift 2 ;;
    --port) PORT=${2:?--port needs a port}; shift 2 ;;
    --qgs-port) QGS_PORT=${2:?--qgs-port needs a port}; shift 2 ;;
    --expect-measurements) EXPECT=${2:?--expect-measurements needs a file}; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (--help lists the options)" ;;
  esac
done

# Values go into QEMU arguments: accept only their plain shapes.
[ -n "$IMAGE" ] || die "--image (or SVC_IMAGE_DIR) is required"
[[ $MEMORY =~ ^[0-9]+[MGT]?$ ]] || die "--memory: expected a size such as 4G, not '$MEMORY'"
[[ $CPUS =~ ^[1-9][0-9]{0,2}$ ]] || die "--cpus: expected a number, not '$CPUS'"
[[ $PORT =~ ^[1-9][0-9]{0,4}$ ]] && [ "$PORT" -le 65535 ] || die "--port: expected a port, not '$PORT'"
[[ $QGS_PORT =~ ^[1-9][0-9]{0,4}$ ]] || die "--qgs-port: expected a port, not '$QGS_PORT'"

# The image: every file as built (SHA256SUMS lists OVMF.fd, vmlinuz, initrd.cpio, cmdline,
# launch.sh and measurements.json), and the measurements the clients hold.
cd "$IMAGE" 2>/dev/null || die "$IMAGE: no such folder"
[ -f SHA256SUMS ] || die "$IMAGE/SHA256SUMS is missing: copy the whole image/out folder"
for f in OVMF.fd vmlinuz initrd.cpio cmdline; do
  grep -q "  $f\$" SHA256SUMS || die "$IMAGE/SHA256SUMS does not list $f"
done
sha256sum --quiet --strict -c SHA256SUMS >&2 || die "$IMAGE: a file differs from SHA256SUMS; not launching"
if [ -n "$EXPECT" ]; then
  cmp -s measurements.json "$EXPECT" ||
    die "$IMAGE/measurements.json differs from $EXPECT: this is not the published image; not launching"
fi
CMDLINE=$(cat cmdline)

ARGS=(
  -accel kvm -cpu host -m "$MEMORY" -smp "$CPUS" -nodefaults -nographic
  -machine q35,kernel-irqchip=split,confidential-guest-support=tdx0,hpet=off
  -object "{\"qom-type\":\"tdx-guest\",\"id\":\"tdx0\",\"quote-generation-socket\":{\"type\":\"vsock\",\"cid\":\"2\",\"port\":\"$QGS_PORT\"}}"
  -bios OVMF.fd -kernel vmlinuz -initrd initrd.cpio -append "$CMDLINE"
  -serial stdio
  -netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$PORT-:7070" -device virtio-net-pci,netdev=n0
)
if [ "$DRY_RUN" = 1 ]; then
  printf '%s\n' qemu-system-x86_64 "${ARGS[@]}"
  exit 0
fi

# The host: KVM with TDX on, and a QEMU that knows tdx-guest.
[ -r /dev/kvm ] && [ -w /dev/kvm ] || die "/dev/kvm is missing or not read-write for $(id -un)"
[ "$(cat /sys/module/kvm_intel/parameters/tdx 2>/dev/null)" = Y ] ||
  die "TDX is off: /sys/module/kvm_intel/parameters/tdx is not Y (a TDX host kernel, kvm_intel tdx=1)"
QEMU_VERSION=$(qemu-system-x86_64 --version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9]*\.[0-9]*\).*/\1/p')
[ -n "$QEMU_VERSION" ] || die "qemu-system-x86_64 not found"
at_least() { [ "$(printf '%s\n%s\n' "$1" "$QEMU_VERSION" | sort -V | head -n1)" = "$1" ]; }
at_least 10.1 || die "QEMU $QEMU_VERSION has no tdx-guest; 10.1 or newer is needed"
at_least 10.2 || echo "launch-td.sh: warning: QEMU $QEMU_VERSION patches the kernel before measuring it, so RTMR1 will not match the published value (docs/auditing.md); use 10.2 or newer" >&2

echo "launch-td.sh: $IMAGE (measurements $(sha256sum measurements.json | cut -c1-16)…), ${MEMORY} memory, ${CPUS} vCPUs, enclave on 127.0.0.1:$PORT" >&2
exec qemu-system-x86_64 "${ARGS[@]}"
