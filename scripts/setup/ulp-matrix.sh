#!/usr/bin/env bash
# `npm run ulp`: the long ULP matrix of issue 35 (docs/ulp.md), each run a guest or a guest
# pair in turn, its report under $out (default .cache/results/ulp):
#   guests/          every kernel line (6.1, 6.12, 7.3) in one guest each: nvme, nfs, iser,
#                    smb on rxe0, siw0 and the TCP reference
#   link-6.1/        the two-guest link, 6.1 both sides: nvme and nfs on rxe0 and siw0
#   link-6.1-7.3/    a mixed pair: initiators on 6.1 with the stock siw, targets on 7.3
#                    with the patched siw (--siw rfc7306)
#   link-faults-*/   6.1 pairs over the fault relay: drop=0.01, dup=0.01, reorder=8 (seed 7)
# then `rdma-interop compare` over all of them into $out/compare. A run that fails does not
# stop the others; the exit status is the first failure's.
set -uo pipefail
out=${1:-.cache/results/ulp}
cli=(node dist/cli/main.js ulp)
bash scripts/setup/ulp-packages.sh >/dev/null || exit 1
status=0
step() { # name args...
  local name=$1
  shift
  echo "ulp matrix: $name"
  local rc=0
  "${cli[@]}" "$@" --report "$out/$name" || rc=$?
  if [ "$status" = 0 ]; then status=$rc; fi
}
step guests --kernels all --device rxe0,siw0,tcp
step link-6.1 --link --kernel 6.1
step link-6.1-7.3 --link --kernel 6.1 --peer-kernel 7.3 --peer-siw rfc7306
for fault in drop=0.01 dup=0.01 reorder=8; do
  step "link-faults-${fault%%=*}" --link --kernel 6.1 --faults "$fault,seed=7"
done
node dist/cli/main.js compare --out "$out/compare" "$out"/guests "$out"/link-* >/dev/null || status=1
exit "$status"
