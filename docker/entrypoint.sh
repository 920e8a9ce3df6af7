#!/usr/bin/env bash
# Container entrypoint: bring up rxe0/siw0 with the same script the QEMU guest uses,
# then run the rdma-interop CLI (default: the interop suite).
set -euo pipefail
root=/opt/rdma-interop
# A lab's NIC (docs/nic.md): no soft device is created when the suite's --device names
# neither rxe0 nor siw0, or with RDMA_INTEROP_SOFT_DEVICES=none (the container then
# needs only the device nodes, no privilege).
soft=${RDMA_INTEROP_SOFT_DEVICES:-create}
previous=
for arg in "$@"; do
  case "$previous:$arg" in
    --device:*) devices=$arg ;;
    *) case "$arg" in --device=*) devices=${arg#--device=} ;; esac ;;
  esac
  previous=$arg
done
if [ -n "${devices:-}" ] && ! printf ',%s,' "$devices" | grep -Eq ',(rxe0|siw0),'; then
  soft=none
fi
[ "$soft" = none ] || bash "$root/scripts/rdma-devices.sh"
exec node "$root/dist/cli/main.js" "$@"
