#!/usr/bin/env bash
# fixed-module.sh rxe|siw [LINE...]: builds the fixed driver module (the line's own rxe or
# siw source with patches/<driver>-fixes/*.patch, issue 33) for each kernel line whose guest
# assets exist (default: RDMA_INTEROP_KERNEL_LINES, else every line of kernel-lines.sh):
#   $RDMA_INTEROP_CACHE/<driver>-fixes/<kver>/<module>.ko  the build, keyed by kernel + patches
#   $RDMA_INTEROP_CACHE/guest/<kver>/<module>-fixes.ko      link the guest loads it by
#                                                         (scripts/guest/fixed-module.sh)
#   $RDMA_INTEROP_CACHE/linux-src/<pkg version>/          the pristine rxe + siw sources and
#                                                         scripts/checkpatch.pl of that kernel
#                                                         (for writing and checking patches)
# <module> is rdma_rxe or siw. A line may replace one patch by
# patches/<driver>-fixes/<line>/<same name> (as patches/siw/ does). Same recipe as
# scripts/setup/siw-patched.sh: linux-source + headers + kbuild of the exact kernel version,
# downloaded with apt-get download, unpacked, never installed; built with the host's gcc or
# in the line's build root. The stock module stays what modprobe loads.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=scripts/setup/suite-apt.sh
source "$(dirname "$0")/suite-apt.sh"
# shellcheck source=scripts/setup/kernel-lines.sh
source "$(dirname "$0")/kernel-lines.sh"

driver=${1:-}
case "$driver" in
  rxe) module=rdma_rxe config=CONFIG_RDMA_RXE ;;
  siw) module=siw config=CONFIG_RDMA_SIW ;;
  *) die "usage: fixed-module.sh rxe|siw [LINE...]" ;;
esac
shift
guest_cache="$RDMA_INTEROP_CACHE/guest"
patch_dir="$RDMA_INTEROP_ROOT/patches/$driver-fixes"
# Bump when the recipe below changes.
recipe=1
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
    [ -f "$p" ] || continue
    name=$(basename "$p")
    # The series' cover letter (git format-patch --cover-letter) carries no diff.
    [ "$name" != 0000-cover-letter.patch ] || continue
    if [ -f "$patch_dir/$1/$name" ]; then echo "$patch_dir/$1/$name"; else echo "$p"; fi
  done
}

chroot_proc=""
work=""
cleanup() {
  [ -n "$chroot_proc" ] && mountpoint -q "$chroot_proc" && umount "$chroot_proc"
  [ -n "$work" ] && rm -rf "$work"
  return 0
}
trap cleanup EXIT

build_line() {
  local line=$1 suite compiler kver abi pkg_version series out key patches=() p
  suite=$(kernel_line_suite "$line") || die "unknown kernel line '$line' (known: ${KERNEL_LINES[*]})"
  compiler=$(kernel_line_compiler "$line")
  if [ ! -L "$guest_cache/line-$line" ]; then
    note "no guest assets for kernel line $line: no fixed $module.ko for it"
    return 0
  fi
  kver=$(basename "$(readlink "$guest_cache/line-$line")")
  abi=${kver%-amd64}
  pkg_version=$(cut -d' ' -f1 "$guest_cache/$kver/.complete")
  series=$(cut -d. -f1,2 <<<"$pkg_version")
  out="$RDMA_INTEROP_CACHE/$driver-fixes/$kver"
  mkdir -p "$out"

  mapfile -t patches < <(line_patches "$line")
  key=$( { echo "$pkg_version recipe-$recipe $compiler"; cat "${patches[@]}" /dev/null; } | sha256sum | cut -c1-16)
  if [ "$(cat "$out/.complete" 2>/dev/null)" = "$key" ] && [ -f "$out/$module.ko" ]; then
    ln -sfn "$out/$module.ko" "$guest_cache/$kver/$module-fixes.ko"
    note "fixed $module.ko for $kver (line $line): cached"
    return 0
  fi

  local line_started aget_opts=() chroot_dir="" wanted pinned
  line_started=$(date +%s.%N)
  work="$out/work"
  rm -rf "$work" "$out/$module.ko" "$out/.complete"
  mkdir -p "$work/debs" "$work/root"
  [ "$suite" = host ] || { suite_apt_ready "$suite" && mapfile -t aget_opts < <(suite_apt_opts "$suite"); }
  if [ "$compiler" != host ]; then
    chroot_dir=$(bash "$RDMA_INTEROP_ROOT/scripts/setup/build-chroot.sh" "$compiler" | tail -n1)
  fi
  wanted=("linux-source-$series")
  if [ -z "$chroot_dir" ] || [ ! -d "$chroot_dir/usr/src/linux-headers-$kver" ]; then
    wanted+=("linux-headers-$kver" "linux-headers-$abi-common" "linux-kbuild-$series")
    [ "$series" = 6.1 ] || wanted[-1]="linux-kbuild-$abi"
  fi
  mapfile -t pinned < <(suite_pin_versions "$suite" "$pkg_version" "${wanted[@]}")
  step "downloading ${pinned[*]} for the fixed $module.ko of line $line"
  (
    cd "$work/debs"
    apt-get "${aget_opts[@]}" download -q "${pinned[@]}" 2>&1 |
      grep -v -e '^Get:' -e 'unsandboxed' -e '^Fetched' || true
  )
  ls "$work"/debs/linux-source-*.deb >/dev/null 2>&1 || die "download of linux-source-$series $pkg_version failed"
  step_done "download ($(du -sh "$work/debs" | cut -f1))"

  step "applying patches/$driver-fixes (${#patches[@]}) to linux-source $pkg_version and building $module.ko ($compiler gcc)"
  local tarball top drv_dir built src_keep
  dpkg-deb --fsys-tarfile "$work"/debs/linux-source-*.deb |
    tar -x -C "$work" --wildcards './usr/src/linux-source-*.tar.*'
  tarball=$(find "$work/usr/src" -name 'linux-source-*.tar.*' | head -n1)
  top=$(basename "$tarball" | sed -E 's/\.tar\.[a-z]+$//')
  tar -xf "$tarball" -C "$work" "$top/drivers/infiniband/sw/rxe" "$top/drivers/infiniband/sw/siw" \
    "$top/include/uapi/rdma" "$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
    "$top/scripts/const_structs.checkpatch"
  rm -rf "${work:?}/usr"
  src_keep="$RDMA_INTEROP_CACHE/linux-src/$pkg_version"
  if [ ! -d "$src_keep" ]; then
    mkdir -p "$(dirname "$src_keep")"
    cp -a "$work/$top" "$src_keep.tmp" && mv "$src_keep.tmp" "$src_keep"
  fi
  for p in "${patches[@]}"; do
    patch -s -p1 --no-backup-if-mismatch -d "$work/$top" <"$p" >"$work/patch.log" 2>&1 ||
      { cat "$work/patch.log" >&2; die "${p#"$RDMA_INTEROP_ROOT"/} does not apply to linux-source $pkg_version"; }
  done
  drv_dir="$work/$top/drivers/infiniband/sw/$driver"
  if [ -z "$chroot_dir" ]; then
    local headers="$work/root/usr/src/linux-headers-$kver" deb
    for deb in "$work"/debs/linux-headers-*.deb "$work"/debs/linux-kbuild-*.deb; do
      dpkg-deb -x "$deb" "$work/root"
    done
    sed -i "s|/usr/src/linux-headers-$abi-common|$work/root/usr/src/linux-headers-$abi-common|g" "$headers/Makefile"
    make -s -C "$headers" M="$drv_dir" "$config=m" CONFIG_DEBUG_INFO_BTF_MODULES= modules >"$out/build.log" 2>&1 ||
      { tail -n 30 "$out/build.log" >&2; die "fixed $module.ko build failed (log: $out/build.log)"; }
    built="$drv_dir/$module.ko"
  else
    if [ ! -d "$chroot_dir/usr/src/linux-headers-$kver" ]; then
      for deb in "$work"/debs/linux-headers-*.deb "$work"/debs/linux-kbuild-*.deb; do
        dpkg-deb -x "$deb" "$chroot_dir"
      done
    fi
    local in_root="$chroot_dir/build-fixes"
    rm -rf "$in_root"
    mkdir -p "$in_root"
    cp -a "$drv_dir" "$in_root/$driver"
    chroot_proc="$chroot_dir/proc"
    mkdir -p "$chroot_proc"
    mountpoint -q "$chroot_proc" || mount -t proc proc "$chroot_proc"
    local built_ok=1
    chroot "$chroot_dir" make -s -C "/usr/src/linux-headers-$kver" M="/build-fixes/$driver" "$config=m" \
      CONFIG_DEBUG_INFO_BTF_MODULES= modules \
      >"$out/build.log" 2>&1 || built_ok=0
    umount "$chroot_proc"
    chroot_proc=""
    [ "$built_ok" = 1 ] ||
      { tail -n 30 "$out/build.log" >&2; die "fixed $module.ko build failed in the $compiler build root (log: $out/build.log)"; }
    built="$in_root/$driver/$module.ko"
  fi
  cp "$built" "$out/$module.ko"
  [ -z "$chroot_dir" ] || rm -rf "$chroot_dir/build-fixes"
  rm -rf "$work"
  work=""
  step_done "fixed $module.ko"
  echo "$key" >"$out/.complete"
  ln -sfn "$out/$module.ko" "$guest_cache/$kver/$module-fixes.ko"
  note "fixed $module.ko for $kver (line $line) ready in $out ($(elapsed "$line_started" "$(date +%s.%N)") s)"
}

mkdir -p "$RDMA_INTEROP_CACHE/$driver-fixes"
exec 9>"$RDMA_INTEROP_CACHE/$driver-fixes/.lock"
flock 9
for line in "${lines[@]}"; do
  build_line "$line"
done
note "fixed $module for lines ${lines[*]}: $(elapsed "$started" "$(date +%s.%N)") s"
