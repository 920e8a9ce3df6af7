#!/usr/bin/env bash
# Issue 9's "done means", end to end: the packed tarball installed into a fresh project,
# then `npx rdma-interop setup` (guest assets into the user's cache, not node_modules) and
# `npx rdma-interop run` (one scenario per device, in the guest), both from that project.
#   scripts/ci/installed-e2e.sh [scenario glob, default: rxe-fetch-add*]
# The host test test/host/package/installed-e2e.test.ts runs it (so CI does) and checks
# what it prints.
# Set RDMA_INTEROP_E2E_CACHE to reuse a guest-asset cache between runs (else a fresh one:
# a cold set-up downloads and builds the guest kernel assets, minutes).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
cd "$RDMA_INTEROP_ROOT"
filter="${1:-rxe-fetch-add*}"

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

cache="${RDMA_INTEROP_E2E_CACHE:-$work/cache}"
# As a user: no project cache variable (common.sh exports the checkout's), the XDG one.
unset RDMA_INTEROP_CACHE
export XDG_CACHE_HOME="$cache"
step "installed-e2e: npx rdma-interop setup (cache: $cache)"
npx --no rdma-interop setup
step_done "setup"
[ ! -d node_modules/rdma-interop/.cache ] || die "set-up wrote into node_modules"

step "installed-e2e: npx rdma-interop run --scenario '$filter' --report report"
npx --no rdma-interop run --scenario "$filter" --report report
# shellcheck disable=SC2016 # JavaScript, not shell, expands these
node -e '
const r = JSON.parse(require("fs").readFileSync("report/results.json", "utf8"));
const t = r.totals;
if (t.scenarios === 0 || t.passed !== t.scenarios) { console.error(JSON.stringify(t)); process.exit(1); }
console.log(`installed-e2e: ${t.scenarios} scenario results, all passed`);
'
step_done "run"
note "installed-e2e: ok"
