#!/usr/bin/env bash
# Sourced, never run: the Debian kernel lines the guest can boot, one source of truth for
# the set-up scripts (src/runtime/kernel-lines.ts mirrors it for the CLI; a host test
# checks the two agree).
#   line  suite (host = the machine's own apt lists)  siw.ko compiler (host, or a build root)
# shellcheck disable=SC2034  # read by the scripts that source this file
KERNEL_LINES=(6.1 6.12 7.3)
DEFAULT_KERNEL_LINE=6.1

kernel_line_suite() {
  case "$1" in
    6.1) echo host ;;
    6.12) echo bookworm-backports ;;
    7.3) echo trixie-backports ;;
    *) return 1 ;;
  esac
}

# host: the host's gcc builds siw.ko; otherwise the suite whose build root has the
# kernel's compiler (build-chroot.sh).
kernel_line_compiler() {
  case "$1" in
    6.1 | 6.12) echo host ;;
    7.3) echo trixie ;;
    *) return 1 ;;
  esac
}
