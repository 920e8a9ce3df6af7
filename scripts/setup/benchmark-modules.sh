#!/usr/bin/env bash
# benchmark-modules.sh [LINE...]: builds, per kernel line, one rxe or siw module variant per
# 2026 receive-path fix taken back out (patches/reverted-2026/<line>/<bug>.patch, written by
# patches/reverted-2026/revert.py; issue 32's benchmark). Cached and idempotent:
#   $RDMA_INTEROP_CACHE/benchmark-modules/<kver>/<bug>/<module>.ko   keyed by kernel + patch
#   $RDMA_INTEROP_CACHE/guest/<kver>/benchmark/<bug>.ko              link `probe --benchmark`
#                                                                   loads (benchmark-module.sh)
# A bug whose fix is not in a line's source has no patch there (not-applicable.txt says why).
# The build is scripts/lib/kernel-module.sh's (the line's linux-source, its own compiler).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=scripts/setup/suite-apt.sh
source "$(dirname "$0")/suite-apt.sh"
# shellcheck source=scripts/setup/kernel-lines.sh
source "$(dirname "$0")/kernel-lines.sh"
# shellcheck source=scripts/lib/kernel-module.sh
source "$(dirname "$0")/../lib/kernel-module.sh"

guest_cache="$RDMA_INTEROP_CACHE/guest"
# Bump when the recipe (scripts/lib/kernel-module.sh) changes what is built.
recipe=1
started=$(date +%s.%N)
if [ $# -gt 0 ]; then
  lines=("$@")
else
  read -r -a lines <<<"${RDMA_INTEROP_KERNEL_LINES:-${KERNEL_LINES[*]}}"
fi
trap kmod_cleanup EXIT

build_variant() {
  local line=$1 patch=$2 bug driver
  bug=$(basename "$patch" .patch)
  case "$bug" in
    rxe-*) driver=rxe ;;
    siw-*) driver=siw ;;
    *) die "benchmark-modules.sh: $patch names no driver (rxe-* or siw-*)" ;;
  esac
  kmod_build_cached "$line" "$driver" "$RDMA_INTEROP_CACHE/benchmark-modules/$kmod_kver/$bug" "" \
    "$recipe" "$guest_cache/$kmod_kver/benchmark/$bug.ko" "benchmark $bug" "$patch"
}

mkdir -p "$RDMA_INTEROP_CACHE/benchmark-modules"
exec 9>"$RDMA_INTEROP_CACHE/benchmark-modules/.lock"
flock 9
for line in "${lines[@]}"; do
  if ! kmod_line "$line"; then
    note "no guest assets for kernel line $line: no benchmark modules for it"
    continue
  fi
  for patch in "$RDMA_INTEROP_ROOT/patches/reverted-2026/$line"/*.patch; do
    [ -f "$patch" ] && build_variant "$line" "$patch"
  done
done
note "benchmark modules for lines ${lines[*]}: $(elapsed "$started" "$(date +%s.%N)") s"
