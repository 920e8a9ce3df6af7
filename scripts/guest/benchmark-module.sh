#!/usr/bin/env bash
# benchmark-module.sh rxe|siw MODULE.ko: makes rxe0 (or siw0) run on MODULE.ko, a module
# variant with one 2026 receive-path fix taken back out (scripts/setup/benchmark-modules.sh,
# issue 32), before `probe --benchmark` sends anything. Runs as root in the guest, before
# any QP is open. Deletes the device, replaces the module (its dependencies from the
# kernel's own tree) and adds the device again on its dummy netdev (scripts/rdma-devices.sh).
# The siw variant is built from the stock source, so the probe's stock pass keeps it.
set -euo pipefail

driver=${1:?usage: benchmark-module.sh rxe|siw MODULE.ko}
ko=${2:?usage: benchmark-module.sh rxe|siw MODULE.ko}
log() { printf '[benchmark-module] %s\n' "$*" >&2; }
case "$driver" in
  rxe) module=rdma_rxe dev=rxe0 netdev=dum0 ;;
  siw) module=siw dev=siw0 netdev=dum1 ;;
  *) log "unknown driver '$driver' (rxe or siw)"; exit 2 ;;
esac
[ -f "$ko" ] || { log "no module at $ko"; exit 1; }

if [ -e "/sys/class/infiniband/$dev" ]; then
  # Bounded: a holder of the device would make the delete wait for ever (siw).
  timeout 60 rdma link delete "$dev" || { log "rdma link delete $dev did not finish"; exit 1; }
fi
[ -d "/sys/module/$module" ] && rmmod "$module"
modprobe --show-depends "$module" | sed -n 's/^insmod \([^ ]*\).*/\1/p' | grep -v "/$module\.ko" |
  while read -r dep; do
    name=$(basename "$dep" | sed 's/\.ko.*$//; s/-/_/g')
    [ -d "/sys/module/$name" ] || insmod "$dep"
  done
insmod "$ko"
ip link show "$netdev" >/dev/null 2>&1 && rdma link add "$dev" type "$driver" netdev "$netdev"
log "$dev runs on $(basename "$ko") ($(readelf -n "$ko" 2>/dev/null | sed -n 's/.*Build ID: //p'))"
