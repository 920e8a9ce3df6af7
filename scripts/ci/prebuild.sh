#!/usr/bin/env bash
# Builds the prebuilt addon that ships in the npm package:
#   prebuilds/linux-x64/rdma-interop.glibc.node
# with prebuildify (a clean `node-gyp rebuild`, stripped). N-API: one binary serves every
# Node version, and node-gyp-build picks it at run time when there is no source build.
# Skipped when the prebuild is newer than every native source (a stamp of their hash).
# Called by set-up (so the package test sees it) and by `npm pack` (prepack).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
cd "$RDMA_INTEROP_ROOT"

prebuild=prebuilds/linux-x64/rdma-interop.glibc.node
mkdir -p "$RDMA_INTEROP_CACHE"
# The stamp sits beside the prebuild, not in the cache: checkouts that share one cache
# (RDMA_INTEROP_CACHE) each have their own prebuilds/ and must not trust each other's stamp.
stamp="${prebuild%.node}.sources-sha256"
sources_hash=$(cat binding.gyp native/*.cc native/*.h package.json | sha256sum | cut -d' ' -f1)
if [ -f "$prebuild" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$sources_hash" ]; then
  note "prebuilt addon: up to date ($prebuild)"
  exit 0
fi

# Build against this machine's Node headers (no header download: no network here).
if [ -f /usr/include/node/node_api.h ]; then
  export npm_config_nodedir=/usr
fi
step "prebuilt addon (prebuildify --napi --strip --tag-libc)"
log="$RDMA_INTEROP_CACHE/prebuild.log"
npx prebuildify --napi --strip --tag-libc --target "node@$(node -p process.versions.node)" >"$log" 2>&1 ||
  { cat "$log" >&2; die "prebuildify failed (log above, also in $log)"; }
[ -f "$prebuild" ] || die "prebuildify did not produce $prebuild: $(ls -R prebuilds 2>&1)"
echo "$sources_hash" >"$stamp"
# prebuildify moves build/Release/rdma_interop.node into prebuilds/: link it again (the
# objects are fresh, so this is a link only) so that a checkout keeps its source build.
npx node-gyp build >>"$log" 2>&1 || { cat "$log" >&2; die "node-gyp build failed"; }
step_done "prebuilt addon"
