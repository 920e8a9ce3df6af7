#!/usr/bin/env bash
# Builds the patched siw.ko (patches/siw/: RFC 7306 Atomics and Immediate Data behind the
# rfc7306 module parameter, plus the Terminate layout fix) for the guest kernel that
# guest-assets.sh prepared, next to the stock one:
#   $RDMA_INTEROP_CACHE/siw-rfc7306/<kver>/siw.ko       the build, keyed by kernel + patches
#   $RDMA_INTEROP_CACHE/guest/<kver>/siw-rfc7306.ko     link the guest loads it by
#                                                       (scripts/guest/siw-module.sh)
#   $RDMA_INTEROP_CACHE/guest/<kver>/siw-rfc7306-rdma-core  link to rdma-core 56.1 built
#                                                       with patches/rdma-core/ (libsiw)
# The stock siw.ko stays what modprobe loads; this one is insmod-ed on request only. Same
# recipe as the stock build (kernel-runtime.md): linux-source + headers + kbuild of the
# exact kernel version, downloaded with apt-get download and unpacked, never installed.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

guest_cache="$RDMA_INTEROP_CACHE/guest"
[ -L "$guest_cache/current" ] || die "no guest assets yet: run scripts/setup/guest-assets.sh first"
kver=$(basename "$(readlink "$guest_cache/current")")   # 6.1.0-56-amd64
abi=${kver%-amd64}                                      # 6.1.0-56
pkg_version=$(cut -d' ' -f1 "$guest_cache/$kver/.complete")
series=$(cut -d. -f1,2 <<<"$pkg_version")
patch_dir="$RDMA_INTEROP_ROOT/patches/siw"
out="$RDMA_INTEROP_CACHE/siw-rfc7306/$kver"
mkdir -p "$out"

exec 9>"$out/.lock"
flock 9

# Bump when the recipe below changes.
recipe=1
key=$( { echo "$pkg_version recipe-$recipe"; cat "$patch_dir"/*.patch; } | sha256sum | cut -c1-16)
# The matching libsiw: rdma-core 56.1 with patches/rdma-core/ (its own cache and key).
rdma_core=$(bash "$RDMA_INTEROP_ROOT/scripts/setup/rdma-core.sh" 56.1 "$RDMA_INTEROP_ROOT/patches/rdma-core" | tail -n1)
[ -d "$rdma_core/lib" ] || die "the patched rdma-core build is missing ($rdma_core)"
ln -sfn "$rdma_core" "$guest_cache/$kver/siw-rfc7306-rdma-core"

if [ "$(cat "$out/.complete" 2>/dev/null)" = "$key" ] && [ -f "$out/siw.ko" ]; then
  ln -sfn "$out/siw.ko" "$guest_cache/$kver/siw-rfc7306.ko"
  note "patched siw.ko for $kver: cached"
  exit 0
fi

work="$out/work"
rm -rf "$work" "$out/siw.ko" "$out/.complete"
mkdir -p "$work/debs" "$work/root"
trap 'rm -rf "$work"' EXIT

step "downloading linux-source-$series, headers and kbuild $pkg_version for the patched siw.ko"
(
  cd "$work/debs"
  apt-get download -q \
    "linux-headers-$kver=$pkg_version" \
    "linux-headers-$abi-common=$pkg_version" \
    "linux-kbuild-$series=$pkg_version" \
    "linux-source-$series=$pkg_version" 2>&1 | grep -v -e '^Get:' -e 'unsandboxed' -e '^Fetched' || true
)
ls "$work"/debs/linux-source-*.deb >/dev/null 2>&1 || die "download of linux-source-$series failed"
step_done "download"

step "applying patches/siw/ and building the patched siw.ko"
for deb in "$work"/debs/linux-headers-*.deb "$work"/debs/linux-kbuild-*.deb; do
  dpkg-deb -x "$deb" "$work/root"
done
dpkg-deb --fsys-tarfile "$work"/debs/linux-source-*.deb |
  tar -x -C "$work" --wildcards './usr/src/linux-source-*.tar.xz'
tarball=$(ls "$work"/usr/src/linux-source-*.tar.xz)
top=$(basename "$tarball" .tar.xz)
tar -xJf "$tarball" -C "$work" "$top/drivers/infiniband/sw/siw" "$top/include/uapi/rdma/siw-abi.h"
for p in "$patch_dir"/*.patch; do
  patch -s -p1 --no-backup-if-mismatch -d "$work/$top" <"$p" ||
    die "$(basename "$p") does not apply to linux-source $pkg_version"
done
headers="$work/root/usr/src/linux-headers-$kver"
sed -i "s|/usr/src/linux-headers-$abi-common|$work/root/usr/src/linux-headers-$abi-common|g" "$headers/Makefile"
# An out-of-tree build sees the headers package's <rdma/siw-abi.h>; the patched uapi header
# goes first (its include guard then keeps the other one out).
make -s -C "$headers" M="$work/$top/drivers/infiniband/sw/siw" CONFIG_RDMA_SIW=m \
  KCFLAGS="-include $work/$top/include/uapi/rdma/siw-abi.h" modules >"$out/build.log" 2>&1 ||
  { tail -n 30 "$out/build.log" >&2; die "patched siw.ko build failed (log: $out/build.log)"; }
cp "$work/$top/drivers/infiniband/sw/siw/siw.ko" "$out/siw.ko"
step_done "patched siw.ko"

echo "$key" >"$out/.complete"
ln -sfn "$out/siw.ko" "$guest_cache/$kver/siw-rfc7306.ko"
note "patched siw.ko for $kver ready in $out"
