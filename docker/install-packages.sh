#!/usr/bin/env bash
# install-packages.sh build|runtime: the Debian packages of one image stage, installed
# with apt from the base image's own Debian release (the only network the build needs
# besides the npm registry). Works on both kinds of base (docker/Dockerfile):
#   - a local debootstrapped Debian trixie (no Node): nodejs (20.x in trixie) from Debian,
#     plus npm and Node's headers (libnode-dev) for the build stage;
#   - an official node:20 image (Node, npm and headers already under /usr/local).
set -euo pipefail
stage=${1:?usage: install-packages.sh build|runtime}
packages=()
case "$stage" in
  build)
    # The addon: a C++17 compiler, node-gyp's make and python3, rdma-core's headers.
    packages+=(g++ make python3 libibverbs-dev librdmacm-dev)
    command -v node >/dev/null || packages+=(nodejs npm libnode-dev)
    ;;
  runtime)
    # rdma-core: the verbs/rdma_cm libraries and the rxe/siw providers; iproute2 for
    # `rdma` and the dummy netdevs; kmod for modprobe; tcpdump for the suite's captures.
    packages+=(rdma-core ibverbs-providers libibverbs1 librdmacm1 ibverbs-utils iproute2 kmod tcpdump)
    command -v node >/dev/null || packages+=(nodejs)
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
# engines.node of the package (single quotes: JavaScript, not shell); a base with an older Node fails here, not at run time.
# shellcheck disable=SC2016
node -e '
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 20 || (major === 20 && minor < 15)) {
    console.error(`install-packages.sh: the base image has Node ${process.versions.node}; rdma-interop needs >= 20.15 (use a trixie base or node:20)`);
    process.exit(1);
  }
  console.log(`node ${process.versions.node}`);'
