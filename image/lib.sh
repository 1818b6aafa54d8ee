# shellcheck shell=bash
# Shared helpers for image/*.sh. Source it; do not execute it.
#
#   IMAGE_INPUTS   pinned inputs + SHA256SUMS (default: <repo>/../shared/image-inputs)
#   IMAGE_CACHE    build cache (default: ~/.cache/svc-image)

IMAGE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo() { (cd "$IMAGE_DIR/.." && pwd); }
IMAGE_INPUTS=${IMAGE_INPUTS:-$(repo)/../shared/image-inputs}
# Machine-wide, so fresh clones (CI) reuse a firmware built from the same inputs.
IMAGE_CACHE=${IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-image}

# Pin the locale, timezone and umask so that tools behave identically on every run.
export LC_ALL=C TZ=UTC
umask 022

log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }

# verify_inputs [NAME...]: check the named inputs (default: every file listed in SHA256SUMS) against
# SHA256SUMS. Nothing may be used from IMAGE_INPUTS before this passed.
verify_inputs() {
    local sums="$IMAGE_INPUTS/SHA256SUMS" want name got f names
    [[ -r $sums ]] || die "missing $sums (set IMAGE_INPUTS?)"
    if (($# == 0)); then mapfile -t names < <(awk '{sub(/^\*/, "", $2); print $2}' "$sums"); set -- "${names[@]}"; fi
    for name in "$@"; do
        want=$(awk -v n="$name" '$2 == n || $2 == "*" n {print $1}' "$sums")
        [[ -n $want ]] || die "input $name is not listed in $sums"
        f="$IMAGE_INPUTS/$name"
        [[ -f $f ]] || die "input $name is missing from $IMAGE_INPUTS"
        got=$(sha256sum <"$f" | cut -d' ' -f1)
        [[ $got == "$want" ]] || die "input $name: sha256 $got does not match SHA256SUMS ($want)"
    done
}

# input_name GLOB: the single file name in SHA256SUMS matching GLOB (so a version bump only edits SHA256SUMS).
input_name() {
    local matches
    matches=$(awk '{sub(/^\*/, "", $2); print $2}' "$IMAGE_INPUTS/SHA256SUMS" | while read -r n; do
        # shellcheck disable=SC2053  # glob match is intended
        [[ $n == $1 ]] && echo "$n"
    done)
    [[ -n $matches && $(wc -l <<<"$matches") -eq 1 ]] || die "expected exactly one input matching '$1' in SHA256SUMS, got: ${matches:-none}"
    echo "$matches"
}

# input_sha256 NAME: the pinned sha256 of an input (from SHA256SUMS; run verify_inputs first).
input_sha256() { awk -v n="$1" '$2 == n || $2 == "*" n {print $1}' "$IMAGE_INPUTS/SHA256SUMS"; }

# need_pkgs PKG...: apt-get install whatever is not installed yet (no-op, and no network, when all are).
need_pkgs() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    ((${#missing[@]} == 0)) && return 0
    log "installing ${missing[*]}"
    local sudo=(); ((EUID == 0)) || sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" ||
        { "${sudo[@]}" apt-get update && "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; }
}
