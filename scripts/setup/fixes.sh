#!/usr/bin/env bash
# fixes.sh [LINE...]: everything the fixed build of issue 33 needs, cached and idempotent:
# the reproducers (repro.sh), rdma-core 56.1 with patches/rdma-core-fixes/ (the fixed librxe
# and libsiw), and per kernel line the fixed rdma_rxe.ko and siw.ko (fixed-module.sh), with
#   $RDMA_INTEROP_CACHE/guest/<kver>/fixes-rdma-core   link to that rdma-core build
# next to the modules' links, where scripts/guest/repro-all.sh finds them. For
# `run --fixes --siw rfc7306` (the RFC 7306 series on top of the fixes) it builds the
# combined siw.ko (fixed-module.sh siw-rfc7306) and rdma-core 56.1 with patches/rdma-core/
# then patches/rdma-core-fixes/ (the series directory below, copies in that order), with
#   $RDMA_INTEROP_CACHE/guest/<kver>/siw-rfc7306-fixes-rdma-core   link to that build
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=scripts/setup/kernel-lines.sh
source "$(dirname "$0")/kernel-lines.sh"

started=$(date +%s.%N)
if [ $# -gt 0 ]; then
  lines=("$@")
else
  read -r -a lines <<<"${RDMA_INTEROP_KERNEL_LINES:-${KERNEL_LINES[*]}}"
fi
bash "$RDMA_INTEROP_ROOT/scripts/setup/repro.sh" >/dev/null
rdma_core=$(bash "$RDMA_INTEROP_ROOT/scripts/setup/rdma-core.sh" 56.1 "$RDMA_INTEROP_ROOT/patches/rdma-core-fixes" | tail -n1)
[ -d "$rdma_core/lib" ] || die "the fixed rdma-core build is missing ($rdma_core)"
# rdma-core.sh takes one patch directory and applies it in name order: the combined series
# is a directory of copies (its file search skips links), the RFC 7306 patches first (a-),
# the fixes after (b-). Its cache key is the patches' content, so remaking it keeps the build.
series="$RDMA_INTEROP_CACHE/rdma-core-series/rfc7306-fixes"
rm -rf "$series"
mkdir -p "$series"
for p in "$RDMA_INTEROP_ROOT"/patches/rdma-core/*.patch; do cp "$p" "$series/a-$(basename "$p")"; done
for p in "$RDMA_INTEROP_ROOT"/patches/rdma-core-fixes/*.patch; do cp "$p" "$series/b-$(basename "$p")"; done
combined=$(bash "$RDMA_INTEROP_ROOT/scripts/setup/rdma-core.sh" 56.1 "$series" | tail -n1)
[ -d "$combined/lib" ] || die "the RFC 7306 + fixes rdma-core build is missing ($combined)"
for line in "${lines[@]}"; do
  link="$RDMA_INTEROP_CACHE/guest/line-$line"
  [ -L "$link" ] || { note "no guest assets for kernel line $line: no fixed build for it"; continue; }
  assets="$RDMA_INTEROP_CACHE/guest/$(basename "$(readlink "$link")")"
  ln -sfn "$rdma_core" "$assets/fixes-rdma-core"
  ln -sfn "$combined" "$assets/siw-rfc7306-fixes-rdma-core"
done
bash "$RDMA_INTEROP_ROOT/scripts/setup/fixed-module.sh" rxe "${lines[@]}"
bash "$RDMA_INTEROP_ROOT/scripts/setup/fixed-module.sh" siw "${lines[@]}"
bash "$RDMA_INTEROP_ROOT/scripts/setup/fixed-module.sh" siw-rfc7306 "${lines[@]}"
note "fixed build for lines ${lines[*]}: $(elapsed "$started" "$(date +%s.%N)") s"
