#!/usr/bin/env bash
# repro.sh: builds the defect reproducers (repro/*.c, issue 33) with the host's gcc against
# libibverbs and librdmacm, cached by a hash of their sources:
#   $RDMA_INTEROP_CACHE/repro/<hash>/   the programs
#   $RDMA_INTEROP_CACHE/repro/bin       link to the current build
# and prints that bin directory on its last stdout line. They link libibverbs.so.1 and
# librdmacm.so.1 only, so in the guest they run on the line's rdma-core or on any build of
# scripts/setup/rdma-core.sh put first on LD_LIBRARY_PATH (the fixed providers).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

src="$RDMA_INTEROP_ROOT/repro"
top="$RDMA_INTEROP_CACHE/repro"
# Bump when the recipe below changes.
recipe=1
key=$( { echo "recipe-$recipe"; cat "$src"/Makefile "$src"/*.h "$src"/*.c; } | sha256sum | cut -c1-16)
out="$top/$key"
mkdir -p "$top"
exec 9>"$top/.lock"
flock 9
if [ "$(cat "$out/.complete" 2>/dev/null)" != "$key" ]; then
  step "building the reproducers (repro/*.c)"
  rm -rf "$out"
  mkdir -p "$out"
  make -s -C "$src" OUT="$out" >"$top/build.log" 2>&1 ||
    { cat "$top/build.log" >&2; die "the reproducers do not build (log: $top/build.log)"; }
  echo "$key" >"$out/.complete"
  step_done "reproducers ($(find "$out" -maxdepth 1 -type f -perm -u+x | wc -l) programs)"
else
  note "reproducers: cached"
fi
ln -sfn "$key" "$top/bin"
echo "$top/bin"
