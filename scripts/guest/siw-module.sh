#!/usr/bin/env bash
# siw-module.sh stock|rfc7306: makes siw0 run on the stock siw.ko or on the patched one
# (patches/siw/, built by scripts/setup/siw-patched.sh) with rfc7306=1. Runs as root in
# the guest, at device set-up (RDMA_INTEROP_SIW=rfc7306 in the environment) or between
# tests (test/kernel/siw-rfc7306/). Idempotent: nothing happens when the wanted module
# is loaded already. Switching deletes siw0, reloads siw and creates siw0 again on dum1
# (scripts/rdma-devices.sh); no siw QP may be open then.
set -euo pipefail

want=${1:?usage: siw-module.sh stock|rfc7306}
log() { printf '[siw-module] %s\n' "$*" >&2; }

# The patched module sits next to the guest's modules root (a link into the cache).
patched="${MODULES_ROOT:?MODULES_ROOT is not set (run in the guest)}/../siw-rfc7306.ko"

loaded_kind() {
  if [ ! -d /sys/module/siw ]; then
    echo none
  elif [ -e /sys/module/siw/parameters/rfc7306 ] &&
    [ "$(cat /sys/module/siw/parameters/rfc7306)" = Y ]; then
    echo rfc7306
  else
    echo stock
  fi
}

case "$want" in
  stock | rfc7306) ;;
  *) log "unknown module kind '$want' (stock or rfc7306)"; exit 2 ;;
esac
[ "$(loaded_kind)" = "$want" ] && exit 0
if [ "$want" = rfc7306 ] && [ ! -f "$patched" ]; then
  log "no patched siw.ko at $patched for kernel $(uname -r): build it on the host with" \
    "bash scripts/setup/siw-patched.sh <line> (the set-up builds every line unless RDMA_INTEROP_SIW_PATCHED_LINES says fewer)"
  exit 1
fi

# The processes with a verbs device open (a uverbs character device among their fds).
uverbs_holders() {
  local fd pid
  for fd in /proc/[0-9]*/fd/*; do
    case "$(readlink "$fd" 2>/dev/null)" in
      /dev/infiniband/uverbs*)
        pid=${fd#/proc/}
        pid=${pid%%/*}
        printf '%s (%s)\n' "$pid" "$(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-80)"
        ;;
    esac
  done | sort -u | tr '\n' ' '
}

if [ -e /sys/class/infiniband/siw0 ]; then
  # siw has no disassociate_ucontext: deleting the link waits, uninterruptibly, until every
  # process has closed its contexts on siw0. Bounded here, so a holder is an error that
  # names it instead of a hung switch.
  rdma link delete siw0 &
  deleter=$!
  for _ in $(seq 60); do
    kill -0 "$deleter" 2>/dev/null || break
    sleep 1
  done
  if kill -0 "$deleter" 2>/dev/null; then
    log "rdma link delete siw0 did not finish within 60 s: siw0 is still open in $(uverbs_holders)"
    exit 1
  fi
  wait "$deleter"
fi
if [ -d /sys/module/siw ]; then
  rmmod siw
fi
if [ "$want" = rfc7306 ]; then
  # siw's dependencies (ib_core, libcrc32c, ...) come from the kernel's own tree.
  modprobe --show-depends siw | sed -n 's/^insmod \([^ ]*\).*/\1/p' | grep -v '/siw\.ko' |
    while read -r dep; do
      name=$(basename "$dep" | sed 's/\.ko.*$//; s/-/_/g')
      [ -d "/sys/module/$name" ] || insmod "$dep"
    done
  insmod "$patched" rfc7306=1
else
  modprobe siw
fi
ip link show dum1 >/dev/null 2>&1 && rdma link add siw0 type siw netdev dum1
log "siw0 runs on the $(loaded_kind) siw.ko"
