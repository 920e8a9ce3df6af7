#!/usr/bin/env bash
# Installs the Debian packages the project needs, only those missing (idempotent).
# The guest kernel packages are NOT installed here: guest-assets.sh downloads and
# extracts them into the cache so the host's own kernel set-up is never touched.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

packages=(
  # rdma-core: the libraries the addon links, the providers (librxe, libsiw), the tools
  libibverbs-dev librdmacm-dev rdma-core ibverbs-providers ibverbs-utils rdmacm-utils
  perftest
  # the guest runtime
  qemu-system-x86 busybox-static kmod iproute2 cpio xz-utils
  # building siw.ko out of tree
  make gcc libelf-dev
  # captures and the independent decoder
  tcpdump tshark
  # script lint in the test command
  shellcheck
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  note "apt packages: all ${#packages[@]} present"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || die "installing ${missing[*]} needs root"
step "apt-get install ${#missing[@]} packages (${missing[*]})"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer it up front.
echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections
# One update per set-up run at most; a stale list makes installs fail on a fresh machine.
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
step_done "apt-get install"
