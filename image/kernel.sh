#!/usr/bin/env bash
# Usage: image/kernel.sh OUTDIR
#
# From the pinned Debian kernel .deb, writes:
#   OUTDIR/vmlinuz          the EFI-stub kernel, byte-for-byte as shipped (RTMR1 is its Authenticode hash)
#   OUTDIR/<name>.ko.xz     the loadable modules the enclave init needs, plus their dependencies
#   OUTDIR/modules.order    those file names, one per line, in load order (dependencies first)
# KERNEL_MODULES overrides the wanted set (default: configfs-tsm for quotes + virtio NIC). Modules the
# kernel has built in are skipped. The .deb ships no modules.dep, so dependencies come from each module's
# own modinfo "depends=" field.
set -euo pipefail
# shellcheck source=image/lib.sh
. "$(dirname "$0")/lib.sh"

(($# == 1)) || die "usage: $0 OUTDIR"
outdir=$1
WANT=${KERNEL_MODULES:-configfs tsm tdx_guest virtio_net}

deb=$(input_name 'linux-image-*.deb')
verify_inputs "$deb"
need_pkgs kmod xz-utils   # modinfo reads .ko.xz

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$IMAGE_INPUTS/$deb" "$tmp"
vmlinuz=$(echo "$tmp"/boot/vmlinuz-*)
config=$(echo "$tmp"/boot/config-*)
kver=${vmlinuz##*/vmlinuz-}
moddir=$tmp/usr/lib/modules/$kver
[[ -f $vmlinuz && -f $config && -d $moddir ]] || die "$deb: unexpected layout (no boot/vmlinuz-*, config or usr/lib/modules)"

# Module name (dashes normalised to underscores) -> file, and the built-in set.
declare -A file_of=() seen=()
while IFS= read -r f; do
    b=${f##*/}; b=${b%%.ko*}; file_of[${b//-/_}]=$f
done < <(find "$moddir/kernel" -name '*.ko*' | sort)
builtin=$(sed 's#.*/##; s#\.ko$##; s#-#_#g' "$moddir/modules.builtin")

# Depth-first, dependencies before dependents; each module once.
order=()
add() {
    local m=${1//-/_} d
    [[ -z ${seen[$m]:-} ]] || return 0
    seen[$m]=1
    if grep -qx "$m" <<<"$builtin"; then log "$m: built in"; return 0; fi
    [[ -n ${file_of[$m]:-} ]] || die "module $m is neither built in nor in $deb"
    [[ -z $(modinfo -F softdep "${file_of[$m]}") ]] || log "warning: $m has softdeps, not followed"
    for d in $(modinfo -F depends "${file_of[$m]}" | tr ',' ' '); do add "$d"; done
    order+=("$m")
}
for m in $WANT; do add "$m"; done

mkdir -p "$outdir"
install -m 0644 "$vmlinuz" "$outdir/vmlinuz"
rm -f "$outdir"/*.ko "$outdir"/*.ko.xz "$outdir"/*.ko.zst   # drop modules from an earlier, different set
: >"$outdir/modules.order"
for m in "${order[@]}"; do
    f=${file_of[$m]}
    install -m 0644 "$f" "$outdir/${f##*/}"
    echo "${f##*/}" >>"$outdir/modules.order"
done

log "kernel $kver, vmlinuz sha256 $(sha256sum <"$outdir/vmlinuz" | cut -d' ' -f1)"
log "load order: $(tr '\n' ' ' <"$outdir/modules.order")"
for o in VIRTIO_PCI VIRTIO_NET TSM_REPORTS TDX_GUEST_DRIVER CONFIGFS_FS MODULE_DECOMPRESS IP_PNP VSOCKETS \
    VIRTIO_VSOCKETS EFI_STUB EFI_HANDOVER_PROTOCOL; do
    log "  CONFIG_$o=$(sed -n "s/^CONFIG_$o=//p" "$config" | grep . || echo 'not set')"
done
