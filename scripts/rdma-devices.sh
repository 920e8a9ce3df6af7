#!/usr/bin/env bash
# Creates the soft RDMA devices the suite runs on. One code path for both runtimes: the
# QEMU guest's stage2 and the Docker image's entrypoint call this script.
#   rxe0 (Soft-RoCE, RoCEv2)  on dummy netdev dum0, 192.0.2.1/24    (RFC 5737 TEST-NET-1)
#   siw0 (Soft-iWARP)         on dummy netdev dum1, 198.51.100.1/24 (RFC 5737 TEST-NET-2)
# Each device gets its own netdev: with both on one netdev rdma_cm picks the first one
# registered, on lo rdma_cm fails for rxe and siw is unusable (kernel-runtime.md).
# Idempotent: existing links and devices are kept.
set -euo pipefail

log() { printf '[devices] %s\n' "$*" >&2; }

# RDMA_INTEROP_SIW=rfc7306: siw0 on the patched siw.ko (patches/siw/, RFC 7306), loaded
# before the modprobe below would load the stock one.
if [ "${RDMA_INTEROP_SIW:-stock}" = rfc7306 ]; then
  bash "$(dirname "$0")/guest/siw-module.sh" rfc7306 || log "warning: the patched siw.ko did not load"
fi

# RDMA_INTEROP_FIXES=1 (vm --fixes): rxe0 and siw0 on the fixed modules (patches/*-fixes,
# issue 33), loaded before the modprobe below would load the stock ones.
if [ "${RDMA_INTEROP_FIXES:-}" = 1 ]; then
  for driver in rxe siw; do
    bash "$(dirname "$0")/guest/fixed-module.sh" "$driver" fixed || log "warning: the fixed $driver module did not load"
  done
fi

# modprobe: the modules may live in a non-standard root (the guest points /lib/modules at
# the extracted Debian kernel; a container uses the host's /lib/modules).
for m in rdma_rxe siw rdma_ucm ib_uverbs dummy; do
  if ! modprobe "$m" 2>/dev/null; then
    [ -d "/sys/module/$m" ] || log "warning: modprobe $m failed (not available in this kernel?)"
  fi
done

# Only what is missing is changed: a container without CAP_NET_ADMIN (the device nodes
# only, devices made by the host) finds everything in place and changes nothing.
is_up() { ip -o link show "$1" 2>/dev/null | grep -q '[<,]UP[,>]'; }

add_dummy() { # name address
  if ! ip link show "$1" >/dev/null 2>&1; then
    ip link add "$1" type dummy
  fi
  ip -o addr show dev "$1" | grep -q " inet $2 " || ip addr replace "$2" dev "$1"
  is_up "$1" || ip link set "$1" up
}

add_rdma_link() { # device type netdev
  if [ -e "/sys/class/infiniband/$1" ]; then
    return 0
  fi
  if [ ! -d "/sys/module/$( [ "$2" = rxe ] && echo rdma_rxe || echo siw)" ]; then
    log "warning: $2 is not loaded; $1 not created"
    return 0
  fi
  rdma link add "$1" type "$2" netdev "$3"
}

is_up lo || ip link set lo up
add_dummy dum0 192.0.2.1/24
add_dummy dum1 198.51.100.1/24
add_rdma_link rxe0 rxe dum0
add_rdma_link siw0 siw dum1

devices=$(cd /sys/class/infiniband 2>/dev/null && echo *)
log "devices: ${devices:-none}"
