#!/usr/bin/env bash
# The long faulty-wire variants (`npm run soak`, docs/faulty-wire.md): the link's
# faulty-wire scenarios under a harsher fault spec, one guest pair per seed, each report
# into .cache/results/soak/<seed>/. Defaults: SOAK_FAULTS below, SOAK_SEEDS="1 2 3",
# SOAK_SCENARIOS (a --scenario pattern): rxe's exactly-once rows, the long 4 QPs x 1000, the
# Reads and Atomics mixed, and the 64 MiB of Writes with immediate (CI writes 1 MiB).
# SOAK_ARGS adds options, e.g. "--device siw0 --siw rfc7306" with
# SOAK_SCENARIOS='link-siw-{fetch-add-{x1000,4qp,4qp-x1000},read-atomic-mix,write-imm-64m}'
# for the patched siw pair. SOAK_TIMEOUT: seconds per guest pair (default 1800: the 64 MiB
# stream under TCG and faults takes minutes).
# Exits non-zero when any seed's run did not pass.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
faults="${SOAK_FAULTS:-drop=0.05,dup=0.02,reorder=8,delay=1ms,jitter=2ms,corrupt=0.002}"
default_scenarios='link-rxe-{fetch-add-{x1000,4qp,4qp-x1000},read-atomic-mix,write-imm-64m}'
scenarios="${SOAK_SCENARIOS:-$default_scenarios}"
status=0
for seed in ${SOAK_SEEDS:-1 2 3}; do
  echo "== soak: --faults ${faults},seed=${seed}"
  # shellcheck disable=SC2086 # SOAK_ARGS is a list of options
  node dist/cli/main.js run --link --faults "${faults},seed=${seed}" --scenario "${scenarios}" \
    --timeout "${SOAK_TIMEOUT:-1800}" ${SOAK_ARGS:-} --report ".cache/results/soak/${seed}" "$@" || status=1
done
exit "$status"
