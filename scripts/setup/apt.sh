#!/usr/bin/env bash
# apt.sh [all|runtime]: installs the Debian packages the project needs, only those missing
# (idempotent).
#   all      (default) everything a checkout needs: build, tests, captures, the guest
#   runtime  only what the QEMU guest runtime needs (`rdma-interop setup` of an installed
#            package): QEMU, the guest asset build, the device tools the guest uses
# As root, missing packages are installed; otherwise the script lists them with the apt
# command to run and exits 3.
# The guest kernel packages are NOT installed here: guest-assets.sh downloads and
# extracts them into the cache so the host's own kernel set-up is never touched.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

runtime_packages=(
  # the guest runtime (setpriv, flock: util-linux, always there on Debian)
  qemu-system-x86 busybox-static kmod iproute2 cpio xz-utils python3
  # building siw.ko out of tree
  make gcc libelf-dev
  # the other kernel lines (guest-assets.sh 6.12|7.3): zstd kernels, 7.3's gcc-14 build
  # root, and their rdma-core built from source (rdma-core.sh)
  zstd debootstrap cmake ninja-build pkg-config libnl-3-dev libnl-route-3-dev patch
  # rdma-core's own tests (`rdma-interop rdma-core-tests`): pyverbs built by pyverbs.sh
  cython3 python3-dev
  # what the guest uses from the host's root: the providers (librxe, libsiw) and tools
  rdma-core ibverbs-providers ibverbs-utils
)
packages=("${runtime_packages[@]}")
case "${1:-all}" in
  runtime) ;;
  all)
    packages+=(
      # rdma-core: the libraries the addon links, the tools the tests compare against
      libibverbs-dev librdmacm-dev rdmacm-utils perftest
      # the scripting peer of `bench verbs` (pyverbs, the same FetchAdd loop)
      python3-pyverbs
      # /usr/bin/time: the peak RSS of a decode in `bench codec`
      time
      # captures and the independent decoder
      tcpdump tshark
      # script lint in the test command
      shellcheck
      # the browser test of report.html (headless, driven by puppeteer-core)
      chromium
    )
    ;;
  *) die "usage: apt.sh [all|runtime]" ;;
esac

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

if [ "$(id -u)" -ne 0 ]; then
  note "error: missing Debian packages: ${missing[*]}"
  note "install them as root, then run the set-up again:"
  note "  sudo apt-get install -y --no-install-recommends ${missing[*]}"
  exit 3
fi
step "apt-get install ${#missing[@]} packages (${missing[*]})"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer it up front.
echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections
# One update per set-up run at most; a stale list makes installs fail on a fresh machine.
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
step_done "apt-get install"
