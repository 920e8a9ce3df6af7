#!/bin/bash
# ulp-common.sh: what the ULP workload scripts share (sourced by ulp-nvme.sh, ulp-nfs.sh and
# ulp-iser.sh): their `ulp KEY VALUE` output (src/ulp/script-output.ts reads it), the
# first failure as `ulp error TEXT`, timing, the verified I/O of a block device, and the
# two-guest roles.

# The two-guest link (src/ulp/link-main.ts): ULP_ROLE `target` sets up the target on ADDRESS
# (this guest's link address) and serves until ULP_SYNC.done appears in the share both
# guests mount; `initiator` connects to ADDRESS (the other guest's); `both` (default) is the
# one-guest run.
role=${ULP_ROLE:-both}
case "$role" in both | target | initiator) ;; *) echo "ulp error unknown role $role"; exit 1 ;; esac
# serve_until_done: the target is up; tell the initiator's guest, wait until it is done.
serve_until_done() {
  : "${ULP_SYNC:?ULP_SYNC, the sync path of the link, is not set}"
  touch "$ULP_SYNC.ready"
  local _
  for _ in $(seq 6000); do
    [ -e "$ULP_SYNC.done" ] && return 0
    sleep 0.1
  done
  fail "the initiator did not finish within 600 s (no $ULP_SYNC.done)"
}

say() { echo "ulp $*"; }
fail() { say error "$*"; exit 1; }
now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# verified_block_io DISK MIB WORK: MIB MiB of random data written to DISK with O_DIRECT in
# 1 MiB blocks (for an NVMe or iSER target, RDMA Reads of the host's memory) and read back
# (RDMA Writes), then 256 blocks of 4 KiB after them (small enough for a command capsule's
# inline data), each compared by SHA-256; the sizes, times and digest as `ulp` lines.
verified_block_io() {
  local disk=$1 mib=$2 work=$3 want got t0 t1 t2 small=256 want_small
  head -c "$((mib * 1048576))" /dev/urandom >"$work/pattern"
  want=$(sha256sum <"$work/pattern" | cut -d' ' -f1)
  t0=$(now)
  dd if="$work/pattern" of="$disk" bs=1M oflag=direct status=none 2>"$work/dd" || fail "write: $(cat "$work/dd")"
  t1=$(now)
  got=$(dd if="$disk" bs=1M count="$mib" iflag=direct status=none 2>"$work/dd" | sha256sum | cut -d' ' -f1)
  t2=$(now)
  [ "$got" = "$want" ] || fail "large blocks read back differ: wrote $want, read $got"
  say large-bytes "$((mib * 1048576))"
  say large-write-seconds "$(seconds "$t0" "$t1")"
  say large-read-seconds "$(seconds "$t1" "$t2")"
  head -c "$((small * 4096))" /dev/urandom >"$work/small"
  want_small=$(sha256sum <"$work/small" | cut -d' ' -f1)
  t0=$(now)
  dd if="$work/small" of="$disk" bs=4k seek=$((mib * 256)) oflag=direct status=none 2>"$work/dd" ||
    fail "small write: $(cat "$work/dd")"
  t1=$(now)
  got=$(dd if="$disk" bs=4k skip=$((mib * 256)) count="$small" iflag=direct status=none | sha256sum | cut -d' ' -f1)
  t2=$(now)
  [ "$got" = "$want_small" ] || fail "4 KiB blocks read back differ: wrote $want_small, read $got"
  say small-ios "$small"
  say small-write-seconds "$(seconds "$t0" "$t1")"
  say small-read-seconds "$(seconds "$t1" "$t2")"
  say sha256 "$want"
}
