#!/usr/bin/env bash
# Sourced, never run (after common.sh, scripts/setup/suite-apt.sh and kernel-lines.sh): the
# one builder of an out-of-tree rxe or siw module from a kernel line's own linux-source with
# a patch series, for scripts/setup/siw-patched.sh (patches/siw, RFC 7306) and
# scripts/setup/fixed-module.sh (patches/rxe-fixes, patches/siw-fixes; issue 33).
# What every module build of one kernel package version needs is fetched once and kept in
# the git-ignored cache, so linux-source (~150 MB) is downloaded once per version, not once
# per module:
#   $RDMA_INTEROP_CACHE/linux-src/<pkg version>/   the pristine rxe and siw sources, the rdma
#                                                  uapi headers and scripts/checkpatch.pl
#                                                  (also what patches are written against)
#   $RDMA_INTEROP_CACHE/linux-headers/<kver>/      the kernel's headers + kbuild, unpacked,
#                                                  for a line built with the host's gcc; a
#                                                  line built in a build root (build-chroot.sh)
#                                                  keeps them in that root, as guest-assets.sh does
# The packages are downloaded with apt-get download and unpacked, never installed.

# kmod_line LINE: the facts of LINE's guest kernel, in globals: kmod_suite, kmod_compiler,
# kmod_kver (6.1.0-57-amd64), kmod_abi (6.1.0-57), kmod_pkg_version (6.1.192-3), kmod_series
# (6.1). Returns 1 when the line has no guest assets (guest-assets.sh builds them first).
kmod_line() {
  local line=$1 guest_cache="$RDMA_INTEROP_CACHE/guest"
  kmod_suite=$(kernel_line_suite "$line") || die "unknown kernel line '$line' (known: ${KERNEL_LINES[*]})"
  kmod_compiler=$(kernel_line_compiler "$line")
  [ -L "$guest_cache/line-$line" ] || return 1
  kmod_kver=$(basename "$(readlink "$guest_cache/line-$line")")
  kmod_abi=${kmod_kver%-amd64}
  kmod_pkg_version=$(cut -d' ' -f1 "$guest_cache/$kmod_kver/.complete")
  kmod_series=$(cut -d. -f1,2 <<<"$kmod_pkg_version")
}

# kmod_series_of PATCH_DIR LINE: the series for LINE, in order, one path a line: every
# PATCH_DIR/*.patch but the cover letter (git format-patch --cover-letter carries no diff),
# each replaced by PATCH_DIR/<LINE>/<same name> where the line needs other context, and
# left out where PATCH_DIR/<LINE>/<same name>.upstream says the line has the fix already.
kmod_series_of() {
  local dir=$1 line=$2 p name
  for p in "$dir"/*.patch; do
    [ -f "$p" ] || continue
    name=$(basename "$p")
    [ "$name" != 0000-cover-letter.patch ] || continue
    [ ! -f "$dir/$line/$name.upstream" ] || continue
    if [ -f "$dir/$line/$name" ]; then echo "$dir/$line/$name"; else echo "$p"; fi
  done
}

# kmod_source_dir: where the pristine source subset of kmod_pkg_version lives.
kmod_source_dir() {
  printf '%s/linux-src/%s\n' "$RDMA_INTEROP_CACHE" "$kmod_pkg_version"
}

# kmod_fetch CHROOT_DIR: makes sure the pristine source subset of kmod_pkg_version and the
# headers + kbuild of kmod_kver (in CHROOT_DIR when not empty, else in the cache) are there,
# downloading only what is missing, in one apt-get download. One fetch at a time per cache.
kmod_fetch() {
  local chroot_dir=$1 src hdr_root wanted=() aget_opts=() pinned dl
  src=$(kmod_source_dir)
  if [ -n "$chroot_dir" ]; then hdr_root=$chroot_dir; else hdr_root="$RDMA_INTEROP_CACHE/linux-headers/$kmod_kver"; fi
  mkdir -p "$RDMA_INTEROP_CACHE/linux-src"
  exec 8>"$RDMA_INTEROP_CACHE/linux-src/.lock"
  flock 8
  [ -d "$src" ] || wanted+=("linux-source-$kmod_series")
  if [ ! -d "$hdr_root/usr/src/linux-headers-$kmod_kver" ]; then
    wanted+=("linux-headers-$kmod_kver" "linux-headers-$kmod_abi-common" "linux-kbuild-$kmod_series")
    # 6.12 and later name the kbuild package after the ABI.
    [ "$kmod_series" = 6.1 ] || wanted[-1]="linux-kbuild-$kmod_abi"
  fi
  if [ ${#wanted[@]} -eq 0 ]; then
    exec 8>&-
    return 0
  fi
  [ "$kmod_suite" = host ] || { suite_apt_ready "$kmod_suite" && mapfile -t aget_opts < <(suite_apt_opts "$kmod_suite"); }
  mapfile -t pinned < <(suite_pin_versions "$kmod_suite" "$kmod_pkg_version" "${wanted[@]}")
  dl="$RDMA_INTEROP_CACHE/linux-src/.download-$kmod_pkg_version"
  rm -rf "$dl"
  mkdir -p "$dl"
  step "downloading ${pinned[*]} (kept unpacked for every module build of $kmod_kver)"
  (
    cd "$dl" || exit 1
    apt-get "${aget_opts[@]}" download -q "${pinned[@]}" 2>&1 |
      grep -v -e '^Get:' -e 'unsandboxed' -e '^Fetched' || true
  )
  [ "$(find "$dl" -name '*.deb' | wc -l)" -eq "${#wanted[@]}" ] ||
    { rm -rf "$dl"; die "download of ${wanted[*]} for $kmod_pkg_version failed"; }
  step_done "download ($(du -sh "$dl" | cut -f1))"

  if [ ! -d "$src" ]; then
    local tarball top
    dpkg-deb --fsys-tarfile "$dl"/linux-source-*.deb |
      tar -x -C "$dl" --wildcards './usr/src/linux-source-*.tar.*'
    tarball=$(find "$dl/usr/src" -name 'linux-source-*.tar.*' | head -n1)
    top=$(basename "$tarball" | sed -E 's/\.tar\.[a-z]+$//')
    tar -xf "$tarball" -C "$dl" "$top/drivers/infiniband/sw/rxe" "$top/drivers/infiniband/sw/siw" \
      "$top/include/uapi/rdma" "$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
      "$top/scripts/const_structs.checkpatch"
    rm -rf "$src.tmp"
    mv "$dl/$top" "$src.tmp" && mv "$src.tmp" "$src"
  fi
  if [ ! -d "$hdr_root/usr/src/linux-headers-$kmod_kver" ]; then
    local into=$hdr_root deb
    [ -n "$chroot_dir" ] || { into="$hdr_root.tmp" && rm -rf "$into" && mkdir -p "$into"; }
    for deb in "$dl"/linux-headers-*.deb "$dl"/linux-kbuild-*.deb; do
      dpkg-deb -x "$deb" "$into"
    done
    if [ -z "$chroot_dir" ]; then
      # The headers' Makefile names its -common part by absolute path; point it at the cache.
      # (The scripts/ and tools/ links into linux-kbuild are relative and resolve as they are.)
      sed -i "s|/usr/src/linux-headers-$kmod_abi-common|$hdr_root/usr/src/linux-headers-$kmod_abi-common|g" \
        "$into/usr/src/linux-headers-$kmod_kver/Makefile"
      rm -rf "$hdr_root"
      mv "$into" "$hdr_root"
    fi
  fi
  rm -rf "$dl"
  exec 8>&-
}

# kmod_build LINE DRIVER OUT UAPI_HEADER PATCH...: builds DRIVER's module (rxe: rdma_rxe.ko,
# siw: siw.ko) of kmod_line LINE (call kmod_line first) from the pristine source with the
# PATCHes applied in order, into OUT/<module>.ko (log: OUT/build.log); built with the host's
# gcc, or in the line's build root. UAPI_HEADER, when not empty (include/uapi/rdma/siw-abi.h),
# is force-included from the patched tree: an out-of-tree build otherwise sees the headers
# package's copy (its include guard then keeps that one out). 6.12 and later would generate
# BTF for modules with pahole; these modules need none.
kmod_build() {
  local line=$1 driver=$2 out=$3 uapi=$4
  shift 4
  local module config chroot_dir="" work p built_ok=1 kcflags=()
  case "$driver" in
    rxe) module=rdma_rxe config=CONFIG_RDMA_RXE ;;
    siw) module=siw config=CONFIG_RDMA_SIW ;;
    *) die "kmod_build: unknown driver '$driver'" ;;
  esac
  if [ "$kmod_compiler" != host ]; then
    chroot_dir=$(bash "$RDMA_INTEROP_ROOT/scripts/setup/build-chroot.sh" "$kmod_compiler" | tail -n1)
  fi
  kmod_fetch "$chroot_dir"

  mkdir -p "$out"
  rm -f "$out/$module.ko"
  # The work tree: the driver and the uapi headers, a copy of the pristine source (1 MB).
  if [ -n "$chroot_dir" ]; then work="$chroot_dir/build-$driver-$BASHPID"; else work="$out/work"; fi
  rm -rf "$work"
  mkdir -p "$work/src/drivers/infiniband/sw" "$work/src/include/uapi"
  cp -a "$(kmod_source_dir)/drivers/infiniband/sw/$driver" "$work/src/drivers/infiniband/sw/"
  cp -a "$(kmod_source_dir)/include/uapi/rdma" "$work/src/include/uapi/"
  step "applying $# patch(es) to linux-source $kmod_pkg_version and building $module.ko for line $line ($kmod_compiler gcc)"
  for p in "$@"; do
    patch -s -p1 --no-backup-if-mismatch -d "$work/src" <"$p" >"$out/patch.log" 2>&1 ||
      { cat "$out/patch.log" >&2; rm -rf "$work"; die "${p#"$RDMA_INTEROP_ROOT"/} does not apply to linux-source $kmod_pkg_version"; }
  done
  if [ -z "$chroot_dir" ]; then
    [ -z "$uapi" ] || kcflags=("KCFLAGS=-include $work/src/$uapi")
    make -s -C "$RDMA_INTEROP_CACHE/linux-headers/$kmod_kver/usr/src/linux-headers-$kmod_kver" \
      M="$work/src/drivers/infiniband/sw/$driver" "$config=m" CONFIG_DEBUG_INFO_BTF_MODULES= \
      "${kcflags[@]}" modules >"$out/build.log" 2>&1 || built_ok=0
  else
    local in_root=${work#"$chroot_dir"}
    [ -z "$uapi" ] || kcflags=("KCFLAGS=-include $in_root/src/$uapi")
    # objtool reads /proc/self (its stack limit): the build root needs a /proc for the build.
    kmod_chroot_proc="$chroot_dir/proc"
    mkdir -p "$kmod_chroot_proc"
    mountpoint -q "$kmod_chroot_proc" || mount -t proc proc "$kmod_chroot_proc"
    chroot "$chroot_dir" make -s -C "/usr/src/linux-headers-$kmod_kver" M="$in_root/src/drivers/infiniband/sw/$driver" \
      "$config=m" CONFIG_DEBUG_INFO_BTF_MODULES= "${kcflags[@]}" modules >"$out/build.log" 2>&1 || built_ok=0
    umount "$kmod_chroot_proc"
    kmod_chroot_proc=""
  fi
  [ "$built_ok" = 1 ] && cp "$work/src/drivers/infiniband/sw/$driver/$module.ko" "$out/$module.ko"
  rm -rf "$work"
  [ "$built_ok" = 1 ] ||
    { tail -n 30 "$out/build.log" >&2; die "$module.ko build for line $line failed (log: $out/build.log)"; }
  step_done "$module.ko"
}

# kmod_build_cached LINE DRIVER OUT UAPI RECIPE LINK LABEL [PATCH...]: kmod_build, skipped
# when OUT/.complete holds this build's key (the kernel package, the caller's RECIPE number,
# the compiler and the patches' text); then LINK (the path the guest loads) points at
# OUT/<module>.ko. LABEL names the build in the progress lines. Shared by siw-patched.sh,
# fixed-module.sh and benchmark-modules.sh.
kmod_build_cached() {
  local line=$1 driver=$2 out=$3 uapi=$4 recipe=$5 link=$6 label=$7 module key started
  shift 7
  case "$driver" in
    rxe) module=rdma_rxe ;;
    siw) module=siw ;;
    *) die "kmod_build_cached: unknown driver '$driver'" ;;
  esac
  key=$( { echo "$kmod_pkg_version recipe-$recipe $kmod_compiler"; cat "$@" /dev/null; } | sha256sum | cut -c1-16)
  mkdir -p "$(dirname "$link")"
  if [ "$(cat "$out/.complete" 2>/dev/null)" = "$key" ] && [ -f "$out/$module.ko" ]; then
    ln -sfn "$out/$module.ko" "$link"
    note "$label for $kmod_kver (line $line): cached"
    return 0
  fi
  started=$(date +%s.%N)
  rm -f "$out/.complete"
  kmod_build "$line" "$driver" "$out" "$uapi" "$@"
  echo "$key" >"$out/.complete"
  ln -sfn "$out/$module.ko" "$link"
  note "$label for $kmod_kver (line $line) ready in $out ($(elapsed "$started" "$(date +%s.%N)") s)"
}

# kmod_cleanup: for the caller's EXIT trap, a build root's /proc left mounted by a failure.
kmod_chroot_proc=""
kmod_cleanup() {
  [ -n "$kmod_chroot_proc" ] && mountpoint -q "$kmod_chroot_proc" && umount "$kmod_chroot_proc"
  return 0
}
