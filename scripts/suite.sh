#!/usr/bin/env bash
# The main job (`npm run suite`): set-up, then the interop suite on the default runtime
# (this host's RDMA devices if it has them, else the throwaway QEMU guest).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
# The suite runs on CI's Node (26, fetched by the set-up: scripts/ci/min-node.sh), as the
# tests do: the machine's own Node may be below engines.node (Debian 12's nodejs is 18,
# this project's CI machine has 20.20.2) and only has to run the set-up.
node_bin=$(bash scripts/ci/min-node.sh ci)
exec "$node_bin" dist/cli/main.js run "$@"
