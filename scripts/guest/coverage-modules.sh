#!/usr/bin/env bash
# coverage-modules.sh load|dump: block coverage in the guest (issue 32). Runs as root.
#   load   rxe0 and siw0 on the trace-pc builds of scripts/setup/coverage-modules.sh: deletes
#          both devices, unloads rdma_rxe and siw, loads rdma_cov.ko (the collector), then the
#          two instrumented modules, and adds rxe0 (dum0) and siw0 (dum1) again. No QP may be
#          open then. Idempotent: nothing happens when rdma_cov is loaded.
#   dump   prints the .text and .text.unlikely addresses of rdma_rxe and siw, then every
#          block address the collector saw (hex, one a line) and the count it lost.
set -euo pipefail
log() { printf '[coverage-modules] %s\n' "$*" >&2; }
dir="${RDMA_INTEROP_CACHE:?RDMA_INTEROP_CACHE is not set (run in the guest)}/coverage-modules/$(uname -r)"
debugfs=/sys/kernel/debug
mountpoint -q "$debugfs" || mount -t debugfs none "$debugfs"

case "${1:-}" in
  load)
    [ -d /sys/module/rdma_cov ] && exit 0
    if [ ! -f "$dir/.complete" ]; then
      log "no coverage modules for kernel $(uname -r) at $dir: build them on the host with" \
        "bash scripts/setup/coverage-modules.sh <line>"
      exit 1
    fi
    for dev in rxe0 siw0; do
      [ -e "/sys/class/infiniband/$dev" ] && timeout 60 rdma link delete "$dev"
    done
    for m in rdma_rxe siw; do [ -d "/sys/module/$m" ] && rmmod "$m"; done
    # Their dependencies (ib_core, udp_tunnel, libcrc32c ...) from the kernel's own tree.
    for m in rdma_rxe siw; do
      modprobe --show-depends "$m" | sed -n 's/^insmod \([^ ]*\).*/\1/p' | grep -v "/$m\.ko" |
        while read -r dep; do
          name=$(basename "$dep" | sed 's/\.ko.*$//; s/-/_/g')
          [ -d "/sys/module/$name" ] || insmod "$dep"
        done
    done
    insmod "$dir/rdma_cov.ko"
    insmod "$dir/rdma_rxe.ko"
    insmod "$dir/siw.ko"
    rdma link add rxe0 type rxe netdev dum0
    rdma link add siw0 type siw netdev dum1
    ;;
  dump)
    for m in rdma_rxe siw; do
      for s in .text .text.unlikely; do
        f="/sys/module/$m/sections/$s"
        [ -r "$f" ] && echo "section $m $s $(cat "$f")"
      done
    done
    echo "lost $(cat "$debugfs/rdma_cov/lost")"
    cat "$debugfs/rdma_cov/pcs"
    ;;
  *)
    log "usage: coverage-modules.sh load|dump"
    exit 2
    ;;
esac
