#!/usr/bin/env bash
# pyverbs.sh <version>: builds rdma-core <version>'s Python binding (pyverbs) and stages its
# tests (tests/ of the source), for `rdma-interop rdma-core-tests`, in a build directory of
# its own next to rdma-core.sh's, so that build (its cache key and its stamp) is untouched:
#   $RDMA_INTEROP_CACHE/rdma-core/<version>/pyverbs-build
# and prints that directory on its LAST stdout line (progress goes to stderr).
#   <dir>/python/pyverbs   the compiled binding (PYTHONPATH=<dir>/python)
#   <dir>/python/tests     rdma-core's tests, run as `python3 -m tests.run_tests` there
#   <dir>/lib              the libibverbs, librdmacm and rxe/siw providers it links
# The binding is built for /usr/bin/python3, the interpreter the guest runs (the guest
# boots the host's root: its PATH has no pyenv or /usr/local python). Debian's
# python3-pyverbs is rdma-core 44's and does not match the 56.1 tests, hence the build.
# Needs cython3 and python3-dev (apt.sh) and the source rdma-core.sh <version> unpacked.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

[ $# -eq 1 ] || die "usage: pyverbs.sh <version>"
version=$1
[[ "$version" =~ ^[0-9]+\.[0-9]+$ ]] || die "rdma-core version must look like 56.1 (got '$version')"
python=/usr/bin/python3
[ -x "$python" ] || die "$python is missing (apt.sh installs python3)"
"$python" -c 'import Cython' 2>/dev/null || die "Cython for $python is missing (apt.sh installs cython3)"
ls /usr/include/python3*/Python.h >/dev/null 2>&1 ||
  die "python3-dev is missing (apt.sh installs it)"

# The source: rdma-core.sh's (cached after its first run).
bash "$(dirname "$0")/rdma-core.sh" "$version" >/dev/null
dir="$RDMA_INTEROP_CACHE/rdma-core/$version"
src="$dir/src"
build="$dir/pyverbs-build"
stamp="$build/.complete"
# Bump when the recipe below changes.
recipe=1
exec 8>"$RDMA_INTEROP_CACHE/rdma-core/.lock-pyverbs-$version"
flock 8
if [ "$(cat "$stamp" 2>/dev/null)" = "recipe-$recipe" ]; then
  note "pyverbs $version: cached"
  echo "$build"
  exit 0
fi

step "configuring rdma-core $version with pyverbs ($python, cython $("$python" -c 'import Cython; print(Cython.__version__)'))"
rm -rf "$build"
mkdir -p "$build"
cmake -S "$src" -B "$build" -G Ninja -DIN_PLACE=1 -DNO_PYVERBS=0 -DNO_MAN_PAGES=1 \
  -DPYTHON_EXECUTABLE="$python" -DENABLE_VALGRIND=0 -DENABLE_STATIC=0 \
  -DCMAKE_BUILD_TYPE=Release >"$build/cmake.log" 2>&1 ||
  { tail -n 30 "$build/cmake.log" >&2; die "cmake failed (log: $build/cmake.log)"; }
grep -q 'cython NOT found' "$build/cmake.log" && die "cmake did not find cython (log: $build/cmake.log)"
step_done "configure"

# pyverbs' extension modules and what they link (libibverbs, librdmacm, libmlx5, libefa),
# the rxe and siw providers, and the staged python/ tree (tests included).
mapfile -t providers < <(ninja -C "$build" -t targets all | grep -oE '^lib/lib(rxe|siw)-rdmav[0-9]+\.so' | sort -u)
mapfile -t pymods < <(ninja -C "$build" -t targets all | grep -oE '^python/[^:]+' | sort -u)
[ ${#pymods[@]} -gt 0 ] || die "rdma-core $version: no python/ targets (pyverbs not configured)"
step "building pyverbs (${#pymods[@]} python targets) and ${providers[*]#lib/}"
ninja -C "$build" "${pymods[@]}" "${providers[@]}" >"$build/build.log" 2>&1 ||
  { tail -n 30 "$build/build.log" >&2; die "pyverbs build failed (log: $build/build.log)"; }
step_done "build"
ls "$build"/python/pyverbs/device.*.so >/dev/null 2>&1 || die "pyverbs was not built into $build/python"
find "$build/etc/libibverbs.d" -name '*.driver' ! -name rxe.driver ! -name siw.driver -delete
echo "recipe-$recipe" >"$stamp"
note "pyverbs $version ready in $build"
echo "$build"
