#!/usr/bin/env bash
# guest-assets.sh [LINE]: builds the QEMU guest's assets for one Debian kernel line from
# Debian's own packages, cached by kernel version. LINE (kernel-lines.sh):
#   6.1   bookworm (the default, what `guest/current` points at)
#   6.12  bookworm-backports
#   7.3   trixie-backports
# Output:
#   $RDMA_INTEROP_CACHE/guest/<kver>/vmlinuz, vmlinux   the kernel (bzImage; ELF for PVH)
#   $RDMA_INTEROP_CACHE/guest/<kver>/root/lib/modules/   the extracted modules (+ depmod, + siw.ko)
#   $RDMA_INTEROP_CACHE/guest/<kver>/initramfs.cpio.gz  busybox + the modules to mount 9p
#   $RDMA_INTEROP_CACHE/guest/line-<LINE>               -> <kver>
#   $RDMA_INTEROP_CACHE/guest/current                   -> the 6.1 line's <kver>
# The kernel is resolved from the suite's linux-image-amd64 metapackage at set-up time
# (Debian bumps the ABI in security updates), never hard-coded. Other suites than the
# host's use their own apt lists under the cache (suite-apt.sh); nothing is installed on
# the host: packages are downloaded and unpacked with dpkg-deb -x.
# Debian builds no siw in any line (CONFIG_RDMA_SIW is not set), so siw.ko is built out of
# tree from linux-source against the matching headers (kernel-runtime.md): with the
# host's gcc 12 for 6.1 and bookworm-backports' 6.12 (whose headers ask for gcc-12), in a
# trixie build root with gcc 14 for 7.3 (build-chroot.sh).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=scripts/setup/suite-apt.sh
source "$(dirname "$0")/suite-apt.sh"
# shellcheck source=scripts/setup/kernel-lines.sh
source "$(dirname "$0")/kernel-lines.sh"

line=${1:-$DEFAULT_KERNEL_LINE}
suite=$(kernel_line_suite "$line") || die "unknown kernel line '$line' (known: ${KERNEL_LINES[*]})"
started=$(date +%s.%N)

guest_cache="$RDMA_INTEROP_CACHE/guest"
mkdir -p "$guest_cache"
# One build at a time per cache (a first `vm` in two terminals at once): the second waits,
# then finds the assets cached.
exec 9>"$guest_cache/.lock"
if ! flock -n 9; then
  note "another set-up is building the guest assets in $guest_cache: waiting for it"
  flock 9
fi

# apt for the line's suite: the host's own lists for the host's suite, else the suite's
# own lists in the cache.
acache() { if [ "$suite" = host ]; then apt-cache "$@"; else suite_apt_cache "$suite" "$@"; fi; }
aget() { if [ "$suite" = host ]; then apt-get "$@"; else suite_apt_get "$suite" "$@"; fi; }
# depends_of PKG[=VERSION]: the package's Depends, one alternative-free name per line.
depends_of() {
  acache show --no-all-versions "$1" 2>/dev/null | sed -n 's/^Depends: //p' | head -n1 |
    tr ',' '\n' | sed -E 's/^ *//; s/[ |].*//' | sed '/^$/d'
}

# --- resolve the kernel ------------------------------------------------------------------
# "Depends: linux-image-6.1.0-56-amd64 (= 6.1.192-2)" of the candidate metapackage (7.3's
# lists linux-base-amd64 first, hence the grep).
resolve_depends() {
  acache show --no-all-versions linux-image-amd64 2>/dev/null | sed -n 's/^Depends: //p' | head -n1 |
    tr ',' '\n' | sed 's/^ *//' | grep -E '^linux-image-[^ ]+-amd64 \(= ' | head -n1 || true
}
if [ "$suite" = host ]; then
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
else
  suite_apt_ready "$suite"
  depends=$(resolve_depends)
fi
image_pkg=$(sed -E 's/^(linux-image-[^ ,]+).*/\1/' <<<"$depends")
pkg_version=$(sed -E 's/.*\(= ([^)]+)\).*/\1/' <<<"$depends")
[[ "$image_pkg" =~ ^linux-image-(.+)-amd64$ ]] ||
  die "cannot resolve linux-image-amd64 in $suite (got '$depends'); run apt-get update?"
abi="${BASH_REMATCH[1]}"                  # 6.1.0-56, 6.12.95+deb12, 7.3.4+deb13
kver="$abi-amd64"                         # the modules directory name (uname -r)
series=$(cut -d. -f1,2 <<<"$pkg_version") # 6.1, 6.12, 7.3
[ "$series" = "$line" ] || die "the $suite kernel is $pkg_version, not of the $line line"

dir="$guest_cache/$kver"
stamp="$dir/.complete"
# Bump when the recipe below changes, so caches built by an older recipe are rebuilt
# (still 2: the per-line recipe builds 6.1 exactly as before).
recipe=2
if [ "$(cat "$stamp" 2>/dev/null)" = "$pkg_version recipe-$recipe" ]; then
  note "guest assets for $kver ($pkg_version): cached (kernel line $line, from $suite)"
  ln -sfn "$kver" "$guest_cache/line-$line"
  [ "$line" = "$DEFAULT_KERNEL_LINE" ] && ln -sfn "$kver" "$guest_cache/current"
  exit 0
fi

rm -rf "$dir"
mkdir -p "$dir/debs" "$dir/root"

# --- download -----------------------------------------------------------------------------
# The image and what it is split into (7.3: linux-binary-*, linux-modules-*, linux-base-*),
# the headers and theirs (-common, linux-kbuild-*), and the source for siw.
mapfile -t image_parts < <(depends_of "$image_pkg=$pkg_version" | grep -E '^linux-(binary|modules|base)-' |
  grep -F -e "-$abi-" || true)
mapfile -t header_parts < <(depends_of "linux-headers-$kver=$pkg_version" | grep -E '^linux-(headers|kbuild)-' || true)
wanted=("$image_pkg" "${image_parts[@]}" "linux-headers-$kver" "${header_parts[@]}" "linux-source-$series")
mapfile -t pinned < <(suite_pin_versions "$suite" "$pkg_version" "${wanted[@]}")
[ "${#pinned[@]}" -eq "${#wanted[@]}" ] || die "not every kernel package is in the $suite package lists: ${wanted[*]}"
step "downloading Debian kernel $kver ($pkg_version from $suite): ${pinned[*]}"
(
  cd "$dir/debs"
  aget download -q "${pinned[@]}" 2>&1 |
    grep -v -e '^Get:' -e 'unsandboxed' -e '^Fetched' || true
)
[ "$(find "$dir/debs" -name '*.deb' | wc -l)" -eq "${#wanted[@]}" ] ||
  die "download of the kernel packages failed (have: $(cd "$dir/debs" && echo *))"
step_done "download ($(du -sh "$dir/debs" | cut -f1))"

# --- extract --------------------------------------------------------------------------------
step "extracting the kernel, modules and build tree"
for deb in "$dir"/debs/*.deb; do
  case "$(basename "$deb")" in linux-source-*) continue ;; esac
  dpkg-deb -x "$deb" "$dir/root"
done
# Merged-usr packages (6.12 and later) ship usr/lib/modules; the guest and depmod read
# lib/modules.
if [ -d "$dir/root/usr/lib/modules/$kver" ]; then
  mkdir -p "$dir/root/lib/modules"
  mv "$dir/root/usr/lib/modules/$kver" "$dir/root/lib/modules/$kver"
fi
vmlinuz=""
for f in "$dir/root/boot/vmlinuz-$kver" "$dir/root/lib/modules/$kver/vmlinuz"; do
  [ -f "$f" ] && vmlinuz=$f && break
done
[ -n "$vmlinuz" ] || die "no vmlinuz in the $kver packages"
cp "$vmlinuz" "$dir/vmlinuz"
rm -f "$dir/root/lib/modules/$kver/vmlinuz"
# The ELF kernel boots via PVH, about twice as fast under TCG; keep the bzImage as fallback.
python3 "$RDMA_INTEROP_ROOT/scripts/guest/extract-vmlinux.py" "$dir/vmlinuz" "$dir/vmlinux" ||
  note "no ELF kernel inside the bzImage; booting the bzImage"
step_done "extract"

# --- build siw.ko ---------------------------------------------------------------------------
step "building siw.ko from linux-source-$series against the $kver headers"
src_deb=$(find "$dir/debs" -name 'linux-source-*.deb' | head -n1)
mkdir -p "$dir/src"
dpkg-deb --fsys-tarfile "$src_deb" | tar -x -C "$dir/src" --wildcards './usr/src/linux-source-*.tar.*'
tarball=$(find "$dir/src/usr/src" -name 'linux-source-*.tar.*' | head -n1)
top=$(basename "$tarball" | sed -E 's/\.tar\.[a-z]+$//')
tar -xf "$tarball" -C "$dir/src" "$top/drivers/infiniband/sw/siw"
siw_dir="$dir/src/$top/drivers/infiniband/sw/siw"
headers="$dir/root/usr/src/linux-headers-$kver"
# 6.12 and later generate BTF for modules with pahole (bookworm's is too old, or absent);
# siw needs none: build it without.
no_btf=CONFIG_DEBUG_INFO_BTF_MODULES=
if [ "$(kernel_line_compiler "$line")" = host ]; then
  # The arch headers' Makefile includes the -common tree by an absolute /usr/src path;
  # point it at the extracted copy instead of installing anything under /usr/src. The
  # scripts/ and tools/ links into linux-kbuild are relative, so they resolve as they are.
  sed -i "s|/usr/src/linux-headers-$abi-common|$dir/root/usr/src/linux-headers-$abi-common|g" "$headers/Makefile"
  make -s -C "$headers" M="$siw_dir" CONFIG_RDMA_SIW=m $no_btf modules >"$dir/siw-build.log" 2>&1 ||
    { tail -n 30 "$dir/siw-build.log" >&2; die "siw.ko build failed (log: $dir/siw-build.log)"; }
  built="$siw_dir/siw.ko"
else
  # The headers and kbuild tools need the suite's compiler and glibc: build inside its
  # build root, with the headers at their real /usr/src path there.
  chroot_dir=$(bash "$RDMA_INTEROP_ROOT/scripts/setup/build-chroot.sh" "$(kernel_line_compiler "$line")" | tail -n1)
  rm -rf "$chroot_dir/build"
  mkdir -p "$chroot_dir/build"
  for deb in "$dir"/debs/linux-headers-*.deb "$dir"/debs/linux-kbuild-*.deb; do
    dpkg-deb -x "$deb" "$chroot_dir/build/root"
  done
  # /usr/src/linux-headers-* and /usr/lib/linux-kbuild-* where the Makefiles expect them.
  cp -a "$chroot_dir/build/root/usr/." "$chroot_dir/usr/"
  cp -a "$siw_dir" "$chroot_dir/build/siw"
  # objtool reads /proc/self (its stack limit): the build root needs a /proc for the build.
  mkdir -p "$chroot_dir/proc"
  mountpoint -q "$chroot_dir/proc" || mount -t proc proc "$chroot_dir/proc"
  built_ok=1
  chroot "$chroot_dir" make -s -C "/usr/src/linux-headers-$kver" M=/build/siw CONFIG_RDMA_SIW=m $no_btf modules \
    >"$dir/siw-build.log" 2>&1 || built_ok=0
  # A process of the build can still hold the mount for a moment after make returns (seen
  # once in a cold set-up under load: "target is busy"); detach it lazily then.
  umount "$chroot_dir/proc" 2>/dev/null || { sleep 1; umount "$chroot_dir/proc" 2>/dev/null; } ||
    umount -l "$chroot_dir/proc"
  [ "$built_ok" = 1 ] ||
    { tail -n 30 "$dir/siw-build.log" >&2; die "siw.ko build failed in the $(kernel_line_compiler "$line") build root (log: $dir/siw-build.log)"; }
  built="$chroot_dir/build/siw/siw.ko"
fi
mkdir -p "$dir/root/lib/modules/$kver/extra"
cp "$built" "$dir/root/lib/modules/$kver/extra/siw.ko"
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
rm -rf "$dir/debs" "$dir/src" "$dir/root/usr" "$dir/root/boot" "$dir/root/etc"
echo "$pkg_version recipe-$recipe" >"$stamp"
ln -sfn "$kver" "$guest_cache/line-$line"
[ "$line" = "$DEFAULT_KERNEL_LINE" ] && ln -sfn "$kver" "$guest_cache/current"
note "guest assets for $line: $kver ready in $dir ($(elapsed "$started" "$(date +%s.%N)") s)"
