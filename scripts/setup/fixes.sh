#!/usr/bin/env bash
# fixes.sh [LINE...]: everything the fixed build of issue 33 needs, cached and idempotent:
# the reproducers (repro.sh), rdma-core 56.1 with patches/rdma-core-fixes/ (the fixed librxe
# and libsiw), and per kernel line the fixed rdma_rxe.ko and siw.ko (fixed-module.sh), with
#   $RDMA_INTEROP_CACHE/guest/<kver>/fixes-rdma-core   link to that rdma-core build
# next to the modules' links, where scripts/guest/repro-all.sh finds them.
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
for line in "${lines[@]}"; do
  link="$RDMA_INTEROP_CACHE/guest/line-$line"
  [ -L "$link" ] || { note "no guest assets for kernel line $line: no fixed build for it"; continue; }
  ln -sfn "$rdma_core" "$RDMA_INTEROP_CACHE/guest/$(basename "$(readlink "$link")")/fixes-rdma-core"
done
bash "$RDMA_INTEROP_ROOT/scripts/setup/fixed-module.sh" rxe "${lines[@]}"
bash "$RDMA_INTEROP_ROOT/scripts/setup/fixed-module.sh" siw "${lines[@]}"
note "fixed build for lines ${lines[*]}: $(elapsed "$started" "$(date +%s.%N)") s"
