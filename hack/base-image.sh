#!/usr/bin/env bash
# A minimal Debian image for the lab's Docker engine, made here because nothing can be pulled.
#
#   hack/base-image.sh [IMAGE [PACKAGES]]   default: kindlab/debian-minbase:bookworm iproute2
#   hack/base-image.sh --tarball [IMAGE [PACKAGES]]   print where that tarball is cached
#
# Builds a root filesystem with `debootstrap --variant=minbase bookworm` plus PACKAGES
# (comma-separated Debian packages) from
# the Debian mirror apt already uses (first URI in /etc/apt/sources.list*, or
# $KINDLAB_DEBIAN_MIRROR), caches it as a tarball under ~/.cache/kindlab/images/, and
# `docker import`s it, labelled with the tarball's name, unless the engine already has IMAGE made
# from that root filesystem (then nothing is built). A second run reuses the tarball; delete it to
# rebuild. Installs Debian's debootstrap when missing. Run as root.
set -euo pipefail

PRINT_TARBALL=0  # --tarball: print the cached tarball's path for IMAGE/PACKAGES and exit
if [ "${1:-}" = "--tarball" ]; then PRINT_TARBALL=1; shift; fi
IMAGE="${1:-kindlab/debian-minbase:bookworm}"
SUITE="bookworm"
INCLUDE="${2:-iproute2}"
CACHE="${KINDLAB_IMAGE_CACHE:-$HOME/.cache/kindlab/images}"
# One cached tarball per package list (its hash keeps the name short).
TARBALL="$CACHE/debian-$SUITE-minbase-$(printf '%s' "$INCLUDE" | sha256sum | cut -c1-12).tar"

if [ "$PRINT_TARBALL" = 1 ]; then echo "$TARBALL"; exit 0; fi
me="$(basename "$0")"
say() { printf '%s: %s\n' "$me" "$*" >&2; }
die() { printf '%s: error: %s\n' "$me" "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap and docker import need it)"

# debian_mirror: the first non-security Debian URI apt is configured with.
debian_mirror() {
    if [ -n "${KINDLAB_DEBIAN_MIRROR:-}" ]; then echo "$KINDLAB_DEBIAN_MIRROR"; return; fi
    local uri
    uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
        | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break } }' \
        | grep -v security | head -n 1 || true)"
    if [ -z "$uri" ]; then
        uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null \
            | awk '$1 == "URIs:" { for (i = 2; i <= NF; i++) print $i }' \
            | grep -v security | head -n 1 || true)"
    fi
    [ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list*; set KINDLAB_DEBIAN_MIRROR"
    echo "$uri"
}

# cleanup_work: unmount what debootstrap left mounted under $WORK, then delete it.
WORK=""
cleanup_work() {
    [ -n "$WORK" ] || return 0
    awk -v d="$WORK/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r | xargs -r umount -l
    rm -rf --one-file-system "$WORK"
}

build_tarball() {
    command -v debootstrap >/dev/null || {
        say "installing Debian's debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
    }
    local mirror
    mirror="$(debian_mirror)"
    mkdir -p "$CACHE"
    WORK="$(mktemp -d /var/tmp/kindlab-rootfs.XXXXXX)"
    # debootstrap mounts /proc and /sys in the target while it works; never delete through them.
    trap cleanup_work EXIT
    say "debootstrap --variant=minbase --include=$INCLUDE $SUITE from $mirror"
    debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$WORK/rootfs" "$mirror" >"$WORK/log" 2>&1 \
        || { tail -n 20 "$WORK/log" >&2; die "debootstrap failed"; }
    # Smaller image, and no cached package lists from this machine.
    rm -rf "$WORK/rootfs/var/cache/apt/archives/"*.deb "$WORK/rootfs/var/lib/apt/lists/"*
    tar --numeric-owner --xattrs -C "$WORK/rootfs" -cf "$TARBALL.tmp" .
    mv "$TARBALL.tmp" "$TARBALL"
    say "cached $TARBALL ($(du -h "$TARBALL" | cut -f1))"
}

# The image carries the name of the root filesystem it was made from (suite and packages): an engine
# that already holds it needs no debootstrap, and one made from another package list is made again.
LABEL="io.kindlab.rootfs"
ROOTFS="$(basename "$TARBALL" .tar)"
if [ "$(docker image inspect -f "{{ index .Config.Labels \"$LABEL\" }}" "$IMAGE" 2>/dev/null)" = "$ROOTFS" ]; then
    say "$IMAGE is already in the engine ($ROOTFS)"
    exit 0
fi
[ -s "$TARBALL" ] || build_tarball
say "docker import $TARBALL $IMAGE"
docker import --change 'CMD ["/bin/bash"]' --change "LABEL $LABEL=$ROOTFS" "$TARBALL" "$IMAGE" >/dev/null
