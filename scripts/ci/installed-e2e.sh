#!/usr/bin/env bash
# Issue 9's "done means", end to end: the packed tarball installed into a fresh project,
# then `npx rdma-interop setup` (guest assets into the user's cache, not node_modules) and
# `npx rdma-interop run` (one scenario per device, in the guest), both from that project.
#   scripts/ci/installed-e2e.sh [run filter, default: fetch-add]
# NOT YET WIRED INTO scripts/test.sh: it needs the `setup` command (issue 9, runtime part).
# Once that command exists, add to scripts/test.sh after the host tests:
#   bash scripts/ci/installed-e2e.sh || status=1
# Set RDMA_INTEROP_E2E_CACHE to reuse a guest-asset cache between runs (else a fresh one:
# a cold set-up downloads and builds the guest kernel assets, minutes).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
cd "$RDMA_INTEROP_ROOT"
filter="${1:-fetch-add}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step "installed-e2e: npm pack"
tarball="$work/$(npm pack --ignore-scripts --silent --pack-destination "$work" | tail -n 1)"
step_done "npm pack"

mkdir "$work/app"
cd "$work/app"
printf '{"name":"e2e","private":true,"type":"module"}\n' >package.json
step "installed-e2e: npm install $(basename "$tarball")"
npm install --no-audit --no-fund --prefer-offline --loglevel=error "$tarball"
step_done "npm install"

if ! npx --no rdma-interop --help | grep -q '^  setup\b'; then
  die "the installed CLI has no 'setup' command: this check waits for it (see the header)"
fi
cache="${RDMA_INTEROP_E2E_CACHE:-$work/cache}"
export XDG_CACHE_HOME="$cache"
step "installed-e2e: npx rdma-interop setup (cache: $cache)"
npx --no rdma-interop setup
step_done "setup"
[ ! -d node_modules/rdma-interop/.cache ] || die "set-up wrote into node_modules"

step "installed-e2e: npx rdma-interop run --filter $filter --json run.json"
npx --no rdma-interop run --filter "$filter" --json run.json
node -e "const r = JSON.parse(require('fs').readFileSync('run.json', 'utf8')); if (r.scenarios.length === 0) process.exit(1)"
step_done "run"
note "installed-e2e: ok"
