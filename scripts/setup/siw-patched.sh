#!/usr/bin/env bash
# siw-patched.sh [LINE...]: builds the patched siw.ko (patches/siw/: RFC 7306 Atomics and
# Immediate Data behind the rfc7306 module parameter, plus the Terminate layout fix) for
# each kernel line whose guest assets exist (default: RDMA_INTEROP_KERNEL_LINES, else every
# line of kernel-lines.sh), next to the stock one:
#   $RDMA_INTEROP_CACHE/siw-rfc7306/<kver>/siw.ko       the build, keyed by kernel + patches
#   $RDMA_INTEROP_CACHE/guest/<kver>/siw-rfc7306.ko     link the guest loads it by
#                                                       (scripts/guest/siw-module.sh)
#   $RDMA_INTEROP_CACHE/guest/<kver>/siw-rfc7306-rdma-core  link to rdma-core 56.1 built
#                                                       with patches/rdma-core/ (libsiw)
# The series is patches/siw/*.patch for every line; where a line needs a different hunk,
# patches/siw/<line>/<same name> replaces that one patch for that line (7.3: siw computes
# MPA CRCs with the crc32c library there, docs/siw-rfc7306.md).
# The stock siw.ko stays what modprobe loads; this one is insmod-ed on request only. Same
# recipe as the stock build (guest-assets.sh): linux-source + headers + kbuild of the exact
# kernel version, downloaded with apt-get download and unpacked, never installed; built with
# the host's gcc, or in the line's build root (build-chroot.sh) with the headers
# guest-assets.sh already put there.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=scripts/setup/suite-apt.sh
source "$(dirname "$0")/suite-apt.sh"
# shellcheck source=scripts/setup/kernel-lines.sh
source "$(dirname "$0")/kernel-lines.sh"

guest_cache="$RDMA_INTEROP_CACHE/guest"
patch_dir="$RDMA_INTEROP_ROOT/patches/siw"
# Bump when the recipe below changes.
recipe=2
started=$(date +%s.%N)

if [ $# -gt 0 ]; then
  lines=("$@")
else
  read -r -a lines <<<"${RDMA_INTEROP_KERNEL_LINES:-${KERNEL_LINES[*]}}"
fi

# line_patches LINE: the series for LINE, in order, one path a line.
line_patches() {
  local p name
  for p in "$patch_dir"/*.patch; do
    name=$(basename "$p")
    if [ -f "$patch_dir/$1/$name" ]; then echo "$patch_dir/$1/$name"; else echo "$p"; fi
  done
}

# The matching libsiw: rdma-core 56.1 with patches/rdma-core/ (its own cache and key), the
# same for every line.
rdma_core=$(bash "$RDMA_INTEROP_ROOT/scripts/setup/rdma-core.sh" 56.1 "$RDMA_INTEROP_ROOT/patches/rdma-core" | tail -n1)
[ -d "$rdma_core/lib" ] || die "the patched rdma-core build is missing ($rdma_core)"

chroot_proc=""
work=""
cleanup() {
  [ -n "$chroot_proc" ] && mountpoint -q "$chroot_proc" && umount "$chroot_proc"
  [ -n "$work" ] && rm -rf "$work"
  return 0
}
trap cleanup EXIT

# build_line LINE: the patched siw.ko of one line, cached.
build_line() {
  local line=$1 suite compiler kver abi pkg_version series out key patches p
  suite=$(kernel_line_suite "$line") || die "unknown kernel line '$line' (known: ${KERNEL_LINES[*]})"
  compiler=$(kernel_line_compiler "$line")
  if [ ! -L "$guest_cache/line-$line" ]; then
    note "no guest assets for kernel line $line: no patched siw.ko for it (scripts/setup/guest-assets.sh $line)"
    return 0
  fi
  kver=$(basename "$(readlink "$guest_cache/line-$line")") # 6.1.0-56-amd64
  abi=${kver%-amd64}                                       # 6.1.0-56
  pkg_version=$(cut -d' ' -f1 "$guest_cache/$kver/.complete")
  series=$(cut -d. -f1,2 <<<"$pkg_version")
  out="$RDMA_INTEROP_CACHE/siw-rfc7306/$kver"
  mkdir -p "$out"
  ln -sfn "$rdma_core" "$guest_cache/$kver/siw-rfc7306-rdma-core"

  mapfile -t patches < <(line_patches "$line")
  key=$( { echo "$pkg_version recipe-$recipe $compiler"; cat "${patches[@]}"; } | sha256sum | cut -c1-16)
  if [ "$(cat "$out/.complete" 2>/dev/null)" = "$key" ] && [ -f "$out/siw.ko" ]; then
    ln -sfn "$out/siw.ko" "$guest_cache/$kver/siw-rfc7306.ko"
    note "patched siw.ko for $kver (line $line): cached"
    return 0
  fi

  local line_started aget_opts=() chroot_dir="" wanted
  line_started=$(date +%s.%N)
  work="$out/work"
  rm -rf "$work" "$out/siw.ko" "$out/.complete"
  mkdir -p "$work/debs" "$work/root"
  [ "$suite" = host ] || { suite_apt_ready "$suite" && mapfile -t aget_opts < <(suite_apt_opts "$suite"); }
  if [ "$compiler" != host ]; then
    chroot_dir=$(bash "$RDMA_INTEROP_ROOT/scripts/setup/build-chroot.sh" "$compiler" | tail -n1)
  fi
  # A build root already has this kernel's headers when guest-assets.sh built the stock
  # siw.ko there: then only the source is downloaded.
  wanted=("linux-source-$series")
  if [ -z "$chroot_dir" ] || [ ! -d "$chroot_dir/usr/src/linux-headers-$kver" ]; then
    wanted+=("linux-headers-$kver" "linux-headers-$abi-common" "linux-kbuild-$series")
    # 6.12 and later name the kbuild package after the ABI.
    [ "$series" = 6.1 ] || wanted[-1]="linux-kbuild-$abi"
  fi
  local pinned
  mapfile -t pinned < <(suite_pin_versions "$suite" "$pkg_version" "${wanted[@]}")
  step "downloading ${pinned[*]} for the patched siw.ko of line $line"
  (
    cd "$work/debs"
    apt-get "${aget_opts[@]}" download -q "${pinned[@]}" 2>&1 |
      grep -v -e '^Get:' -e 'unsandboxed' -e '^Fetched' || true
  )
  ls "$work"/debs/linux-source-*.deb >/dev/null 2>&1 || die "download of linux-source-$series $pkg_version failed"
  step_done "download ($(du -sh "$work/debs" | cut -f1))"

  step "applying the series to linux-source $pkg_version and building the patched siw.ko ($compiler gcc)"
  local tarball top siw_dir built
  dpkg-deb --fsys-tarfile "$work"/debs/linux-source-*.deb |
    tar -x -C "$work" --wildcards './usr/src/linux-source-*.tar.*'
  tarball=$(find "$work/usr/src" -name 'linux-source-*.tar.*' | head -n1)
  top=$(basename "$tarball" | sed -E 's/\.tar\.[a-z]+$//')
  tar -xf "$tarball" -C "$work" "$top/drivers/infiniband/sw/siw" "$top/include/uapi/rdma/siw-abi.h"
  rm -rf "${work:?}/usr"
  for p in "${patches[@]}"; do
    patch -s -p1 --no-backup-if-mismatch -d "$work/$top" <"$p" >"$work/patch.log" 2>&1 ||
      { cat "$work/patch.log" >&2; die "${p#"$RDMA_INTEROP_ROOT"/} does not apply to linux-source $pkg_version"; }
  done
  siw_dir="$work/$top/drivers/infiniband/sw/siw"
  # An out-of-tree build sees the headers package's <rdma/siw-abi.h>; the patched uapi
  # header goes first (its include guard then keeps the other one out). 6.12 and later
  # would generate BTF for modules with pahole; siw needs none.
  if [ -z "$chroot_dir" ]; then
    local headers="$work/root/usr/src/linux-headers-$kver" deb
    for deb in "$work"/debs/linux-headers-*.deb "$work"/debs/linux-kbuild-*.deb; do
      dpkg-deb -x "$deb" "$work/root"
    done
    sed -i "s|/usr/src/linux-headers-$abi-common|$work/root/usr/src/linux-headers-$abi-common|g" "$headers/Makefile"
    make -s -C "$headers" M="$siw_dir" CONFIG_RDMA_SIW=m CONFIG_DEBUG_INFO_BTF_MODULES= \
      KCFLAGS="-include $work/$top/include/uapi/rdma/siw-abi.h" modules >"$out/build.log" 2>&1 ||
      { tail -n 30 "$out/build.log" >&2; die "patched siw.ko build failed (log: $out/build.log)"; }
    built="$siw_dir/siw.ko"
  else
    if [ ! -d "$chroot_dir/usr/src/linux-headers-$kver" ]; then
      for deb in "$work"/debs/linux-headers-*.deb "$work"/debs/linux-kbuild-*.deb; do
        dpkg-deb -x "$deb" "$chroot_dir"
      done
    fi
    local in_root="$chroot_dir/build-siw-rfc7306"
    rm -rf "$in_root"
    mkdir -p "$in_root"
    cp -a "$siw_dir" "$in_root/siw"
    cp "$work/$top/include/uapi/rdma/siw-abi.h" "$in_root/siw-abi.h"
    # objtool reads /proc/self (its stack limit): the build root needs a /proc for the build.
    chroot_proc="$chroot_dir/proc"
    mkdir -p "$chroot_proc"
    mountpoint -q "$chroot_proc" || mount -t proc proc "$chroot_proc"
    local built_ok=1
    chroot "$chroot_dir" make -s -C "/usr/src/linux-headers-$kver" M=/build-siw-rfc7306/siw CONFIG_RDMA_SIW=m \
      CONFIG_DEBUG_INFO_BTF_MODULES= KCFLAGS="-include /build-siw-rfc7306/siw-abi.h" modules \
      >"$out/build.log" 2>&1 || built_ok=0
    umount "$chroot_proc"
    chroot_proc=""
    [ "$built_ok" = 1 ] ||
      { tail -n 30 "$out/build.log" >&2; die "patched siw.ko build failed in the $compiler build root (log: $out/build.log)"; }
    built="$in_root/siw/siw.ko"
  fi
  cp "$built" "$out/siw.ko"
  [ -z "$chroot_dir" ] || rm -rf "$chroot_dir/build-siw-rfc7306"
  rm -rf "$work"
  work=""
  step_done "patched siw.ko"

  echo "$key" >"$out/.complete"
  ln -sfn "$out/siw.ko" "$guest_cache/$kver/siw-rfc7306.ko"
  note "patched siw.ko for $kver (line $line) ready in $out ($(elapsed "$line_started" "$(date +%s.%N)") s)"
}

# One build at a time per cache.
mkdir -p "$RDMA_INTEROP_CACHE/siw-rfc7306"
exec 9>"$RDMA_INTEROP_CACHE/siw-rfc7306/.lock"
flock 9
for line in "${lines[@]}"; do
  build_line "$line"
done
note "patched siw for lines ${lines[*]}: $(elapsed "$started" "$(date +%s.%N)") s"
