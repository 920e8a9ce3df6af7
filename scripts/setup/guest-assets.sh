#!/usr/bin/env bash
# Builds the QEMU guest's assets from Debian's own packages, cached by kernel version:
#   $RDMA_INTEROP_CACHE/guest/<abi>/vmlinuz        the kernel
#   $RDMA_INTEROP_CACHE/guest/<abi>/root/          the extracted modules (+ depmod, + siw.ko)
#   $RDMA_INTEROP_CACHE/guest/<abi>/initramfs.cpio.gz  busybox + the modules to mount 9p
#   $RDMA_INTEROP_CACHE/guest/current              -> <abi> (what the runner boots)
# The kernel is resolved from the linux-image-amd64 metapackage at set-up time (Debian
# bumps the ABI in security updates), never hard-coded. Nothing is installed on the host:
# packages are downloaded and unpacked with dpkg-deb -x.
# Debian does not build siw (CONFIG_RDMA_SIW is not set), so siw.ko is built out of tree
# from linux-source against the matching headers (kernel-runtime.md).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

guest_cache="$RDMA_INTEROP_CACHE/guest"
mkdir -p "$guest_cache"
# One build at a time per cache (a first `vm` in two terminals at once): the second waits,
# then finds the assets cached.
exec 9>"$guest_cache/.lock"
if ! flock -n 9; then
  note "another set-up is building the guest assets in $guest_cache: waiting for it"
  flock 9
fi

# --- resolve the kernel ------------------------------------------------------------------
# "Depends: linux-image-6.1.0-56-amd64 (= 6.1.192-2)" of the candidate metapackage.
resolve_depends() {
  apt-cache show --no-all-versions linux-image-amd64 2>/dev/null | sed -n 's/^Depends: //p' | head -n1
}
depends=$(resolve_depends)
if [ -z "$depends" ]; then
  # No package lists yet (a machine whose packages were all present, so apt.sh did not
  # update): fetch them once.
  [ "$(id -u)" -eq 0 ] ||
    die "apt has no package lists to resolve linux-image-amd64: run 'sudo apt-get update', then the set-up again"
  step "apt-get update (to resolve linux-image-amd64)"
  apt-get update -qq
  step_done "apt-get update"
  depends=$(resolve_depends)
fi
image_pkg=$(sed -E 's/^(linux-image-[^ ,]+).*/\1/' <<<"$depends")
pkg_version=$(sed -E 's/.*\(= ([^)]+)\).*/\1/' <<<"$depends")
[[ "$image_pkg" =~ ^linux-image-(.+)-amd64$ ]] || die "cannot resolve linux-image-amd64 (got '$depends'); run apt-get update?"
abi="${BASH_REMATCH[1]}"            # 6.1.0-56
kver="$abi-amd64"                   # 6.1.0-56-amd64, the modules directory name
series=$(cut -d. -f1,2 <<<"$pkg_version")   # 6.1

dir="$guest_cache/$kver"
stamp="$dir/.complete"
# Bump when the recipe below changes, so caches built by an older recipe are rebuilt.
recipe=2
if [ "$(cat "$stamp" 2>/dev/null)" = "$pkg_version recipe-$recipe" ]; then
  note "guest assets for $kver ($pkg_version): cached"
  ln -sfn "$kver" "$guest_cache/current"
  exit 0
fi

rm -rf "$dir"
mkdir -p "$dir/debs" "$dir/root"

# --- download -----------------------------------------------------------------------------
step "downloading Debian kernel $kver ($pkg_version), headers, kbuild and linux-source-$series"
(
  cd "$dir/debs"
  apt-get download -q \
    "linux-image-$kver=$pkg_version" \
    "linux-headers-$kver=$pkg_version" \
    "linux-headers-$abi-common=$pkg_version" \
    "linux-kbuild-$series=$pkg_version" \
    "linux-source-$series=$pkg_version" 2>&1 | grep -v -e '^Get:' -e 'unsandboxed' -e '^Fetched' || true
)
ls "$dir"/debs/linux-image-*.deb >/dev/null 2>&1 || die "download of the kernel packages failed"
step_done "download ($(du -sh "$dir/debs" | cut -f1))"

# --- extract --------------------------------------------------------------------------------
step "extracting the kernel, modules and build tree"
for deb in "$dir"/debs/linux-image-*.deb "$dir"/debs/linux-headers-*.deb "$dir"/debs/linux-kbuild-*.deb; do
  dpkg-deb -x "$deb" "$dir/root"
done
cp "$dir/root/boot/vmlinuz-$kver" "$dir/vmlinuz"
# The ELF kernel boots via PVH, about twice as fast under TCG; keep the bzImage as fallback.
python3 "$RDMA_INTEROP_ROOT/scripts/guest/extract-vmlinux.py" "$dir/vmlinuz" "$dir/vmlinux" ||
  note "no ELF kernel inside the bzImage; booting the bzImage"
step_done "extract"

# --- build siw.ko ---------------------------------------------------------------------------
step "building siw.ko from linux-source-$series against the $kver headers"
src_deb=$(ls "$dir"/debs/linux-source-*.deb)
mkdir -p "$dir/src"
dpkg-deb --fsys-tarfile "$src_deb" | tar -x -C "$dir/src" --wildcards './usr/src/linux-source-*.tar.xz'
tarball=$(ls "$dir"/src/usr/src/linux-source-*.tar.xz)
top=$(basename "$tarball" .tar.xz)
tar -xJf "$tarball" -C "$dir/src" "$top/drivers/infiniband/sw/siw"
siw_dir="$dir/src/$top/drivers/infiniband/sw/siw"
headers="$dir/root/usr/src/linux-headers-$kver"
common="$dir/root/usr/src/linux-headers-$abi-common"
# The arch headers' Makefile includes the -common tree by an absolute /usr/src path; point
# it at the extracted copy instead of installing anything under /usr/src.
sed -i "s|/usr/src/linux-headers-$abi-common|$common|g" "$headers/Makefile"
# The scripts/ and tools/ links into linux-kbuild are relative, so they resolve inside
# the extracted tree as they are.
make -s -C "$headers" M="$siw_dir" CONFIG_RDMA_SIW=m modules >"$dir/siw-build.log" 2>&1 ||
  { tail -n 30 "$dir/siw-build.log" >&2; die "siw.ko build failed (log: $dir/siw-build.log)"; }
mkdir -p "$dir/root/lib/modules/$kver/extra"
cp "$siw_dir/siw.ko" "$dir/root/lib/modules/$kver/extra/siw.ko"
step_done "siw.ko build"

# --- modules.dep ----------------------------------------------------------------------------
step "depmod"
depmod -b "$dir/root" "$kver"
step_done "depmod"

# --- initramfs --------------------------------------------------------------------------------
step "building the initramfs"
"$RDMA_INTEROP_ROOT/scripts/guest/make-initramfs.sh" "$dir/root" "$kver" "$dir/initramfs.cpio.gz"
step_done "initramfs ($(du -h "$dir/initramfs.cpio.gz" | cut -f1))"

# The big downloads are no longer needed once everything is extracted and built.
rm -rf "$dir/debs" "$dir/src" "$dir/root/usr" "$dir/root/boot"
echo "$pkg_version recipe-$recipe" >"$stamp"
ln -sfn "$kver" "$guest_cache/current"
note "guest assets for $kver ready in $dir"
