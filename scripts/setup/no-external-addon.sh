#!/usr/bin/env bash
# Builds the addon a second time with NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED (binding.gyp's
# no_external_buffers=1), as an addon built for a Node with the V8 sandbox must be: every
# piece of memory it shares with JS is V8-allocated (native/js_memory.h). The kernel test
# test/kernel/verbs/no-external-buffers.test.ts loads it through RDMA_INTEROP_ADDON.
#   $RDMA_INTEROP_CACHE/addon-no-external/build/Release/rdma_interop.node
# Out of the checkout (node-gyp rebuilds build/ whole), in a directory of links to this
# checkout's binding.gyp and native/; skipped when a stamp of the sources' hash (and of
# the checkout it was built from) says it is current.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
cd "$RDMA_INTEROP_ROOT"

dir="$RDMA_INTEROP_CACHE/addon-no-external"
addon="$dir/build/Release/rdma_interop.node"
stamp="$dir/sources-sha256"
sources_hash=$( (echo "$RDMA_INTEROP_ROOT"; cat binding.gyp native/*.cc native/*.h) | sha256sum | cut -d' ' -f1)
if [ -f "$addon" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$sources_hash" ]; then
  note "addon without external buffers: up to date ($addon)"
  exit 0
fi

step "addon without external buffers (node-gyp, NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED)"
mkdir -p "$dir"
for link in binding.gyp native node_modules; do ln -sfn "$RDMA_INTEROP_ROOT/$link" "$dir/$link"; done
gyp_args=(--no_external_buffers=1 --loglevel=warn)
node_prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
if [ -f "$node_prefix/include/node/node_api.h" ]; then
  gyp_args+=(--nodedir="$node_prefix")
elif [ -f /usr/include/node/node_api.h ]; then
  gyp_args+=(--nodedir=/usr)
fi
log="$dir/build.log"
(cd "$dir" && "$RDMA_INTEROP_ROOT/node_modules/.bin/node-gyp" rebuild "${gyp_args[@]}" -j 2) >"$log" 2>&1 ||
  { cat "$log" >&2; die "node-gyp (no_external_buffers=1) failed (log above, also in $log)"; }
grep -q NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED "$dir/build/rdma_interop.target.mk" ||
  die "$dir/build/rdma_interop.target.mk lacks the define: binding.gyp's no_external_buffers did not apply"
echo "$sources_hash" >"$stamp"
step_done "addon without external buffers"
