#!/usr/bin/env bash
# fixed-module.sh rxe|siw stock|fixed, or siw rfc7306-fixed: makes rxe0 (or siw0) run on
# the stock module or on the fixed one (patches/<driver>-fixes/, built by
# scripts/setup/fixed-module.sh, issue 33); rfc7306-fixed: siw0 on the RFC 7306 series with
# the fixes on top (siw-rfc7306-fixes.ko, loaded with rfc7306=1; `run --fixes --siw rfc7306`).
# Runs as root in the guest. Idempotent: nothing happens when the wanted module is loaded
# (told apart by srcversion). Switching deletes the device, reloads the module and adds the
# device again on its dummy netdev (scripts/rdma-devices.sh); no QP may be open on it then.
set -euo pipefail

usage='usage: fixed-module.sh rxe|siw stock|fixed, or siw rfc7306-fixed'
driver=${1:?$usage}
want=${2:?$usage}
log() { printf '[fixed-module] %s\n' "$*" >&2; }
case "$driver" in
  rxe) module=rdma_rxe dev=rxe0 netdev=dum0 ;;
  siw) module=siw dev=siw0 netdev=dum1 ;;
  *) log "unknown driver '$driver' (rxe or siw)"; exit 2 ;;
esac
case "$driver/$want" in
  */stock | */fixed | siw/rfc7306-fixed) ;;
  *) log "unknown module kind '$want' for $driver (stock or fixed; siw also rfc7306-fixed)"; exit 2 ;;
esac

# The fixed modules sit next to the guest's modules root (links into the cache).
assets="${MODULES_ROOT:?MODULES_ROOT is not set (run in the guest)}/.."
fixed="$assets/$module-fixes.ko"
combined="$assets/siw-rfc7306-fixes.ko"
wanted_file=$fixed setup=$driver params=()
if [ "$want" = rfc7306-fixed ]; then
  wanted_file=$combined setup=siw-rfc7306 params=(rfc7306=1)
fi
if [ "$want" != stock ] && [ ! -f "$wanted_file" ]; then
  log "no $want $module.ko at $wanted_file for kernel $(uname -r): build it on the host with" \
    "bash scripts/setup/fixed-module.sh $setup <line>"
  exit 1
fi

# The loaded module is told apart by its GNU build id (/sys/module/<m>/notes: the note's
# last 20 bytes are the id): Debian's kernels set no srcversion, and the stock siw.ko is
# built out of tree by the set-up too (so the O taint says nothing).
build_id_of() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: //p'; }
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
    # The RFC 7306 series alone (siw-module.sh's) or with the fixes (this script's).
    if id=$(build_id_loaded) && [ -n "$id" ] && [ -f "$combined" ] &&
      [ "$id" = "$(build_id_of "$combined")" ]; then
      echo rfc7306-fixed
    elif [ "$(cat "$mark" 2>/dev/null)" = rfc7306-fixed ]; then
      echo rfc7306-fixed
    else
      echo rfc7306
    fi
  elif id=$(build_id_loaded) && [ -n "$id" ]; then
    if [ -f "$fixed" ] && [ "$id" = "$(build_id_of "$fixed")" ]; then echo fixed; else echo stock; fi
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
if [ "$want" != stock ]; then
  # The dependencies (ib_core, ib_uverbs, udp_tunnel, ...) come from the kernel's own tree.
  modprobe --show-depends "$module" | sed -n 's/^insmod \([^ ]*\).*/\1/p' | grep -v "/$module\.ko" |
    while read -r dep; do
      name=$(basename "$dep" | sed 's/\.ko.*$//; s/-/_/g')
      [ -d "/sys/module/$name" ] || insmod "$dep"
    done
  insmod "$wanted_file" "${params[@]}"
  echo "$want" >"$mark"
else
  modprobe "$module"
fi
ip link show "$netdev" >/dev/null 2>&1 && rdma link add "$dev" type "$driver" netdev "$netdev"
log "$dev runs on the $(loaded_kind) $module.ko"
