#!/usr/bin/env bash
# build-chroot.sh <suite>: a minimal Debian <suite> root with the compiler its kernel was
# built with, to build out-of-tree modules for kernels whose headers need a newer gcc and
# glibc than the host's (trixie-backports' 7.3 needs gcc 14; its kbuild tools link glibc
# 2.38). Made once with debootstrap (minbase) into
#   $RDMA_INTEROP_CACHE/chroot/<suite>
# and printed on the last stdout line. Needs root (debootstrap, chroot). Nothing on the
# host changes: the root lives in the git-ignored cache.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

[ $# -eq 1 ] || die "usage: build-chroot.sh <suite>"
suite=$1
case "$suite" in
  trixie) packages=gcc-14,make,libc6-dev,libelf1t64,libssl3t64,zlib1g,pahole,xz-utils,zstd ;;
  *) die "build-chroot.sh: no package set for suite '$suite'" ;;
esac
[ "$(id -u)" -eq 0 ] || die "building a $suite chroot for the kernel module build needs root (debootstrap)"
command -v debootstrap >/dev/null || die "debootstrap is missing (scripts/setup/apt.sh installs it)"

dir="$RDMA_INTEROP_CACHE/chroot/$suite"
stamp="$dir/.complete"
recipe="1 $packages"
mkdir -p "$RDMA_INTEROP_CACHE/chroot"
exec 7>"$RDMA_INTEROP_CACHE/chroot/.lock-$suite"
flock 7
if [ "$(cat "$stamp" 2>/dev/null)" != "$recipe" ]; then
  rm -rf "$dir"
  step "debootstrap $suite (minbase + $packages) into $dir"
  debootstrap --variant=minbase --include="$packages" \
    --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
    "$suite" "$dir" http://deb.debian.org/debian >"$dir.log" 2>&1 ||
    { tail -n 20 "$dir.log" >&2; die "debootstrap $suite failed (log: $dir.log)"; }
  rm -rf "$dir/var/cache/apt/archives"/*.deb
  echo "$recipe" >"$stamp"
  step_done "debootstrap $suite ($(du -sh "$dir" | cut -f1))"
else
  note "$suite build root: cached"
fi
echo "$dir"
