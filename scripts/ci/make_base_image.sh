#!/usr/bin/env bash
# Make a Debian base image locally, for machines that cannot reach a container registry (CI, air-gapped sites).
#   usage: scripts/ci/make_base_image.sh IMAGE_NAME [SUITE]      e.g. debian:bookworm-slim bookworm
# debootstrap (minbase) builds the root file system, `docker import` turns it into IMAGE_NAME. The tarball is
# cached under .ci/cache/ so a second run on the same machine only imports it. Needs root and a running engine.
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE="${1:?usage: $0 IMAGE_NAME [SUITE]   (for example: $0 debian:bookworm-slim bookworm)}"
SUITE="${2:-bookworm}"
MIRROR="${VERL_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
ARCH="$(dpkg --print-architecture)"
CACHE_DIR="${VERL_CI_CACHE:-.ci/cache}"
TARBALL="$CACHE_DIR/debootstrap-${SUITE}-minbase-${ARCH}.tar"

log() { echo "[base-image] $*" >&2; }

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  log "$IMAGE already present"
  exit 0
fi

if [ ! -s "$TARBALL" ]; then
  command -v debootstrap >/dev/null || { log "debootstrap is missing: apt-get install debootstrap"; exit 1; }
  mkdir -p "$CACHE_DIR"
  ROOTFS="$(mktemp -d)"
  trap 'rm -rf "$ROOTFS"' EXIT
  log "debootstrap --variant=minbase $SUITE from $MIRROR (about a minute)"
  debootstrap --variant=minbase --arch="$ARCH" "$SUITE" "$ROOTFS" "$MIRROR" >"$CACHE_DIR/debootstrap.log" 2>&1 \
    || { log "debootstrap failed; last lines of $CACHE_DIR/debootstrap.log:"; tail -n 20 "$CACHE_DIR/debootstrap.log" >&2; exit 1; }
  # Match the official slim image: the three usual suites, no package lists or caches in the layer.
  cat >"$ROOTFS/etc/apt/sources.list" <<SOURCES
deb ${MIRROR} ${SUITE} main
deb ${MIRROR} ${SUITE}-updates main
deb ${MIRROR%/debian}/debian-security ${SUITE}-security main
SOURCES
  rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/cache/apt/archives/*.deb
  tar -C "$ROOTFS" --numeric-owner -cf "$TARBALL.partial" .
  mv "$TARBALL.partial" "$TARBALL"
fi

log "importing $TARBALL as $IMAGE"
docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' "$TARBALL" "$IMAGE" >/dev/null
log "$IMAGE ready ($(docker image inspect --format '{{.Size}}' "$IMAGE" | numfmt --to=iec))"
