#!/usr/bin/env bash
# Network of one guest of a pair (src/runtime/pair.ts), then runs the command given as
# arguments. RDMA_INTEROP_LINK lists the guest's link NICs, space separated, each
# `<mac>,<address/prefix>,<device>,<type>` (e.g. `52:54:00:0a:00:01,192.0.2.1/24,rxe0,rxe`).
# For each: the virtio-net NIC with that MAC gets the address, and the soft RDMA device
# of that name moves onto it (the single-guest rxe0/siw0 on their dummy netdevs are
# removed first, with the dummies, so that names and subnets do not clash; one device per
# netdev so that rdma_cm picks the right one, kernel-runtime.md).
set -euo pipefail

log() { printf '[link] %s\n' "$*" >&2; }

[ -n "${RDMA_INTEROP_LINK:-}" ] || { log "RDMA_INTEROP_LINK is empty"; exit 2; }
modprobe virtio_net

nic_of() { # mac -> netdev name
  local f
  for f in /sys/class/net/*/address; do
    if [ "$(cat "$f")" = "$1" ]; then
      basename "$(dirname "$f")"
      return 0
    fi
  done
  return 1
}

# The single-guest devices and their dummies go first: the link reuses their names and
# subnets.
for entry in $RDMA_INTEROP_LINK; do
  IFS=, read -r _ _ device _ <<<"$entry"
  if [ -e "/sys/class/infiniband/$device" ]; then rdma link delete "$device"; fi
done
for dummy in dum0 dum1; do
  if ip link show "$dummy" >/dev/null 2>&1; then ip link delete "$dummy"; fi
done

for entry in $RDMA_INTEROP_LINK; do
  IFS=, read -r mac address device type <<<"$entry"
  nic=''
  for _ in $(seq 100); do
    nic=$(nic_of "$mac") && break
    sleep 0.05
  done
  [ -n "$nic" ] || { log "no NIC with MAC $mac"; exit 2; }
  ip addr replace "$address" dev "$nic"
  ip link set "$nic" up
  rdma link add "$device" type "$type" netdev "$nic"
  log "$device ($type) on $nic $address"
done
exec "$@"
