#!/usr/bin/env bash
# repro-all.sh BIN FIXED_LIB [stock|fixed|both] [NAME...]: runs the defect reproducers (issue
# 33) in the guest, on the stock build (the stock rxe/siw modules, the line's rdma-core) and/or
# on the fixed one (scripts/guest/fixed-module.sh loads the fixed modules; FIXED_LIB, the
# lib/ of rdma-core built with patches/rdma-core-fixes, goes first on LD_LIBRARY_PATH).
# Prints one line per run: `repro <name> <variant> exit=<n> <defect|fine|setup-failed>`.
# Exits 0 when every reproducer shows its defect on stock and none on fixed, else 1.
set -euo pipefail

bin=${1:?usage: repro-all.sh BIN FIXED_LIB [stock|fixed|both] [NAME...]}
fixed_lib=${2:?usage: repro-all.sh BIN FIXED_LIB [stock|fixed|both] [NAME...]}
which=${3:-both}
shift $(($# < 3 ? $# : 3))
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
[ "$ok" = 1 ]
