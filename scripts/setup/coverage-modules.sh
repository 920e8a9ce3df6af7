#!/usr/bin/env bash
# coverage-modules.sh [LINE...]: block coverage builds (issue 32) for each kernel line whose
# guest assets exist (default: 6.1), with the line's own compiler: the host's gcc (6.1,
# 6.12) or the build root of scripts/setup/build-chroot.sh (7.3), as kernel-module.sh does:
#   $RDMA_INTEROP_CACHE/coverage-modules/<kver>/rdma_cov.ko   the collector
#                                                               (scripts/coverage/rdma_cov.c)
#   $RDMA_INTEROP_CACHE/coverage-modules/<kver>/rdma_rxe.ko   rxe and siw from the line's own
#   $RDMA_INTEROP_CACHE/coverage-modules/<kver>/siw.ko        linux-source, unpatched, with
#                                                               -fsanitize-coverage=trace-pc
#                                                               and their debug info kept
# The guest loads them with scripts/guest/coverage-modules.sh; src/coverage/blocks.ts maps
# the addresses the collector saw to source lines (readelf + addr2line on these .ko).
# Idempotent: a build is redone only when the line's source version, the compiler, the
# collector or this recipe changes. The headers and source come from
# scripts/lib/kernel-module.sh's cache.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=scripts/setup/suite-apt.sh
source "$(dirname "$0")/suite-apt.sh"
# shellcheck source=scripts/setup/kernel-lines.sh
source "$(dirname "$0")/kernel-lines.sh"
# shellcheck source=scripts/lib/kernel-module.sh
source "$(dirname "$0")/../lib/kernel-module.sh"

# Bump when what is built changes.
recipe=1
chroot_dir=""
trap kmod_cleanup EXIT
collector="$RDMA_INTEROP_ROOT/scripts/coverage/rdma_cov.c"
started=$(date +%s.%N)
if [ $# -gt 0 ]; then lines=("$@"); else lines=(6.1); fi

# cov_make DIR ARGS...: kbuild's `modules` for the out-of-tree folder DIR (a path on the
# host) with ARGS, against the line's headers: the cache's with the host's gcc, or those in
# the line's build root, run there (as kmod_build does: DIR must then lie inside the root).
cov_make() {
  local dir=$1
  shift
  if [ -z "$chroot_dir" ]; then
    make -s -C "$RDMA_INTEROP_CACHE/linux-headers/$kmod_kver/usr/src/linux-headers-$kmod_kver" \
      M="$dir" CONFIG_DEBUG_INFO_BTF_MODULES= "$@" modules
  else
    chroot "$chroot_dir" make -s -C "/usr/src/linux-headers-$kmod_kver" M="${dir#"$chroot_dir"}" \
      CONFIG_DEBUG_INFO_BTF_MODULES= "$@" modules
  fi
}

build_line() {
  local line=$1 out key compiler_key work d module config in_root
  if ! kmod_line "$line"; then
    note "no guest assets for kernel line $line: no coverage modules for it"
    return 0
  fi
  chroot_dir=""
  out="$RDMA_INTEROP_CACHE/coverage-modules/$kmod_kver"
  # (The compiler joins the key only for a build root: the host lines' caches stay valid.)
  compiler_key=""
  [ "$kmod_compiler" = host ] || compiler_key=" $kmod_compiler"
  key=$( { echo "$kmod_pkg_version recipe-$recipe$compiler_key"; cat "$collector"; } | sha256sum | cut -c1-16)
  if [ "$(cat "$out/.complete" 2>/dev/null)" = "$key" ]; then
    note "coverage modules for $kmod_kver (line $line): cached"
    return 0
  fi
  if [ "$kmod_compiler" != host ]; then
    chroot_dir=$(bash "$RDMA_INTEROP_ROOT/scripts/setup/build-chroot.sh" "$kmod_compiler" | tail -n1)
  fi
  kmod_fetch "$chroot_dir"
  rm -rf "$out"
  mkdir -p "$out"
  if [ -n "$chroot_dir" ]; then work="$chroot_dir/build-coverage-$BASHPID"; else work="$out/work"; fi
  rm -rf "$work"
  mkdir -p "$work/cov" "$work/src/drivers/infiniband/sw"
  step "building rdma_cov.ko, rdma_rxe.ko and siw.ko with trace-pc for line $line ($kmod_compiler gcc)"
  if [ -n "$chroot_dir" ]; then
    # objtool reads /proc/self (its stack limit): the build root needs a /proc for the build.
    kmod_chroot_proc="$chroot_dir/proc"
    mkdir -p "$kmod_chroot_proc"
    mountpoint -q "$kmod_chroot_proc" || mount -t proc proc "$kmod_chroot_proc"
  fi
  cp "$collector" "$work/cov/rdma_cov.c"
  echo 'obj-m += rdma_cov.o' >"$work/cov/Kbuild"
  cov_make "$work/cov" >"$out/build.log" 2>&1 ||
    { tail -n 30 "$out/build.log" >&2; rm -rf "$work"; die "rdma_cov.ko build for line $line failed (log: $out/build.log)"; }
  in_root=${work#"$chroot_dir"}
  for d in rxe siw; do
    case "$d" in
      rxe) module=rdma_rxe config=CONFIG_RDMA_RXE ;;
      siw) module=siw config=CONFIG_RDMA_SIW ;;
    esac
    cp -a "$(kmod_source_dir)/drivers/infiniband/sw/$d" "$work/src/drivers/infiniband/sw/"
    cov_make "$work/src/drivers/infiniband/sw/$d" "$config=m" \
      KCFLAGS=-fsanitize-coverage=trace-pc KBUILD_EXTRA_SYMBOLS="$in_root/cov/Module.symvers" \
      >>"$out/build.log" 2>&1 ||
      { tail -n 30 "$out/build.log" >&2; rm -rf "$work"; die "$module.ko (trace-pc) build for line $line failed (log: $out/build.log)"; }
    cp "$work/src/drivers/infiniband/sw/$d/$module.ko" "$out/$module.ko"
  done
  if [ -n "$chroot_dir" ]; then
    umount "$kmod_chroot_proc"
    kmod_chroot_proc=""
  fi
  cp "$work/cov/rdma_cov.ko" "$out/rdma_cov.ko"
  # The source the debug info names, for the report's source view.
  cp -a "$work/src" "$out/src"
  find "$out/src" -type f ! -name '*.c' ! -name '*.h' -delete
  rm -rf "$work"
  echo "$key" >"$out/.complete"
  step_done "coverage modules for $kmod_kver in $out"
}

mkdir -p "$RDMA_INTEROP_CACHE/coverage-modules"
exec 9>"$RDMA_INTEROP_CACHE/coverage-modules/.lock"
flock 9
for line in "${lines[@]}"; do
  build_line "$line"
done
note "coverage modules for lines ${lines[*]}: $(elapsed "$started" "$(date +%s.%N)") s"
