#!/usr/bin/env bash
# install-packages.sh build|runtime: the Debian packages of one image stage, installed
# with apt from the base image's own Debian release (Debian's mirror and the npm registry
# are the only network the build needs). Node itself: docker/install-node.sh.
set -euo pipefail
stage=${1:?usage: install-packages.sh build|runtime}
case "$stage" in
  build)
    # The addon: a C++17 compiler, node-gyp's make and python3, rdma-core's headers;
    # curl and the CA list to fetch Node and npm from the npm registry.
    packages=(g++ make python3 libibverbs-dev librdmacm-dev curl ca-certificates)
    ;;
  runtime)
    # rdma-core: the verbs/rdma_cm libraries and the rxe/siw providers; iproute2 for
    # `rdma` and the dummy netdevs; kmod for modprobe; tcpdump for the suite's captures;
    # libatomic1, which Node 26's binary links (the build stage has it through g++; a
    # bookworm minbase runtime without it failed: "libatomic.so.1: cannot open shared object").
    packages=(rdma-core ibverbs-providers libibverbs1 librdmacm1 ibverbs-utils iproute2 kmod tcpdump libatomic1)
    ;;
  *)
    echo "install-packages.sh: unknown stage '$stage' (build|runtime)" >&2
    exit 2
    ;;
esac
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
echo "install-packages.sh: ${#packages[@]} packages for the $stage stage"
