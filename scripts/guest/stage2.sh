#!/bin/bash
# PID 1 of the guest once the host's root (under a tmpfs overlay) is in place. Reads the
# run description from this run's directory on the host (read-only, through the host
# root), sets up the RDMA devices with the same script the Docker image uses, runs the
# command as root with its stdout and stderr on two virtio-serial ports, reports its exit
# status and byte counts on a third (the control channel, src/runtime/guest-channel.ts),
# waits for the host's `ack` and powers off.
# Never exits: PID 1 exiting is a kernel panic; power-off ends QEMU (-no-reboot).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C

poweroff_now() {
  sync
  echo o >/proc/sysrq-trigger
  while :; do sleep 60; done
}
trap poweroff_now EXIT

console() { echo "stage2: $*" >/dev/console; }

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

run='' share='' deadline=''
read -r -a cmdline </proc/cmdline
for arg in "${cmdline[@]}"; do
  case "$arg" in
    rdma_interop.run=*) run=${arg#rdma_interop.run=} ;;
    rdma_interop.share=*) share=${arg#rdma_interop.share=} ;;
    rdma_interop.deadline=*) deadline=${arg#rdma_interop.deadline=} ;;
  esac
done
# The host enforces its --timeout; this is the backstop should the host runner be stuck
# (its deadline is a few seconds later than the host's).
if [ -n "$deadline" ]; then
  (sleep "$deadline"; console "deadline of $deadline s reached: powering off"; echo o >/proc/sysrq-trigger) &
fi

mkdir -p "$share"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 share "$share" || {
  console "cannot mount the writable share at $share"
  exit 1
}
# The run description, written by the host runner (src/runtime/qemu.ts): MODULES_ROOT,
# WORKDIR, RDMA_INTEROP_ROOT and the forwarded environment; the command in run.sh.
# shellcheck disable=SC1091
source "$run/env.sh" || { console "cannot read $run/env.sh"; exit 1; }

# Point /lib/modules at the extracted Debian kernel (it is not installed on the host), and
# let kernel-initiated module loads use the same tree.
rm -rf /lib/modules 2>/dev/null
ln -sfn "$MODULES_ROOT/lib/modules" /lib/modules
echo /sbin/modprobe >/proc/sys/kernel/modprobe

# The virtio-serial ports, found by name (no udev here to make /dev/virtio-ports links).
modprobe virtio_console || { console "modprobe virtio_console failed"; exit 1; }
port() { # name -> /dev/vportNpM
  local f
  for f in /sys/class/virtio-ports/*/name; do
    if [ "$(cat "$f" 2>/dev/null)" = "rdma-interop.$1" ]; then
      echo "/dev/$(basename "$(dirname "$f")")"
      return 0
    fi
  done
  return 1
}
for _ in $(seq 100); do
  ctl=$(port control) && out=$(port stdout) && err=$(port stderr) &&
    [ -c "$ctl" ] && [ -c "$out" ] && [ -c "$err" ] && break
  ctl=
  sleep 0.05
done
[ -n "$ctl" ] || { console "the virtio-serial ports did not appear"; exit 1; }
exec 7<>"$ctl"

hostname rdma-guest
export HOME=/root TERM=dumb CI="${CI:-}" RDMA_INTEROP_GUEST=1 RDMA_INTEROP_SHARE="$share"

# Device set-up lines go to the host as the runtime's own log, never into the command's
# output.
bash "$RDMA_INTEROP_ROOT/scripts/rdma-devices.sh" </dev/null 2>&1 |
  while IFS= read -r line; do printf 'log %s\n' "$line"; done >&7
printf 'devices-ready %s\n' "$(cut -d' ' -f1 /proc/uptime)" >&7

cd "$WORKDIR" || exit 1
# The command writes into pipes (programs see a plain stream, not a device); a relay
# moves each to its port and reports how many bytes it moved, which the host waits for
# before it lets us power off (port-relay.pl says why not dd).
relay="$RDMA_INTEROP_ROOT/scripts/guest/port-relay.pl"
mkfifo /run/command-stdout /run/command-stderr
perl "$relay" "$out" </run/command-stdout >/run/stdout-count &
out_relay=$!
perl "$relay" "$err" </run/command-stderr >/run/stderr-count &
err_relay=$!
bash "$run/run.sh" </dev/null >/run/command-stdout 2>/run/command-stderr
status=$?
wait "$out_relay" "$err_relay"
count() { # the relay's byte count, 0 if it failed (its error is on the console)
  local n
  n=$(cat "$1" 2>/dev/null)
  [[ "$n" =~ ^[0-9]+$ ]] && echo "$n" || echo 0
}
printf 'exit %s %s %s\n' "$status" "$(count /run/stdout-count)" "$(count /run/stderr-count)" >&7
# Power off only once the host has every byte (or after a minute without an answer).
read -r -t 60 _ <&7
