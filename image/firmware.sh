#!/usr/bin/env bash
# Usage: image/firmware.sh [--prebuilt] OUTDIR
#
# Writes OUTDIR/OVMF.fd: the single unified TDVF image for QEMU `-bios`.
#  default     build OvmfPkg/IntelTdx/IntelTdxX64.dsc (RELEASE, GCC5, X64, Secure Boot off, edk2 defaults)
#              from the pinned Debian edk2 orig tarball + Debian's patch series. ~3-4 min on 2 cores.
#              Cached in .cache/image/firmware-<sha256 of inputs+scripts+toolchain>/, so reruns are instant.
#  --prebuilt  fallback: the unified 4 MiB OVMF.fd from the pinned Debian ovmf .deb (general-purpose
#              OvmfPkgX64 "Config-A" build; it carries TDVF metadata but has the network stack, TPM, shell).
#
# Reproducibility: the edk2 build embeds its build path, so it always builds at the same fixed path
# (EDK2_BUILD_DIR, default /var/tmp/svc-edk2-build). Same path + same host toolchain => bit-identical
# output; a different path gives a different image (and different MRTD).
set -euo pipefail
# shellcheck source=image/lib.sh
. "$(dirname "$0")/lib.sh"

prebuilt=0 outdir=
for a in "$@"; do
    case $a in
    --prebuilt) prebuilt=1 ;;
    -*) die "unknown option $a" ;;
    *) [[ -z $outdir ]] || die "usage: $0 [--prebuilt] OUTDIR"; outdir=$a ;;
    esac
done
[[ -n $outdir ]] || die "usage: $0 [--prebuilt] OUTDIR"
mkdir -p "$outdir"

if ((prebuilt)); then
    deb=$(input_name 'ovmf_*_all.deb')
    verify_inputs "$deb"
    tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
    dpkg-deb -x "$IMAGE_INPUTS/$deb" "$tmp"
    fd=$tmp/usr/share/ovmf/OVMF.fd
    [[ $(stat -c %s "$fd") -eq 4194304 ]] || die "$deb: usr/share/ovmf/OVMF.fd is not the 4 MiB unified image"
    install -m 0644 "$fd" "$outdir/OVMF.fd"
    log "prebuilt OVMF.fd from $deb: $(sha256sum <"$outdir/OVMF.fd" | cut -d' ' -f1)"
    exit 0
fi

orig=$(input_name 'edk2_*.orig.tar.xz')
debtar=$(input_name 'edk2_*.debian.tar.xz')
verify_inputs "$orig" "$debtar"
need_pkgs build-essential nasm acpica-tools uuid-dev python3 xz-utils patch util-linux

BUILD_DIR=${EDK2_BUILD_DIR:-/var/tmp/svc-edk2-build}
DSC=OvmfPkg/IntelTdx/IntelTdxX64.dsc
BUILD_ARGS=(-a X64 -t GCC5 -b RELEASE -p "$DSC")

# The cache key covers everything that can change the output: inputs, these scripts, build path and args,
# and the host toolchain (a newer gcc gives a different but equally valid binary).
toolchain=$(gcc --version | head -1; ld --version | head -1; nasm -v; iasl -v 2>&1 | grep -i version; python3 --version)
key=$(printf '%s\n' "$(cat "$IMAGE_DIR/firmware.sh" "$IMAGE_DIR/lib.sh")" \
    "$(input_sha256 "$orig") $orig" "$(input_sha256 "$debtar") $debtar" \
    "$BUILD_DIR" "${BUILD_ARGS[*]}" "$toolchain" | sha256sum | cut -d' ' -f1)
cache=$IMAGE_CACHE/firmware-$key

if [[ ! -f $cache/OVMF.fd ]]; then
    # One build at a time at the fixed path.
    mkdir -p "$(dirname "$BUILD_DIR")"
    exec 9>"$BUILD_DIR.lock"; flock 9
fi
if [[ ! -f $cache/OVMF.fd ]]; then
    start=$SECONDS
    log "building TDVF at $BUILD_DIR (cache miss $key; ~3-4 min on 2 cores)"
    rm -rf "$BUILD_DIR"; mkdir -p "$BUILD_DIR" "$IMAGE_CACHE"
    logf=$IMAGE_CACHE/firmware-$key.log
    : >"$logf"
    (
        cd "$BUILD_DIR"
        tar -xJf "$IMAGE_INPUTS/$orig" --strip-components=1
        tar -xJf "$IMAGE_INPUTS/$debtar"   # -> debian/
        # Debian's quilt series, in order (comments and blank lines skipped; -pN options honoured).
        while read -r p rest; do
            [[ -z $p || $p == \#* ]] && continue
            read -r -a opts <<<"$rest"
            echo "applying $p" >>"$logf"
            patch -s -N -p1 "${opts[@]}" --no-backup-if-mismatch <"debian/patches/$p" >>"$logf" 2>&1 ||
                { echo "patch $p failed" >&2; exit 1; }
        done <debian/patches/series
        echo "patches applied; building BaseTools" >&2
        unset WORKSPACE EDK_TOOLS_PATH CONF_PATH PACKAGES_PATH ELF_PACKAGE_METADATA
        export PYTHON_COMMAND=python3
        # edksetup.sh parses "$@" (so clear our args) and is not nounset-clean.
        # shellcheck disable=SC1091
        set -- && set +u && . ./edksetup.sh >>"$logf" 2>&1 && set -u
        make -C BaseTools -j"$(nproc)" >>"$logf" 2>&1
        echo "building $DSC (log: $logf)" >&2
        build "${BUILD_ARGS[@]}" -n "$(nproc)" >>"$logf" 2>&1
    ) || { tail -n 30 "$logf" >&2; die "firmware build failed (full log: $logf)"; }
    fd=$BUILD_DIR/Build/IntelTdx/RELEASE_GCC5/FV/OVMF.fd
    [[ -f $fd ]] || die "build finished but $fd is missing"
    # Publish atomically so an interrupted run never leaves a half-filled cache entry.
    tmpc=$(mktemp -d "$IMAGE_CACHE/.firmware-XXXXXX")
    cp "$fd" "$tmpc/OVMF.fd"
    printf 'build_dir %s\nargs %s\n%s\n%s  %s\n%s  %s\n' "$BUILD_DIR" "${BUILD_ARGS[*]}" "$toolchain" \
        "$(input_sha256 "$orig")" "$orig" "$(input_sha256 "$debtar")" "$debtar" >"$tmpc/build-info.txt"
    chmod 0755 "$tmpc"; chmod 0644 "$tmpc"/*
    rm -rf "$cache"; mv "$tmpc" "$cache"; mv "$logf" "$cache/build.log"
    rm -rf "$BUILD_DIR"   # ~1 GB of objects; the cache holds the result
    log "built in $((SECONDS - start)) s"
fi

install -m 0644 "$cache/OVMF.fd" "$outdir/OVMF.fd"
log "OVMF.fd (IntelTdxX64, from source): $(sha256sum <"$outdir/OVMF.fd" | cut -d' ' -f1)"
