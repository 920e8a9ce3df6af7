#!/usr/bin/env bash
# repro-all.sh [stock|fixed|both] [NAME...]: runs the defect reproducers (issue 33) in the
# guest, on the stock build (the stock rxe/siw modules, the line's rdma-core) and/or on the
# fixed one (scripts/guest/fixed-module.sh loads the fixed modules; the lib/ of rdma-core
# built with patches/rdma-core-fixes goes first on LD_LIBRARY_PATH). The programs and that
# library come from the cache scripts/setup/fixes.sh fills (REPRO_BIN, REPRO_FIXED_LIB
# override them). Prints one line per run:
#   repro <name> <variant> exit=<n> <defect|fine|setup-failed> (<seconds>s)
# Exits 0 when every reproducer shows its defect on stock and none on fixed, else 1.
set -euo pipefail

assets="${MODULES_ROOT:?MODULES_ROOT is not set (run in the guest)}/.."
bin=${REPRO_BIN:-$assets/../../repro/bin}
fixed_lib=${REPRO_FIXED_LIB:-$assets/fixes-rdma-core/lib}
which=${1:-both}
[ $# -eq 0 ] || shift
[ -d "$bin" ] || { echo "no reproducers at $bin (bash scripts/setup/fixes.sh)" >&2; exit 2; }
[ "$which" = stock ] || [ -d "$fixed_lib" ] ||
  { echo "no fixed rdma-core at $fixed_lib (bash scripts/setup/fixes.sh <line>)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 0 ]; then names=("$@"); else mapfile -t names < <(find "$bin/" -maxdepth 1 -type f -perm -u+x -printf '%f\n' | sort); fi
case "$which" in
  stock) variants=(stock) ;;
  fixed) variants=(fixed) ;;
  both) variants=(stock fixed) ;;
  *) echo "unknown variant '$which' (stock, fixed or both)" >&2; exit 2 ;;
esac

ok=1
for variant in "${variants[@]}"; do
  for driver in rxe siw; do
    bash "$here/fixed-module.sh" "$driver" "$variant"
  done
  for name in "${names[@]}"; do
    started=$(date +%s.%N)
    set +e
    if [ "$variant" = fixed ]; then
      LD_LIBRARY_PATH="$fixed_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 60 "$bin/$name"
    else
      timeout 60 "$bin/$name"
    fi
    rc=$?
    set -e
    case "$rc" in
      1) verdict=defect ;;
      0) verdict=fine ;;
      *) verdict=setup-failed ;;
    esac
    want=$([ "$variant" = stock ] && echo defect || echo fine)
    [ "$verdict" = "$want" ] || ok=0
    printf 'repro %s %s exit=%s %s (%ss)\n' "$name" "$variant" "$rc" "$verdict" \
      "$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
  done
done
# Leave the devices on the stock modules, as the rest of a guest's tests expect them.
if [ "$which" != stock ]; then
  for driver in rxe siw; do
    bash "$here/fixed-module.sh" "$driver" stock
  done
fi
[ "$ok" = 1 ]
