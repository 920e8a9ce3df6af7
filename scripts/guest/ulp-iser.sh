#!/bin/bash
# ulp-iser.sh ADDRESS TAG MIB FILES [TRANSPORT]: iSER over the RDMA device that owns ADDRESS, in
# the guest (issue 35). The kernel's LIO target (configfs, drivers/target/iscsi: a RAM disk
# backstore, one LUN, an iSCSI portal on ADDRESS:3260 with iSER enabled, ib_isert) and the
# kernel's iSER initiator (ib_iser) driven by open-iscsi's iscsid and iscsiadm with the
# built-in `iser` interface (Debian's open-iscsi, unpacked by scripts/setup/ulp-packages.sh
# into $ULP_ROOT; its configuration goes into the guest's throwaway /etc). I/O: MIB MiB in
# 1 MiB blocks and 256 blocks of 4 KiB, O_DIRECT, written, read back, compared by SHA-256.
# TRANSPORT tcp logs in over plain iSCSI/TCP instead. Prints `ulp KEY VALUE` lines.
set -uo pipefail
address=$1 tag=$2 mib=${3:-8} transport=${5:-rdma}
case "$transport" in rdma) iface=iser ;; tcp) iface=default ;; *) echo "ulp error unknown transport $transport"; exit 1 ;; esac
: "${ULP_ROOT:?ULP_ROOT (the unpacked packages) is not set}"
export LD_LIBRARY_PATH="$ULP_ROOT/usr/lib/x86_64-linux-gnu:$ULP_ROOT/lib/x86_64-linux-gnu"
iscsiadm="$ULP_ROOT/sbin/iscsiadm"
iqn="iqn.2026-12.org.rdma-interop:ulp-$tag"
T=/sys/kernel/config/target
tpg="$T/iscsi/$iqn/tpgt_1"
backstore="$T/core/rd_mcp_1/ulp-$tag"
work=$(mktemp -d /tmp/ulp-iser.XXXXXX)

# shellcheck source=scripts/guest/ulp-common.sh
source "$(dirname "$0")/ulp-common.sh"

cleanup() {
  "$iscsiadm" -m node -T "$iqn" -u >/dev/null 2>&1
  "$iscsiadm" -m node -T "$iqn" -o delete >/dev/null 2>&1
  echo 0 >"$tpg/enable" 2>/dev/null
  rmdir "$tpg/np/$address:3260" 2>/dev/null
  rm -f "$tpg/lun/lun_0/ulp" 2>/dev/null
  rmdir "$tpg/lun/lun_0" "$tpg" "$T/iscsi/$iqn" 2>/dev/null
  rmdir "$backstore" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || fail "cannot mount configfs"
mods=(target_core_mod iscsi_target_mod sd_mod scsi_transport_iscsi)
[ "$transport" = rdma ] && mods+=(ib_isert ib_iser)
[ "$transport" = tcp ] && mods+=(iscsi_tcp)
for m in "${mods[@]}"; do
  modprobe "$m" 2>"$work/modprobe" || fail "modprobe $m: $(cat "$work/modprobe")"
done

# The target: a RAM disk of MIB + 1 MiB... rounded up to 64 MiB, one LUN, the portal.
mkdir -p "$backstore" || fail "cannot create the RAM disk backstore in configfs"
echo "rd_pages=16384" >"$backstore/control"
echo 1 >"$backstore/enable" || fail "cannot enable the RAM disk"
mkdir -p "$tpg/lun/lun_0" || fail "cannot create the iSCSI target in configfs"
ln -s "$backstore" "$tpg/lun/lun_0/ulp"
mkdir "$tpg/np/$address:3260" || fail "cannot create the portal $address:3260: $(dmesg | tail -n 2 | tr '\n' ' ')"
if [ "$transport" = rdma ] && ! echo 1 >"$tpg/np/$address:3260/iser" 2>"$work/iser"; then
  # On iWARP the RDMA listen is a TCP listen: the portal's own iSCSI/TCP listener, which
  # LIO creates with the portal, already holds ADDRESS:3260 (isert_setup_id: rdma_listen()
  # failed: -98, seen on 6.1, 6.12 and 7.3 with siw0). A limit of LIO's portals, reported
  # as not run, not a failure of the device.
  if grep -q 'in use' "$work/iser" && [ -d "/sys/class/infiniband/siw0" ] &&
    ip -o addr show | grep -q " $address/.*dum1"; then
    say not-run "LIO's iSCSI/TCP listener of the portal holds $address:3260, which iWARP's RDMA listen needs as a TCP port (isert: rdma_listen() failed: -98); an iSER portal on iWARP needs a portal without iSCSI/TCP, which LIO's configfs does not offer"
    exit 0
  fi
  fail "the iSER portal on $address:3260 was refused: $(cat "$work/iser") $(dmesg | tail -n 3 | tr '\n' ' ')"
fi
echo 0 >"$tpg/attrib/authentication"
echo 1 >"$tpg/attrib/generate_node_acls"
echo 0 >"$tpg/attrib/demo_mode_write_protect"
echo 1 >"$tpg/attrib/cache_dynamic_acls"
echo 1 >"$tpg/enable" || fail "cannot enable the target portal group"
say target "$iqn on $address:3260 ($iface)"

# The initiator: iscsid once per boot.
if ! pgrep -x iscsid >/dev/null; then
  mkdir -p /etc/iscsi /run/lock/iscsi /var/lib/iscsi
  cp -n "$ULP_ROOT/etc/iscsi/iscsid.conf" /etc/iscsi/iscsid.conf 2>/dev/null
  echo "InitiatorName=iqn.2026-12.org.rdma-interop:initiator" >/etc/iscsi/initiatorname.iscsi
  "$ULP_ROOT/sbin/iscsid" >"$work/iscsid" 2>&1 || fail "iscsid: $(cat "$work/iscsid")"
  for _ in $(seq 50); do [ -S /run/iscsid.sock ] || pgrep -x iscsid >/dev/null && break; sleep 0.1; done
fi
t0=$(now)
"$iscsiadm" -m discovery -t st -p "$address:3260" -I "$iface" >"$work/discovery" 2>&1 ||
  fail "discovery over $iface at $address:3260: $(tr '\n' ' ' <"$work/discovery") $(dmesg | tail -n 3 | tr '\n' ' ')"
"$iscsiadm" -m node -T "$iqn" -p "$address:3260" -I "$iface" -l >"$work/login" 2>&1 ||
  fail "login over $iface: $(tr '\n' ' ' <"$work/login") $(dmesg | tail -n 3 | tr '\n' ' ')"
say login-seconds "$(seconds "$t0" "$(now)")"
disk=""
for _ in $(seq 100); do
  for s in /sys/class/iscsi_session/session*; do
    [ "$(cat "$s/targetname" 2>/dev/null)" = "$iqn" ] || continue
    for b in "$s"/device/target*/*/block/*; do
      [ -b "/dev/$(basename "$b")" ] && disk=/dev/$(basename "$b") && break 3
    done
  done
  sleep 0.1
done
[ -n "$disk" ] || fail "no block device for $iqn after login"
say disk "$disk"

verified_block_io "$disk" "$mib" "$work"
"$iscsiadm" -m node -T "$iqn" -u >"$work/logout" 2>&1 || fail "logout: $(cat "$work/logout")"
say verified yes
