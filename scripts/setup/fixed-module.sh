#!/usr/bin/env bash
# fixed-module.sh rxe|siw|siw-rfc7306 [LINE...]: builds the fixed driver module (the line's
# own rxe or siw source with patches/<driver>-fixes/*.patch, issue 33; siw-rfc7306: the
# RFC 7306 series patches/siw/ first, then patches/siw-fixes/) for each kernel line whose guest
# assets exist (default: RDMA_INTEROP_KERNEL_LINES, else every line of kernel-lines.sh):
#   $RDMA_INTEROP_CACHE/<driver>-fixes/<kver>/<module>.ko  the build, keyed by kernel + patches
#   $RDMA_INTEROP_CACHE/guest/<kver>/<module>-fixes.ko      link the guest loads it by
#                                                         (scripts/guest/fixed-module.sh)
# <module> is rdma_rxe or siw. A line may replace one patch by
# patches/<driver>-fixes/<line>/<same name> (as patches/siw/ does), and add its own after the
# series (a name only its directory has: a fix of code only that line has). The build is
# scripts/lib/kernel-module.sh's, shared with siw-patched.sh: the line's linux-source and
# headers are fetched once per kernel version into the cache (linux-src/<pkg version>/, also
# the pristine source and checkpatch.pl the patches are written against). The stock module
# stays what modprobe loads.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=scripts/setup/suite-apt.sh
source "$(dirname "$0")/suite-apt.sh"
# shellcheck source=scripts/setup/kernel-lines.sh
source "$(dirname "$0")/kernel-lines.sh"
# shellcheck source=scripts/lib/kernel-module.sh
source "$(dirname "$0")/../lib/kernel-module.sh"

driver=${1:-}
# siw-rfc7306: the RFC 7306 series (patches/siw/) and then the fixes on the same source, for
# --fixes with --siw rfc7306 (docs/findings.md): siw.ko as <cache>/siw-rfc7306-fixes/,
# linked as siw-rfc7306-fixes.ko; the uapi header the series changes comes from the tree.
series_dirs=("$RDMA_INTEROP_ROOT/patches/$driver-fixes")
uapi=""
case "$driver" in
  rxe) module=rdma_rxe kind=rxe ;;
  siw) module=siw kind=siw ;;
  siw-rfc7306)
    module=siw kind=siw uapi=include/uapi/rdma/siw-abi.h
    series_dirs=("$RDMA_INTEROP_ROOT/patches/siw" "$RDMA_INTEROP_ROOT/patches/siw-fixes")
    ;;
  *) die "usage: fixed-module.sh rxe|siw|siw-rfc7306 [LINE...]" ;;
esac
shift
guest_cache="$RDMA_INTEROP_CACHE/guest"
link_name=$module-fixes.ko
[ "$driver" != siw-rfc7306 ] || link_name=siw-rfc7306-fixes.ko
# Bump when the recipe (scripts/lib/kernel-module.sh) changes what is built.
recipe=1
started=$(date +%s.%N)

if [ $# -gt 0 ]; then
  lines=("$@")
else
  read -r -a lines <<<"${RDMA_INTEROP_KERNEL_LINES:-${KERNEL_LINES[*]}}"
fi
trap kmod_cleanup EXIT

build_line() {
  local line=$1 out patches=() dir p
  if ! kmod_line "$line"; then
    note "no guest assets for kernel line $line: no fixed $module.ko for it"
    return 0
  fi
  out="$RDMA_INTEROP_CACHE/$driver-fixes/$kmod_kver"
  for dir in "${series_dirs[@]}"; do
    mapfile -t -O "${#patches[@]}" patches < <(kmod_series_of "$dir" "$line")
    # Then the line's own fixes, for code only that line has (rxe ODP: 7.3), in name order.
    for p in "$dir/$line"/*.patch; do
      [ -f "$p" ] && [ ! -e "$dir/$(basename "$p")" ] && patches+=("$p")
    done
  done
  kmod_build_cached "$line" "$kind" "$out" "$uapi" "$recipe" \
    "$guest_cache/$kmod_kver/$link_name" "fixed $module.ko ($driver)" "${patches[@]}"
}

mkdir -p "$RDMA_INTEROP_CACHE/$driver-fixes"
exec 9>"$RDMA_INTEROP_CACHE/$driver-fixes/.lock"
flock 9
for line in "${lines[@]}"; do
  build_line "$line"
done
note "fixed $module for lines ${lines[*]}: $(elapsed "$started" "$(date +%s.%N)") s"
