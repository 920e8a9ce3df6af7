#!/usr/bin/env bash
# The guest assets of every kernel line besides the default one (guest-assets.sh does
# that), and the rdma-core their runs use (rdma-core.sh), for `rdma-interop run --kernels
# all` and the kernel-matrix test. Idempotent and cached by version like its parts.
# RDMA_INTEROP_KERNEL_LINES (default: every line of kernel-lines.sh) narrows it, e.g. to
# `6.1` on a machine that needs only the default kernel.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=scripts/setup/kernel-lines.sh
source "$(dirname "$0")/kernel-lines.sh"

read -r -a wanted <<<"${RDMA_INTEROP_KERNEL_LINES:-${KERNEL_LINES[*]}}"
# The rdma-core the non-default lines run with (src/runtime/kernel-lines.ts).
RDMA_CORE_FOR_NEWER_LINES=56.1
for line in "${wanted[@]}"; do
  [ "$line" = "$DEFAULT_KERNEL_LINE" ] && continue
  started=$(date +%s.%N)
  bash "$(dirname "$0")/guest-assets.sh" "$line"
  bash "$(dirname "$0")/rdma-core.sh" "$RDMA_CORE_FOR_NEWER_LINES" >/dev/null
  note "kernel line $line ready in $(elapsed "$started" "$(date +%s.%N)") s"
done
