#!/usr/bin/env bash
# The main job (`npm run suite`): set-up, then the interop suite on the default runtime
# (this host's RDMA devices if it has them, else the throwaway QEMU guest).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
exec node dist/cli/main.js run "$@"
