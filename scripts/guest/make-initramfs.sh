#!/usr/bin/env bash
# make-initramfs.sh <extracted root> <kver> <out.cpio.gz>
# A tiny initramfs: static busybox, the modules needed to mount the host's root over
# virtio-9p (Debian builds them as modules), and scripts/guest/initramfs-init as /init.
set -euo pipefail
root=$1 kver=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work"/{bin,sbin,proc,sys,dev,lower,upper,newroot,modules}
cp /bin/busybox "$work/bin/busybox"
for applet in sh mount umount mkdir insmod switch_root sleep cat echo ln poweroff grep; do
  ln -s busybox "$work/bin/$applet"
done

# Load order matters: each module's dependencies come before it (kernel-runtime.md).
# A name missing from this kernel is simply built in; the order file lists what is there.
moddir="$root/lib/modules/$kver"
: >"$work/modules/order"
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
  9pnet 9pnet_virtio netfs fscache 9p overlay; do
  path=$(find "$moddir/kernel" -name "$m.ko*" -print -quit)
  [ -n "$path" ] || continue
  case "$path" in
    *.ko.xz) xz -dc "$path" >"$work/modules/$m.ko" ;;
    *.ko.zst) zstd -dcq "$path" >"$work/modules/$m.ko" ;;
    *) cp "$path" "$work/modules/$m.ko" ;;
  esac
  echo "$m" >>"$work/modules/order"
done

cp "$here/initramfs-init" "$work/init"
chmod +x "$work/init"
(cd "$work" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
