#!/usr/bin/env bash
# coverage-modules.sh [LINE...]: block coverage builds (issue 32) for each kernel line whose
# guest assets exist and whose modules build with the host's gcc (default: 6.1):
#   $RDMA_INTEROP_CACHE/coverage-modules/<kver>/rdma_cov.ko   the collector
#                                                               (scripts/coverage/rdma_cov.c)
#   $RDMA_INTEROP_CACHE/coverage-modules/<kver>/rdma_rxe.ko   rxe and siw from the line's own
#   $RDMA_INTEROP_CACHE/coverage-modules/<kver>/siw.ko        linux-source, unpatched, with
#                                                               -fsanitize-coverage=trace-pc
#                                                               and their debug info kept
# The guest loads them with scripts/guest/coverage-modules.sh; src/coverage/blocks.ts maps
# the addresses the collector saw to source lines (readelf + addr2line on these .ko).
# Idempotent: a build is redone only when the line's source version, the collector or this
# recipe changes. The headers and source come from scripts/lib/kernel-module.sh's cache.
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
collector="$RDMA_INTEROP_ROOT/scripts/coverage/rdma_cov.c"
started=$(date +%s.%N)
if [ $# -gt 0 ]; then lines=("$@"); else lines=(6.1); fi

build_line() {
  local line=$1 out key work hdr d module config
  if ! kmod_line "$line"; then
    note "no guest assets for kernel line $line: no coverage modules for it"
    return 0
  fi
  if [ "$kmod_compiler" != host ]; then
    note "line $line builds its modules in a build root ($kmod_compiler): no coverage modules for it yet"
    return 0
  fi
  out="$RDMA_INTEROP_CACHE/coverage-modules/$kmod_kver"
  key=$( { echo "$kmod_pkg_version recipe-$recipe"; cat "$collector"; } | sha256sum | cut -c1-16)
  if [ "$(cat "$out/.complete" 2>/dev/null)" = "$key" ]; then
    note "coverage modules for $kmod_kver (line $line): cached"
    return 0
  fi
  kmod_fetch ""
  hdr="$RDMA_INTEROP_CACHE/linux-headers/$kmod_kver/usr/src/linux-headers-$kmod_kver"
  rm -rf "$out"
  mkdir -p "$out"
  work="$out/work"
  mkdir -p "$work/cov" "$work/src/drivers/infiniband/sw"
  step "building rdma_cov.ko, rdma_rxe.ko and siw.ko with trace-pc for line $line"
  cp "$collector" "$work/cov/rdma_cov.c"
  echo 'obj-m += rdma_cov.o' >"$work/cov/Kbuild"
  make -s -C "$hdr" M="$work/cov" CONFIG_DEBUG_INFO_BTF_MODULES= modules >"$out/build.log" 2>&1 ||
    { tail -n 30 "$out/build.log" >&2; die "rdma_cov.ko build for line $line failed (log: $out/build.log)"; }
  for d in rxe siw; do
    case "$d" in
      rxe) module=rdma_rxe config=CONFIG_RDMA_RXE ;;
      siw) module=siw config=CONFIG_RDMA_SIW ;;
    esac
    cp -a "$(kmod_source_dir)/drivers/infiniband/sw/$d" "$work/src/drivers/infiniband/sw/"
    make -s -C "$hdr" M="$work/src/drivers/infiniband/sw/$d" "$config=m" CONFIG_DEBUG_INFO_BTF_MODULES= \
      KCFLAGS=-fsanitize-coverage=trace-pc KBUILD_EXTRA_SYMBOLS="$work/cov/Module.symvers" \
      modules >>"$out/build.log" 2>&1 ||
      { tail -n 30 "$out/build.log" >&2; die "$module.ko (trace-pc) build for line $line failed (log: $out/build.log)"; }
    cp "$work/src/drivers/infiniband/sw/$d/$module.ko" "$out/$module.ko"
  done
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
