#!/usr/bin/env bash
# The project's whole set-up, idempotent: a second run with nothing changed only checks.
#   1. Debian packages (apt.sh)
#   2. npm install of the locked versions, when package-lock.json changed since the last install
#   3. the prebuilt addon for the package and the Node versions CI proves (scripts/ci/), then
#      the TypeScript build and the N-API addon (node-gyp, incremental)
#   4. the guest kernel, modules, siw.ko and initramfs (guest-assets.sh), cached by version,
#      for every kernel line (kernel-matrix.sh: 6.12, 7.3 and their rdma-core 56.1), and
#      the patched siw (siw-patched.sh), and the fixed build of issue 33 (fixes.sh) for the
#      line the kernel tests' guest boots
#   5. the container runtime: docker.io, debootstrap, the local base image (docker.sh)
# Set RDMA_INTEROP_SKIP_GUEST_ASSETS=1 on a host that has its own RDMA devices.
# Outside a git checkout this is `rdma-interop setup` (guest runtime only, user cache).
set -euo pipefail
if [ ! -e "$(dirname "$0")/../.git" ]; then
  # An installed package (e.g. under node_modules): no lock file, no npm install, nothing
  # written into node_modules; the CLI's own set-up puts the guest assets in the user's
  # cache directory.
  exec node "$(dirname "$0")/../dist/cli/main.js" setup "$@"
fi
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
cd "$RDMA_INTEROP_ROOT"
setup_started=$(date +%s.%N)

bash scripts/setup/apt.sh

mkdir -p "$RDMA_INTEROP_CACHE"
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat "$RDMA_INTEROP_CACHE/npm-install.stamp" 2>/dev/null)" != "$lock_hash" ]; then
  # `npm install` against the committed lock, not `npm ci`: the registry reachable here
  # lacks Biome's macOS/Windows builds, and npm ci refuses a lock that cannot list every
  # optional platform package. npm install resolves the same locked versions (the lock
  # stays byte-identical) and skips what this platform does not need.
  step "npm install (locked versions)"
  npm install --no-audit --no-fund --loglevel=error
  echo "$lock_hash" >"$RDMA_INTEROP_CACHE/npm-install.stamp"
  step_done "npm install"
else
  note "npm packages: up to date"
fi

# --- package checks (scripts/ci/): the prebuilt addon `npm pack` ships (before build.sh,
# which then only relinks), and the Node versions CI proves (scripts/ci/min-node.sh):
# the floor engines.node claims (22, also test/kernel/verbs/node22.test.ts), the
# maintenance LTS (24) and CI's own Node (26, the Active LTS; scripts/test.sh runs on it).
# All cached; a warm run only checks.
bash scripts/ci/prebuild.sh
bash scripts/ci/min-node.sh floor >/dev/null
bash scripts/ci/min-node.sh maintenance >/dev/null
bash scripts/ci/min-node.sh ci >/dev/null
# --- end of package checks

bash scripts/setup/build.sh

if [ "${RDMA_INTEROP_SKIP_GUEST_ASSETS:-0}" != 1 ]; then
  bash scripts/setup/guest-assets.sh
  # the other kernel lines (6.12, 7.3) and their rdma-core, for the kernel matrix
  bash scripts/setup/kernel-matrix.sh
  # pyverbs of rdma-core 56.1 for rdma-core's own tests (rdma-core-tests; 190 s once)
  bash scripts/setup/pyverbs.sh 56.1 >/dev/null
  # The patched siw.ko (patches/siw/, RFC 7306) and its libsiw (patches/rdma-core/), for every
  # kernel line: the packet tester (`probe --kernels all --siw both`) and the mixed link pairs
  # run it on 6.1, 6.12 and 7.3 (6.12 and 7.3 together: 35 s with the sources downloaded).
  # RDMA_INTEROP_SIW_PATCHED_LINES="6.1" builds fewer.
  # shellcheck disable=SC2086 # a list of lines
  bash scripts/setup/siw-patched.sh ${RDMA_INTEROP_SIW_PATCHED_LINES:-}
  # The fixed build of issue 33 (repro/README.md) for the line the kernel tests' guest boots
  # (DEFAULT_KERNEL_LINE): the reproducers, rdma-core 56.1 with patches/rdma-core-fixes/, the
  # fixed rdma_rxe.ko and siw.ko. The modules reuse the linux-source and headers siw-patched.sh
  # just fetched (scripts/lib/kernel-module.sh): about 16 s for both on 6.1; the fixed rdma-core
  # about 40 s, cold.
  # shellcheck source=scripts/setup/kernel-lines.sh
  source scripts/setup/kernel-lines.sh
  bash scripts/setup/fixes.sh "$DEFAULT_KERNEL_LINE"
  # The user-space tools of the kernel's own RDMA users (issue 35: nvme-cli, the NFS server
  # and client programs, open-iscsi), unpacked from Debian's packages into the cache for the
  # guest: test/kernel/ulp/ and `rdma-interop ulp` (3.4 s cold, 0.1 s warm).
  bash scripts/setup/ulp-packages.sh >/dev/null
fi

# The container runtime (`rdma-interop docker`): docker.io, debootstrap, the local base.
bash scripts/setup/docker.sh

note "set-up complete in $(elapsed "$setup_started" "$(date +%s.%N)") s"
