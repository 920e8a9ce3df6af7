#!/usr/bin/env bash
# The container runtime's set-up (`rdma-interop docker build` / `docker run`), idempotent:
#   1. Debian's docker.io (dockerd, containerd, runc) and debootstrap, only if missing;
#   2. the local base image's root file system as a tar, made once with debootstrap
#      (Debian bookworm, minbase: the release of the guest's root, so the container has
#      the same rdma-core as a run directly in the guest) and cached:
#        $RDMA_INTEROP_CACHE/docker/base/debian-bookworm-minbase.tar
#      (Node 26 comes into the image from the npm registry: docker/install-node.sh)
#      `rdma-interop docker build` imports it (`docker import`) into the project's own
#      dockerd when no registry is reachable; a machine with a registry can build
#      FROM node:26-bookworm-slim instead (docs/docker.md) and never needs this tar.
# dockerd itself is NOT started here: the CLI starts and stops its own (src/runtime/docker/).
# RDMA_INTEROP_DEBIAN_MIRROR overrides the mirror (default: the first deb.debian.org-style
# URI of this machine's apt sources, else http://deb.debian.org/debian).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

suite=bookworm
packages=(docker.io debootstrap)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    note "error: missing Debian packages for the container runtime: ${missing[*]}"
    note "install them as root, then run the set-up again:"
    note "  sudo apt-get install -y --no-install-recommends ${missing[*]}"
    exit 3
  fi
  step "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  }
  step_done "apt-get install"
else
  note "container runtime packages: ${packages[*]} present"
fi

base_dir="$RDMA_INTEROP_CACHE/docker/base"
tarball="$base_dir/debian-$suite-minbase.tar"
# Bump when the recipe changes, so an older tar is rebuilt.
recipe="$suite minbase recipe-1"
if [ -f "$tarball" ] && [ "$(cat "$tarball.stamp" 2>/dev/null)" = "$recipe" ]; then
  note "base image root ($suite minbase): cached ($(du -h "$tarball" | cut -f1))"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || die "debootstrap needs root: run the set-up as root"

mirror="${RDMA_INTEROP_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
fi
mkdir -p "$base_dir"
exec 9>"$base_dir/.lock"
flock 9
rootfs="$base_dir/rootfs"
rm -rf "$rootfs" "$tarball" "$tarball.stamp"
step "debootstrap --variant=minbase $suite from $mirror (once; 0.5-4 min)"
log="$base_dir/debootstrap.log"
# Progress: one line per debootstrap stage (its I: lines), the full log in a file.
if ! debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" 2>&1 | tee "$log" |
  grep --line-buffered -E '^I: (Retrieving InRelease|Validating Packages|Resolving dependencies of base|Installing core packages|Unpacking required packages|Configuring required packages|Unpacking the base system|Configuring the base system|Base system installed)' |
  sed -u 's/^I: /[setup]   /' >&2; then
  die "debootstrap failed (log: $log)"
fi
grep -q '^I: Base system installed successfully' "$log" || die "debootstrap failed (log: $log)"
# No apt lists or caches in the image's base layer; the Dockerfile runs apt-get update.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar --numeric-owner -C "$rootfs" -cf "$tarball.partial" .
mv "$tarball.partial" "$tarball"
rm -rf "$rootfs"
echo "$recipe" >"$tarball.stamp"
step_done "base image root ($(du -h "$tarball" | cut -f1))"
