#!/bin/bash
# ulp-nvme.sh ADDRESS TAG MIB FILES [TRANSPORT]: NVMe over Fabrics over the RDMA device that owns
# ADDRESS, in the guest (issue 35); TRANSPORT tcp (default rdma) runs NVMe/TCP instead, the
# speed reference. FILES is unused (the NFS script's argument; the 4 KiB blocks are fixed). The kernel's nvmet-rdma target, configured through configfs
# (Documentation/nvme/ and drivers/nvme/target/configfs.c), backed by a memory-backed
# null_blk (its writes are kept, so what is read back is what was written), and the
# kernel's nvme-rdma host connected with `nvme connect -t rdma` (nvme-cli from Debian,
# unpacked by scripts/setup/ulp-packages.sh into $ULP_ROOT). I/O: MIB MiB of random data
# written with O_DIRECT in 1 MiB and 4 KiB blocks, read back, compared by SHA-256.
# Prints `ulp KEY VALUE` lines (src/ulp/script-output.ts reads them); exits non-zero on
# the first failure with `ulp error TEXT`. ULP_ROLE (ulp-common.sh) splits target and host
# across the two-guest link.
set -uo pipefail
address=$1 tag=$2 mib=${3:-8} transport=${5:-rdma}
case "$transport" in rdma | tcp) ;; *) echo "ulp error unknown transport $transport"; exit 1 ;; esac
: "${ULP_ROOT:?ULP_ROOT (the unpacked packages) is not set}"
export LD_LIBRARY_PATH="$ULP_ROOT/usr/lib/x86_64-linux-gnu:$ULP_ROOT/lib/x86_64-linux-gnu"
nvme="$ULP_ROOT/usr/sbin/nvme"
nqn="nqn.2026-12.org.rdma-interop:ulp-$tag"
# One host identity per boot, its NQN naming its host ID: from 6.12 on, nvme-fabrics refuses
# a connect whose host ID it has seen with another host NQN ("found same hostid ... but
# different hostnqn"), and nvme-cli's default host ID comes from the machine (DMI).
[ -s /run/ulp-nvme-hostid ] || cat /proc/sys/kernel/random/uuid >/run/ulp-nvme-hostid
hostid=$(cat /run/ulp-nvme-hostid)
hostnqn="nqn.2014-08.org.nvmexpress:uuid:$hostid"
cfg=/sys/kernel/config/nvmet
port_id=$((RANDOM % 1000 + 1))
work=$(mktemp -d /tmp/ulp-nvme.XXXXXX)

# shellcheck source=scripts/guest/ulp-common.sh
source "$(dirname "$0")/ulp-common.sh"

cleanup() {
  "$nvme" disconnect -n "$nqn" >/dev/null 2>&1
  rm -f "$cfg/ports/$port_id/subsystems/$nqn" 2>/dev/null
  rmdir "$cfg/ports/$port_id" 2>/dev/null
  echo 0 >"$cfg/subsystems/$nqn/namespaces/1/enable" 2>/dev/null
  rmdir "$cfg/subsystems/$nqn/namespaces/1" "$cfg/subsystems/$nqn" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || fail "cannot mount configfs"
modules=(nvmet "nvmet-$transport" "nvme-$transport")
[ "$role" = target ] && modules=(nvmet "nvmet-$transport")
[ "$role" = initiator ] && modules=("nvme-$transport")
for m in "${modules[@]}"; do
  modprobe "$m" 2>"$work/modprobe" || fail "modprobe $m: $(cat "$work/modprobe")"
done
# null_blk: one memory-backed device of 1 GiB (pages are allocated on write).
if [ "$role" != initiator ] && [ ! -b /dev/nullb0 ]; then
  modprobe null_blk nr_devices=1 gb=1 memory_backed=1 2>"$work/modprobe" ||
    fail "modprobe null_blk: $(cat "$work/modprobe")"
fi
[ "$role" = initiator ] || [ -b /dev/nullb0 ] || fail "null_blk made no /dev/nullb0"

# The target.
if [ "$role" != initiator ]; then
  mkdir "$cfg/subsystems/$nqn" || fail "cannot create the subsystem in configfs"
  echo 1 >"$cfg/subsystems/$nqn/attr_allow_any_host"
  mkdir "$cfg/subsystems/$nqn/namespaces/1"
  echo -n /dev/nullb0 >"$cfg/subsystems/$nqn/namespaces/1/device_path"
  echo 1 >"$cfg/subsystems/$nqn/namespaces/1/enable" || fail "cannot enable the namespace"
  mkdir "$cfg/ports/$port_id"
  echo "$transport" >"$cfg/ports/$port_id/addr_trtype"
  echo ipv4 >"$cfg/ports/$port_id/addr_adrfam"
  echo "$address" >"$cfg/ports/$port_id/addr_traddr"
  echo 4420 >"$cfg/ports/$port_id/addr_trsvcid"
  ln -s "$cfg/subsystems/$nqn" "$cfg/ports/$port_id/subsystems/$nqn" 2>"$work/link" ||
    fail "the $transport port on $address:4420 was refused: $(cat "$work/link") $(dmesg | tail -n 3 | tr '\n' ' ')"
  say target "$nqn on $transport $address:4420"
fi
if [ "$role" = target ]; then
  serve_until_done
  say target-served yes
  exit 0
fi

# The host.
t0=$(now)
"$nvme" connect -t "$transport" -a "$address" -s 4420 -n "$nqn" -q "$hostnqn" -I "$hostid" >"$work/connect" 2>&1 ||
  fail "nvme connect -t $transport -a $address: $(tr '\n' ' ' <"$work/connect") $(dmesg | tail -n 3 | tr '\n' ' ')"
say connect-seconds "$(seconds "$t0" "$(now)")"
# The namespace's block device: under the subsystem (native multipath, Debian's default)
# or under the controller.
disk=""
for _ in $(seq 100); do
  for s in /sys/class/nvme-subsystem/* /sys/class/nvme/*; do
    [ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$nqn" ] || continue
    for n in "$s"/nvme*n1; do
      b=$(basename "$n")
      [[ "$b" =~ ^nvme[0-9]+n1$ ]] && [ -b "/dev/$b" ] && disk=/dev/$b && break 3
    done
  done
  sleep 0.1
done
[ -n "$disk" ] || fail "no block device for $nqn after connect"
say disk "$disk"

# I/O with verification: large blocks (RDMA Read by the target for writes, RDMA Write for
# reads), then small ones (4 KiB, within the inline data the host may send in the command
# capsule).
verified_block_io "$disk" "$mib" "$work"

t0=$(now)
"$nvme" disconnect -n "$nqn" >"$work/disconnect" 2>&1 || fail "nvme disconnect: $(cat "$work/disconnect")"
say disconnect-seconds "$(seconds "$t0" "$(now)")"
say verified yes
