#!/usr/bin/env bash
# Builds the TypeScript (tsc) and the N-API addon (node-gyp), both incrementally.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
cd "$RDMA_INTEROP_ROOT"

step "TypeScript build"
# Incremental: a warm run with nothing changed only compares hashes. tsc does not notice
# deleted outputs, so the build info goes when dist/ does.
buildinfo="$RDMA_INTEROP_CACHE/tsc-build.tsbuildinfo"
[ -f dist/cli/main.js ] || rm -f "$buildinfo"
npx tsc -p tsconfig.build.json --incremental --tsBuildInfoFile "$buildinfo"
chmod +x dist/cli/main.js
# Nor does it delete the outputs of a source that was moved or removed: without this, a
# checkout that pulled a move (src/interop/tester -> src/probe) keeps running, and packing,
# the old files (test/host/package/contents.test.ts found 74 such outputs).
while IFS= read -r -d '' output; do
  source_file="src/${output#dist/}"
  source_file="${source_file%.d.ts}"
  source_file="${source_file%.js}.ts"
  [ -f "$source_file" ] || rm -f "$output"
done < <(find dist -type f \( -name '*.js' -o -name '*.d.ts' \) -print0)
find dist -mindepth 1 -type d -empty -delete
step_done "TypeScript build"

if [ -f binding.gyp ]; then
  # Build against the Node headers on this machine (no header download: no network).
  gyp_args=()
  # Debian's libnode-dev puts them in /usr/include/node, the official Node builds (the
  # node:20 image) under their own prefix: take the prefix of the node that runs.
  node_prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
  if [ -f "$node_prefix/include/node/node_api.h" ]; then
    gyp_args+=(--nodedir="$node_prefix")
  elif [ -f /usr/include/node/node_api.h ]; then
    gyp_args+=(--nodedir=/usr)
  fi
  step "addon build (node-gyp)"
  if [ ! -f build/config.gypi ] || [ binding.gyp -nt build/config.gypi ]; then
    npx node-gyp configure "${gyp_args[@]}" --loglevel=warn
  fi
  npx node-gyp build "${gyp_args[@]}" --loglevel=warn -j 2
  step_done "addon build"
  # The same addon without external buffers (issue 36), for its kernel test; cached.
  bash scripts/setup/no-external-addon.sh
fi
