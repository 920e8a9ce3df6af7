#!/usr/bin/env bash
# The long faulty-wire variants (`npm run soak`, docs/faulty-wire.md): the link's
# faulty-wire scenarios under a harsher fault spec, one guest pair per seed, each report
# into .cache/results/soak/<seed>/. Defaults: SOAK_FAULTS below, SOAK_SEEDS="1 2 3".
# Exits non-zero when any seed's run did not pass.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
faults="${SOAK_FAULTS:-drop=0.05,dup=0.02,reorder=8,delay=1ms,jitter=2ms,corrupt=0.002}"
status=0
for seed in ${SOAK_SEEDS:-1 2 3}; do
  echo "== soak: --faults ${faults},seed=${seed}"
  node dist/cli/main.js run --link --faults "${faults},seed=${seed}" \
    --report ".cache/results/soak/${seed}" "$@" || status=1
done
exit "$status"
