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
# The stock siw.ko stays what modprobe loads; this one is insmod-ed on request only. The
# build is scripts/lib/kernel-module.sh's, shared with fixed-module.sh: the line's
# linux-source and headers are fetched once per kernel version into the cache and reused.
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
patch_dir="$RDMA_INTEROP_ROOT/patches/siw"
# Bump when the recipe (scripts/lib/kernel-module.sh) changes what is built.
recipe=2
started=$(date +%s.%N)

if [ $# -gt 0 ]; then
  lines=("$@")
else
  read -r -a lines <<<"${RDMA_INTEROP_KERNEL_LINES:-${KERNEL_LINES[*]}}"
fi

# The matching libsiw: rdma-core 56.1 with patches/rdma-core/ (its own cache and key), the
# same for every line.
rdma_core=$(bash "$RDMA_INTEROP_ROOT/scripts/setup/rdma-core.sh" 56.1 "$RDMA_INTEROP_ROOT/patches/rdma-core" | tail -n1)
[ -d "$rdma_core/lib" ] || die "the patched rdma-core build is missing ($rdma_core)"
trap kmod_cleanup EXIT

# build_line LINE: the patched siw.ko of one line, cached.
build_line() {
  local line=$1 out patches=()
  if ! kmod_line "$line"; then
    note "no guest assets for kernel line $line: no patched siw.ko for it (scripts/setup/guest-assets.sh $line)"
    return 0
  fi
  out="$RDMA_INTEROP_CACHE/siw-rfc7306/$kmod_kver"
  mkdir -p "$out"
  ln -sfn "$rdma_core" "$guest_cache/$kmod_kver/siw-rfc7306-rdma-core"
  mapfile -t patches < <(kmod_series_of "$patch_dir" "$line")
  kmod_build_cached "$line" siw "$out" include/uapi/rdma/siw-abi.h "$recipe" \
    "$guest_cache/$kmod_kver/siw-rfc7306.ko" "patched siw.ko" "${patches[@]}"
}

# One build at a time per cache.
mkdir -p "$RDMA_INTEROP_CACHE/siw-rfc7306"
exec 9>"$RDMA_INTEROP_CACHE/siw-rfc7306/.lock"
flock 9
for line in "${lines[@]}"; do
  build_line "$line"
done
note "patched siw for lines ${lines[*]}: $(elapsed "$started" "$(date +%s.%N)") s"
