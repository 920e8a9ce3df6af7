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

# Load order matters: each module's dependencies come before it (kernel-runtime.md). They
# are read from modules.dep (6.12 and later: 9pnet needs netfs), so one list serves every
# kernel line. A name missing from this kernel is simply built in; the order file lists
# what is there.
moddir="$root/lib/modules/$kver"
: >"$work/modules/order"
declare -A added=()
add_module() { # relative path in modules.dep
  local rel=$1 name deps dep
  name=$(basename "$rel")
  name=${name%%.ko*}
  [ -n "${added[$name]:-}" ] && return 0
  added[$name]=1
  deps=$(grep -E "^${rel//./\\.}:" "$moddir/modules.dep" | cut -d: -f2 || true)
  # modules.dep lists a module's dependencies last-loaded first.
  for dep in $(tr ' ' '\n' <<<"$deps" | tac); do
    [ -n "$dep" ] && add_module "$dep"
  done
  case "$rel" in
    *.ko.xz) xz -dc "$moddir/$rel" >"$work/modules/$name.ko" ;;
    *.ko.zst) zstd -dcq "$moddir/$rel" >"$work/modules/$name.ko" ;;
    *) cp "$moddir/$rel" "$work/modules/$name.ko" ;;
  esac
  echo "$name" >>"$work/modules/order"
}
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
  9pnet 9pnet_virtio netfs fscache 9p overlay; do
  rel=$(grep -oE "^([^:]*/)?$m\.ko(\.[a-z]+)?:" "$moddir/modules.dep" | head -n1 | tr -d : || true)
  [ -n "$rel" ] || continue
  add_module "$rel"
done

cp "$here/initramfs-init" "$work/init"
chmod +x "$work/init"
(cd "$work" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
