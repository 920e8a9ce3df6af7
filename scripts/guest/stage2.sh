#!/bin/bash
# PID 1 of the guest once the host's root (under a tmpfs overlay) is in place. Reads the
# run description from the writable share, sets up the RDMA devices with the same script
# the Docker image uses, runs the command as root, records its exit code and powers off.
# Never exits: PID 1 exiting is a kernel panic; power-off ends QEMU (-no-reboot).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

poweroff_now() {
  sync
  echo o >/proc/sysrq-trigger
  while :; do sleep 60; done
}
trap poweroff_now EXIT

mount -t proc proc /proc
mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# No tmpfs over /tmp: the project may live there on the host (a CI clone), and the
# overlay root is writable already.
mount -t tmpfs tmpfs /run
# devtmpfs has no /dev/fd links; bash process substitution and node need them.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

share=
read -r -a cmdline </proc/cmdline
for arg in "${cmdline[@]}"; do
  case "$arg" in rdma_interop.share=*) share=${arg#rdma_interop.share=} ;; esac
done
mkdir -p "$share"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 share "$share" || {
  echo "stage2: cannot mount the results share at $share" >/dev/console
  exit 1
}
# The run description, written by the host runner (src/runtime/): MODULES_ROOT, WORKDIR,
# and the command in run.sh.
# shellcheck disable=SC1091
source "$share/env.sh"

# Point /lib/modules at the extracted Debian kernel (it is not installed on the host), and
# let kernel-initiated module loads use the same tree.
rm -rf /lib/modules 2>/dev/null
ln -sfn "$MODULES_ROOT/lib/modules" /lib/modules
echo /sbin/modprobe >/proc/sys/kernel/modprobe

# The command's output goes to the second serial port, which the host streams; the
# console (first port) keeps the kernel's messages for diagnostics.
out=/dev/ttyS1
stty -F "$out" raw -echo 2>/dev/null || true

hostname rdma-guest
export HOME=/root TERM=dumb CI="${CI:-}" RDMA_INTEROP_GUEST=1 RDMA_INTEROP_SHARE="$share"

{
  bash "$RDMA_INTEROP_ROOT/scripts/rdma-devices.sh"
} >"$out" 2>&1
echo "devices-ready $(cut -d' ' -f1 /proc/uptime)" >"$share/timing"

cd "$WORKDIR" || exit 1
# Through a pipe, so programs see a plain stream rather than a terminal (no progress
# animations over a slow emulated serial line).
bash "$share/run.sh" 2>&1 </dev/null | cat >"$out"
echo "${PIPESTATUS[0]}" >"$share/exit-code"
