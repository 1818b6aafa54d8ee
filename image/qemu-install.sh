#!/usr/bin/env bash
# Usage: image/qemu-install.sh
#
# Ensures qemu-system-x86_64 >= 10.0 (the boot test and, later, TDX launch need a recent QEMU).
# No-op when already present. On Debian 12 (bookworm) the stock 7.2 also conflicts with a backports
# qemu-utils 10.x, so install from bookworm-backports, adding that source entry only if it is absent.
# Newer Debian releases ship >= 10.0 in their main suite.
set -euo pipefail
# shellcheck source=image/lib.sh
. "$(dirname "$0")/lib.sh"

MIN_MAJOR=10

qemu_version() { qemu-system-x86_64 --version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9.]*\).*/\1/p'; }

v=$(qemu_version || true)
if [[ -n $v && ${v%%.*} -ge $MIN_MAJOR ]]; then
    log "qemu-system-x86_64 $v already installed"
    exit 0
fi
log "qemu-system-x86_64 ${v:-missing}; installing >= $MIN_MAJOR.0"

sudo=(); ((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
. /etc/os-release
target=()
if [[ ${VERSION_CODENAME:-} == bookworm ]]; then
    if ! grep -rqs --include='*.list' --include='*.sources' --include=sources.list \
        'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        log "adding bookworm-backports to /etc/apt/sources.list.d/bookworm-backports.sources"
        printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm-backports' \
            'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
            "${sudo[@]}" tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
    fi
    target=(-t bookworm-backports)
fi
log "apt-get update + install qemu-system-x86 ${target[*]}"
"${sudo[@]}" apt-get update -qq
# Recommends (GUI, ovmf, block extras) stay off; Depends bring seabios and ipxe-qemu (virtio-net-pci's ROM).
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${target[@]}" qemu-system-x86 >/dev/null

v=$(qemu_version || true)
[[ -n $v && ${v%%.*} -ge $MIN_MAJOR ]] || die "installed qemu-system-x86_64 is ${v:-missing}, need >= $MIN_MAJOR.0"
log "qemu-system-x86_64 $v installed"
