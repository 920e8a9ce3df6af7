#!/bin/bash
# ulp-nfs.sh ADDRESS TAG MIB FILES [TRANSPORT]: NFS over RDMA over the RDMA device that owns
# ADDRESS, in the guest (issue 35); TRANSPORT tcp (default rdma) mounts over TCP port 2049
# instead, the speed reference. The kernel's NFS server (knfsd) with its RDMA listener (`rdma 20049` into
# /proc/fs/nfsd/portlist, Documentation/filesystems/nfs/nfs-rdma.rst), NFSv4 only (no
# rpcbind: rpc.mountd -N 2 -N 3 answers only the kernel's export upcalls), exporting a
# tmpfs; the kernel's client mounted with proto=rdma,port=20049. Data: one MIB MiB file and
# FILES files of 4 KiB, written, synced, compared on the server's own tmpfs, then read
# back over RDMA after a fresh mount and compared (SHA-256). The tools (nfs-kernel-server,
# nfs-common) come from Debian, unpacked by scripts/setup/ulp-packages.sh into $ULP_ROOT.
# Prints `ulp KEY VALUE` lines (src/ulp/script-output.ts); exits non-zero with `ulp error`.
# ULP_ROLE (ulp-common.sh) splits server and client across the two-guest link: the server
# then compares its copy with the client's digest (ULP_SYNC.want) once the client is done.
set -uo pipefail
address=$1 tag=$2 mib=${3:-8} files=${4:-64} transport=${5:-rdma}
case "$transport" in rdma) port=20049 ;; tcp) port=2049 ;; *) echo "ulp error unknown transport $transport"; exit 1 ;; esac
: "${ULP_ROOT:?ULP_ROOT (the unpacked packages) is not set}"
export LD_LIBRARY_PATH="$ULP_ROOT/usr/lib/x86_64-linux-gnu:$ULP_ROOT/lib/x86_64-linux-gnu"
# One export for every run of a boot: a tmpfs as the NFSv4 pseudo-root (fsid=0), since the
# guest's own root is an overlay that NFS cannot export (and mountd builds the pseudo-root
# from "/" otherwise); each run works in its own directory there.
export=/srv/ulp-nfs mnt=/mnt/ulp-nfs-$tag
work=$(mktemp -d /tmp/ulp-nfs.XXXXXX)

# shellcheck source=scripts/guest/ulp-common.sh
source "$(dirname "$0")/ulp-common.sh"
tree_sum() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1); }

cleanup() {
  umount -f "$mnt" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

if [ "$role" = initiator ]; then
  for m in rpcrdma nfsv4; do
    modprobe "$m" 2>"$work/modprobe" || fail "modprobe $m: $(cat "$work/modprobe")"
  done
  mkdir -p "$mnt"
else
  for m in nfsd rpcrdma nfsv4; do
    modprobe "$m" 2>"$work/modprobe" || fail "modprobe $m: $(cat "$work/modprobe")"
  done
  mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || fail "cannot mount the nfsd filesystem"
  mkdir -p /var/lib/nfs/v4recovery /run/rpc_pipefs "$export" "$mnt"
  mountpoint -q "$export" || mount -t tmpfs -o size=256m tmpfs "$export"
  mountpoint -q /run/rpc_pipefs || mount -t rpc_pipefs sunrpc /run/rpc_pipefs 2>/dev/null
  # exportfs and rpc.mountd keep their tables here (absent: nfs-common is not installed).
  touch /etc/exports /var/lib/nfs/etab /var/lib/nfs/rmtab
  # The server, once per boot: NFSv4 only, a short grace period ended at once (no client
  # has state to reclaim), the listener, then threads. Each listener is added once: a second
  # "rdma 20049" into portlist fails on 6.1 (EADDRNOTAVAIL), and nfsd's clean-up then closes
  # the RDMA listener already there, which oopses in __svc_rdma_free (docs/ulp.md).
  started=$(cat /proc/fs/nfsd/threads 2>/dev/null || echo 0)
  if [ "$started" = 0 ]; then
    echo "-2 -3 +4 +4.1 +4.2" >/proc/fs/nfsd/versions 2>/dev/null
    echo 10 >/proc/fs/nfsd/nfsv4leasetime 2>/dev/null
    echo 10 >/proc/fs/nfsd/nfsv4gracetime 2>/dev/null
  fi
  if ! grep -q "^$transport " /proc/fs/nfsd/portlist; then
    echo "$transport $port" >/proc/fs/nfsd/portlist 2>"$work/portlist" ||
      fail "the $transport listener ($transport $port into portlist) was refused: $(cat "$work/portlist") $(dmesg | tail -n 3 | tr '\n' ' ')"
  fi
  if [ "$started" = 0 ]; then
    echo 4 >/proc/fs/nfsd/threads || fail "cannot start nfsd threads: $(dmesg | tail -n 3 | tr '\n' ' ')"
    "$ULP_ROOT/usr/sbin/rpc.mountd" -N 2 -N 3 >"$work/mountd" 2>&1 ||
      fail "rpc.mountd: $(cat "$work/mountd")"
    echo Y >/proc/fs/nfsd/v4_end_grace 2>/dev/null
  fi
  say portlist "$(tr '\n' ' ' </proc/fs/nfsd/portlist)"
  "$ULP_ROOT/usr/sbin/exportfs" -o rw,no_root_squash,insecure,no_subtree_check,fsid=0 "*:$export" 2>"$work/exportfs" ||
    fail "exportfs: $(cat "$work/exportfs")"
  rm -rf "${export:?}/$tag"
  mkdir -p "$export/$tag"
fi
if [ "$role" = target ]; then
  serve_until_done
  [ -s "$ULP_SYNC.want" ] || fail "the client left no digest ($ULP_SYNC.want)"
  [ "$(tree_sum "$export/$tag")" = "$(cat "$ULP_SYNC.want")" ] ||
    fail "the server's copy differs from what the client wrote"
  say server-verified yes
  rm -rf "${export:?}/$tag"
  say target-served yes
  exit 0
fi

mount_rdma() {
  "$ULP_ROOT/sbin/mount.nfs4" "$address:/$tag" "$mnt" -o "proto=$transport,port=$port,vers=4.1" 2>"$work/mount" ||
    fail "mount -o proto=$transport $address:/$tag: $(cat "$work/mount") $(dmesg | tail -n 3 | tr '\n' ' ')"
}
t0=$(now)
mount_rdma
say mount-seconds "$(seconds "$t0" "$(now)")"
say mount "$(grep " $mnt " /proc/mounts | cut -d' ' -f4 | tr ',' '\n' | grep -E '^(proto|vers|rsize|wsize)=' | tr '\n' ',')"

# The large file and the many small ones.
mkdir -p "$work/src/many"
head -c "$((mib * 1048576))" /dev/urandom >"$work/src/large"
for i in $(seq "$files"); do head -c 4096 /dev/urandom >"$work/src/many/f$i"; done
want=$(tree_sum "$work/src")
t0=$(now)
cp "$work/src/large" "$mnt/large" || fail "writing the large file failed"
sync -f "$mnt/large" || fail "sync failed"
t1=$(now)
cp -r "$work/src/many" "$mnt/many" || fail "writing $files files failed"
sync -f "$mnt" || fail "sync failed"
t2=$(now)
say large-bytes "$((mib * 1048576))"
say large-write-seconds "$(seconds "$t0" "$t1")"
say small-files "$files"
say small-write-seconds "$(seconds "$t1" "$t2")"
if [ "$role" = initiator ]; then
  echo "$want" >"$ULP_SYNC.want"
else
  [ "$(tree_sum "$export/$tag")" = "$want" ] || fail "the server's copy differs from what the client wrote"
  say server-verified yes
fi
# A fresh mount so that reads cross the wire, not the client's page cache. The phases say
# where a run that hangs stopped (its output so far is kept).
say phase unmounting
umount "$mnt" || fail "umount failed"
say phase remounting
mount_rdma
say phase reading
t0=$(now)
got_large=$(sha256sum <"$mnt/large" | cut -d' ' -f1)
t1=$(now)
got=$(tree_sum "$mnt")
t2=$(now)
say large-read-seconds "$(seconds "$t0" "$t1")"
say small-read-seconds "$(seconds "$t1" "$t2")"
[ "$got" = "$want" ] || fail "read back over $transport differs: wrote $want, read $got"
say sha256 "$got_large"
umount "$mnt" || fail "umount failed"
[ "$role" = initiator ] || rm -rf "${export:?}/$tag"
say verified yes
