#!/usr/bin/env bash
# Container entrypoint: bring up rxe0/siw0 with the same script the QEMU guest uses,
# then run the rdma-interop CLI (default: the interop suite).
set -euo pipefail
root=/opt/rdma-interop
bash "$root/scripts/rdma-devices.sh"
exec node "$root/dist/cli/main.js" "$@"
