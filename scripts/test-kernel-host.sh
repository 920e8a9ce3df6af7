#!/usr/bin/env bash
# The kernel tests on this machine's own RDMA devices: what scripts/test.sh runs on a host
# where /sys/class/infiniband is not empty (and what a check inside the QEMU guest runs to
# test that path, where devices exist).
#   usage: scripts/test-kernel-host.sh <results-dir> <node> [test files...]
# The kernel tests need rxe0 on dum0 and siw0 on dum1 (scripts/rdma-devices.sh makes them,
# keeping whatever exists; it needs root). Writes <results-dir>/kernel.json.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
results=${1:?usage: test-kernel-host.sh <results-dir> <node> [files...]}
node_bin=${2:?usage: test-kernel-host.sh <results-dir> <node> [files...]}
shift 2

echo "== kernel tests on this host's devices: $(cd /sys/class/infiniband && echo *)"
if ! bash scripts/rdma-devices.sh; then
  echo "test: rxe0 and siw0 could not be made on this host (scripts/rdma-devices.sh needs root);" \
    "the kernel tests run against them" >&2
  exit 1
fi
RDMA_INTEROP_ROOT="$root" RDMA_INTEROP_SHARE="$results" "$node_bin" node_modules/vitest/vitest.mjs \
  run --project kernel --reporter=default --reporter=json \
  --outputFile.json="$results/kernel.json" "$@"
