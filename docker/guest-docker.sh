#!/usr/bin/env bash
# Runs inside the QEMU guest (the command `rdma-interop docker run` boots it with; rxe0
# and siw0 are already up, made by scripts/rdma-devices.sh in stage2): starts a dockerd
# of its own, gets the image (from the data disk, or by `docker load`), runs the suite in
# a container, stops dockerd by its pid and unmounts what it mounted, on every path.
#   guest-docker.sh [suite args...]
# Environment (set by src/runtime/docker/run.ts):
#   DOCKER_HANDOVER   disk: /dev/vda is an ext4 copy of the host's data root
#                     load: DOCKER_IMAGE_TAR (a host path, read over the 9p root) is loaded
#                           into a data root on tmpfs
#   DOCKER_IMAGE      the image to run
#   DOCKER_MODE       privileged | devices (only the uverbs/rdma_cm nodes, no privileges)
#   DOCKER_REPORT     directory on the share for the suite's report (mounted at /report)
#   DOCKER_DIRECT_REPORT  if set: first the same suite directly in the guest, report there
#   DOCKER_DEVICES_REPORT if set: then the same suite in a container with only the device
#                     nodes (no privileges), report there
#   DOCKER_GUEST_MODULES  the kernel modules dockerd needs (default below; a test names a
#                     missing one to see the failure)
# Timings, failures and the clean-up check go to stderr as `[docker-guest] ...` lines: a
# step that cannot go on prints `[docker-guest] failed <step>: <why>` and exits 69, which
# src/runtime/docker/run.ts turns into an error naming that step.
set -euo pipefail
log() { printf '[docker-guest] %s\n' "$*" >&2; }
fail() { local step=$1; shift; log "failed $step: $*"; exit 69; }
now() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

handover=${DOCKER_HANDOVER:?} image=${DOCKER_IMAGE:?} mode=${DOCKER_MODE:-privileged}
report=${DOCKER_REPORT:?}
state=/run/rdma-interop-docker
data=$state/data
pidfile=$state/dockerd.pid
socket=$state/dockerd.sock
dockerd_pid='' containerd_pid=''
mounted=()

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  local status=$?
  if [ -n "$dockerd_pid" ] && [ -e "/proc/$dockerd_pid" ]; then
    kill -TERM "$dockerd_pid" 2>/dev/null || true
    for _ in $(seq 200); do [ -e "/proc/$dockerd_pid" ] || break; sleep 0.1; done
    if [ -e "/proc/$dockerd_pid" ]; then
      log "dockerd $dockerd_pid did not stop in 20 s: killing it"
      kill -KILL "$dockerd_pid" 2>/dev/null || true
      sleep 0.5
    fi
  fi
  if [ -n "$containerd_pid" ] && [ -e "/proc/$containerd_pid" ]; then
    kill -TERM "$containerd_pid" 2>/dev/null || true
    for _ in $(seq 100); do [ -e "/proc/$containerd_pid" ] || break; sleep 0.1; done
    kill -KILL "$containerd_pid" 2>/dev/null || true
  fi
  # Anything dockerd mounted below our state directory (overlay2 layers), then ours.
  # (grep finds none on a path that failed before any mount: no error under pipefail.)
  { grep -o " ${state}[^ ]*" /proc/mounts || true; } | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
  for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
  local left_pids left_mounts
  left_pids=$(pgrep -f -- "$state" || true)
  left_mounts=$(grep -c " $state" /proc/mounts || true)
  if [ -z "$left_pids" ] && [ "$left_mounts" = 0 ]; then
    log "clean: no dockerd or containerd left, no mounts under $state"
  else
    log "NOT clean: processes '${left_pids//$'\n'/ }', $left_mounts mounts under $state"
    [ "$status" -ne 0 ] || status=70
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "${DOCKER_DIRECT_REPORT:-}" ]; then
  t=$(now)
  log "the suite directly in the guest first (report $DOCKER_DIRECT_REPORT)"
  node "$RDMA_INTEROP_ROOT/dist/cli/main.js" run --runtime host --report "$DOCKER_DIRECT_REPORT" "$@" >/dev/null ||
    log "direct run exited $?"
  log "timing direct-suite $(since "$t") s"
fi

# What dockerd needs from the kernel: overlay for overlay2, veth/bridge for a default
# network (we use --network host, but dockerd probes them), and a cgroup2 hierarchy.
for m in ${DOCKER_GUEST_MODULES:-overlay veth bridge virtio_blk ext4}; do
  modprobe "$m" 2>/dev/null || [ -d "/sys/module/$m" ] ||
    fail guest-kernel "the guest kernel $(uname -r) lacks module $m, which dockerd needs"
done
mkdir -p /sys/fs/cgroup
if ! grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts; then
  mount -t cgroup2 cgroup2 /sys/fs/cgroup ||
    fail guest-kernel "cannot mount cgroup2 on /sys/fs/cgroup (the guest kernel $(uname -r))"
  mounted+=(/sys/fs/cgroup)
fi

mkdir -p "$data"
t=$(now)
case "$handover" in
  disk)
    for _ in $(seq 50); do [ -b /dev/vda ] && break; sleep 0.1; done
    [ -b /dev/vda ] || fail handover "no data disk (/dev/vda)"
    mount -t ext4 /dev/vda "$data" || fail handover "cannot mount the data disk /dev/vda"
    ;;
  load)
    # overlay2 cannot stack on the guest's overlay root: a tmpfs of its own.
    mount -t tmpfs -o mode=0711 docker-data "$data"
    ;;
  *) log "unknown hand-over '$handover'"; exit 64 ;;
esac
mounted+=("$data")
handover_seconds=$(since "$t")

# containerd first, waited for as long as it takes: dockerd gives the containerd it starts
# itself a fixed time, which a guest under TCG on a loaded host can exceed ("failed to
# start containerd: timeout waiting for containerd to start").
containerd_socket=$state/containerd.sock
containerd --address "$containerd_socket" --root "$data/containerd-root" --state "$state/containerd-state" \
  >"$state/containerd.log" 2>&1 &
containerd_pid=$!
for _ in $(seq 3000); do
  ctr --address "$containerd_socket" version >/dev/null 2>&1 && break
  [ -e "/proc/$containerd_pid" ] || { tail -n 20 "$state/containerd.log" >&2; fail engine-start "containerd exited during start-up"; }
  sleep 0.1
done
dockerd --data-root="$data" --exec-root="$state/exec" --pidfile="$pidfile" \
  --containerd="$containerd_socket" \
  --host="unix://$socket" --iptables=false --ip6tables=false --bridge=none \
  >"$state/dockerd.log" 2>&1 &
dockerd_pid=$!
export DOCKER_HOST="unix://$socket"
# Debian's client, which matches Debian's dockerd (a newer one may be first on PATH).
docker() { if [ -x /usr/bin/docker ]; then /usr/bin/docker "$@"; else command docker "$@"; fi; }
for _ in $(seq 3000); do
  docker version >/dev/null 2>&1 && break
  [ -e "/proc/$dockerd_pid" ] || { tail -n 20 "$state/dockerd.log" >&2; fail engine-start "dockerd exited during start-up"; }
  sleep 0.1
done
docker version >/dev/null 2>&1 || { tail -n 20 "$state/dockerd.log" >&2; fail engine-start "dockerd did not answer in 300 s"; }
log "timing dockerd-start $(since "$t") s"

if [ "$handover" = load ]; then
  t=$(now)
  log "docker load -i ${DOCKER_IMAGE_TAR:?} ($(du -m "$DOCKER_IMAGE_TAR" | cut -f1) MiB; unpacks every layer)"
  docker load -q -i "$DOCKER_IMAGE_TAR" >&2 || fail handover "docker load of $DOCKER_IMAGE_TAR failed"
  handover_seconds=$(awk -v a="$handover_seconds" -v b="$(since "$t")" 'BEGIN { printf "%.1f", a + b }')
fi
docker image inspect "$image" >/dev/null 2>&1 || fail handover "image $image is not in the guest's engine"
# The guest's part of the hand-over (mount or load), dockerd's start aside.
log "timing handover-guest $handover_seconds s"

# run_container MODE REPORT_DIR [suite args]: the suite in one container.
run_container() {
  local mode=$1 dir=$2
  shift 2
  local args=(--rm --network host --ulimit memlock=-1 -v "$dir:/report")
  case "$mode" in
    privileged) args+=(--privileged -v /lib/modules:/lib/modules:ro) ;;
    devices)
      # Only the device nodes the verbs need, as on a host whose administrator made them.
      local node
      for node in /dev/infiniband/uverbs* /dev/infiniband/rdma_cm; do args+=(--device "$node"); done
      ;;
    *) log "unknown mode '$mode'"; return 64 ;;
  esac
  mkdir -p "$dir"
  docker run "${args[@]}" "$image" run --runtime host --report /report "$@"
}

t=$(now)
status=0
run_container "$mode" "$report" "$@" || status=$?
log "timing container-suite $(since "$t") s (exit $status)"
if [ -n "${DOCKER_DEVICES_REPORT:-}" ]; then
  t=$(now)
  devices_status=0
  run_container devices "$DOCKER_DEVICES_REPORT" "$@" >/dev/null || devices_status=$?
  log "timing devices-container-suite $(since "$t") s (exit $devices_status)"
fi
exit "$status"
