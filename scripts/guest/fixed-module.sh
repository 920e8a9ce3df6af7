#!/usr/bin/env bash
# fixed-module.sh rxe|siw stock|fixed: makes rxe0 (or siw0) run on the stock module or on
# the fixed one (patches/<driver>-fixes/, built by scripts/setup/fixed-module.sh, issue 33).
# Runs as root in the guest. Idempotent: nothing happens when the wanted module is loaded
# (told apart by srcversion). Switching deletes the device, reloads the module and adds the
# device again on its dummy netdev (scripts/rdma-devices.sh); no QP may be open on it then.
set -euo pipefail

driver=${1:?usage: fixed-module.sh rxe|siw stock|fixed}
want=${2:?usage: fixed-module.sh rxe|siw stock|fixed}
log() { printf '[fixed-module] %s\n' "$*" >&2; }
case "$driver" in
  rxe) module=rdma_rxe dev=rxe0 netdev=dum0 ;;
  siw) module=siw dev=siw0 netdev=dum1 ;;
  *) log "unknown driver '$driver' (rxe or siw)"; exit 2 ;;
esac
case "$want" in
  stock | fixed) ;;
  *) log "unknown module kind '$want' (stock or fixed)"; exit 2 ;;
esac

# The fixed module sits next to the guest's modules root (a link into the cache).
fixed="${MODULES_ROOT:?MODULES_ROOT is not set (run in the guest)}/../$module-fixes.ko"
if [ "$want" = fixed ] && [ ! -f "$fixed" ]; then
  log "no fixed $module.ko at $fixed for kernel $(uname -r): build it on the host with" \
    "bash scripts/setup/fixed-module.sh $driver <line>"
  exit 1
fi

# The loaded module is told apart by its GNU build id (/sys/module/<m>/notes: the note's
# last 20 bytes are the id): Debian's kernels set no srcversion, and the stock siw.ko is
# built out of tree by the set-up too (so the O taint says nothing).
build_id_of_fixed() { readelf -n "$fixed" 2>/dev/null | sed -n 's/.*Build ID: //p'; }
build_id_loaded() {
  local note="/sys/module/$module/notes/.note.gnu.build-id"
  [ -r "$note" ] && od -An -tx1 -v "$note" | tr -d ' \n' | tail -c 40
}
# Where the build id cannot be read, the mark this script leaves when it loads the fixed one.
mark="/run/rdma-interop-fixed-$module"
loaded_kind() {
  local id
  if [ ! -d "/sys/module/$module" ]; then
    echo none
  elif [ -e "/sys/module/$module/parameters/rfc7306" ]; then
    echo rfc7306
  elif id=$(build_id_loaded) && [ -n "$id" ]; then
    if [ -f "$fixed" ] && [ "$id" = "$(build_id_of_fixed)" ]; then echo fixed; else echo stock; fi
  elif [ -e "$mark" ]; then
    echo fixed
  else
    echo stock
  fi
}

[ "$(loaded_kind)" = "$want" ] && exit 0
if [ -e "/sys/class/infiniband/$dev" ]; then
  # Bounded: a process holding the device open makes the delete wait (siw has no
  # disassociate_ucontext).
  rdma link delete "$dev" &
  deleter=$!
  for _ in $(seq 60); do
    kill -0 "$deleter" 2>/dev/null || break
    sleep 1
  done
  if kill -0 "$deleter" 2>/dev/null; then
    log "rdma link delete $dev did not finish within 60 s"
    exit 1
  fi
  wait "$deleter"
fi
[ -d "/sys/module/$module" ] && rmmod "$module"
rm -f "$mark"
if [ "$want" = fixed ]; then
  # The dependencies (ib_core, ib_uverbs, udp_tunnel, ...) come from the kernel's own tree.
  modprobe --show-depends "$module" | sed -n 's/^insmod \([^ ]*\).*/\1/p' | grep -v "/$module\.ko" |
    while read -r dep; do
      name=$(basename "$dep" | sed 's/\.ko.*$//; s/-/_/g')
      [ -d "/sys/module/$name" ] || insmod "$dep"
    done
  insmod "$fixed"
  touch "$mark"
else
  modprobe "$module"
fi
ip link show "$netdev" >/dev/null 2>&1 && rdma link add "$dev" type "$driver" netdev "$netdev"
log "$dev runs on the $(loaded_kind) $module.ko"
