#!/usr/bin/env bash
# rdma-core.sh <version> [patch-dir]: builds rdma-core <version> in place (not installed),
# only what the project uses: libibverbs, librdmacm and the rxe and siw providers (no
# pyverbs, no man pages, no other providers), cached in
#   $RDMA_INTEROP_CACHE/rdma-core/<version>[-<hash of patch-dir>]/build
# and prints that build directory on its LAST stdout line (progress goes to stderr).
#   <build>/lib                 libibverbs.so.1, librdmacm.so.1, lib{rxe,siw}-rdmav*.so
#   <build>/etc/libibverbs.d    rxe.driver, siw.driver (absolute paths into <build>/lib)
# A program uses it with LD_LIBRARY_PATH=<build>/lib: an in-place build (-DIN_PLACE=1)
# has the provider and driver-file directories compiled in, so no other variable is needed.
# The source is Debian's orig tarball of the first suite that has <version> (trixie 56.1,
# sid 65.0, ...), fetched with `apt-get source --download-only` from a separate deb-src
# list (suite-apt.sh; the .dsc may 404, the orig tarball downloads and apt checks its hash
# against the Sources index). Patches: every *.patch / *.diff in [patch-dir], in name
# order, applied with `patch -p1`; the cache key includes a hash of their content.
# Build dependencies (cmake, ninja-build, libnl-*-dev, pkg-config) come from apt.sh.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
# shellcheck source=scripts/setup/suite-apt.sh
source "$(dirname "$0")/suite-apt.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then die "usage: rdma-core.sh <version> [patch-dir]"; fi
version=$1
patch_dir=${2:-}
[[ "$version" =~ ^[0-9]+\.[0-9]+$ ]] || die "rdma-core version must look like 56.1 (got '$version')"

key=$version
patches=()
if [ -n "$patch_dir" ]; then
  [ -d "$patch_dir" ] || die "patch directory not found: $patch_dir"
  mapfile -t patches < <(find "$patch_dir" -maxdepth 1 -type f \( -name '*.patch' -o -name '*.diff' \) | LC_ALL=C sort)
  [ ${#patches[@]} -gt 0 ] || die "no *.patch or *.diff files in $patch_dir"
  key="$version-$(cat "${patches[@]}" | sha256sum | cut -c1-12)"
fi

top="$RDMA_INTEROP_CACHE/rdma-core"
dir="$top/$key"
build="$dir/build"
stamp="$dir/.complete"
# Bump when the recipe below changes, so builds by an older recipe are redone.
recipe=1
mkdir -p "$top"
exec 8>"$top/.lock-$key"
if ! flock -n 8; then
  note "another set-up is building rdma-core $key: waiting for it"
  flock 8
fi
if [ "$(cat "$stamp" 2>/dev/null)" = "recipe-$recipe" ]; then
  note "rdma-core $key: cached"
  echo "$build"
  exit 0
fi

# --- source ---------------------------------------------------------------------------
# The first suite whose rdma-core source package has this upstream version.
tarball=""
for suite in trixie unstable bookworm; do
  suite_apt_ready "$suite" deb-src
  debver=$(suite_apt_cache "$suite" showsrc rdma-core 2>/dev/null | sed -n 's/^Version: //p' |
    grep -E "^$version-" | head -n1 || true)
  [ -n "$debver" ] || continue
  step "downloading rdma-core $debver source from $suite"
  rm -rf "$dir"
  mkdir -p "$dir/dl"
  # The .dsc may 404 (kernel-runtime.md); what matters is the orig tarball.
  (cd "$dir/dl" && suite_apt_get "$suite" source --download-only -q "rdma-core=$debver" >"$dir/download.log" 2>&1) || true
  tarball=$(find "$dir/dl" -maxdepth 1 -name "rdma-core_$version.orig.tar.*" | head -n1)
  [ -n "$tarball" ] || { tail -n 5 "$dir/download.log" >&2; die "download of rdma-core_$version.orig.tar.* from $suite failed"; }
  step_done "download ($(du -h "$tarball" | cut -f1))"
  break
done
[ -n "$tarball" ] || die "no Debian suite (trixie, unstable, bookworm) has rdma-core $version"

step "unpacking rdma-core $version${patch_dir:+ and applying ${#patches[@]} patch(es) from $patch_dir}"
mkdir -p "$dir/src"
tar -xf "$tarball" -C "$dir/src" --strip-components=1
for p in "${patches[@]}"; do
  patch -d "$dir/src" -p1 --batch --forward <"$p" >"$dir/patch.log" 2>&1 ||
    { cat "$dir/patch.log" >&2; die "patch $(basename "$p") does not apply to rdma-core $version"; }
done
step_done "unpack"

# --- build ----------------------------------------------------------------------------
step "configuring rdma-core $version (in place, no pyverbs, no man pages)"
mkdir -p "$build"
cmake -S "$dir/src" -B "$build" -G Ninja -DIN_PLACE=1 -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 \
  -DENABLE_VALGRIND=0 -DENABLE_STATIC=0 -DCMAKE_BUILD_TYPE=Release >"$dir/cmake.log" 2>&1 ||
  { tail -n 30 "$dir/cmake.log" >&2; die "cmake failed (log: $dir/cmake.log)"; }
step_done "configure"

# The providers' file names carry the provider ABI (librxe-rdmav34.so): ask ninja for them.
mapfile -t providers < <(ninja -C "$build" -t targets all | grep -oE '^lib/lib(rxe|siw)-rdmav[0-9]+\.so' | sort -u)
[ ${#providers[@]} -eq 2 ] || die "rdma-core $version: rxe and siw provider targets not found"
step "building libibverbs, librdmacm, ${providers[*]#lib/}"
ninja -C "$build" ibverbs rdmacm "${providers[@]}" >"$dir/build.log" 2>&1 ||
  { tail -n 30 "$dir/build.log" >&2; die "rdma-core build failed (log: $dir/build.log)"; }
step_done "build"

# Only the providers that were built may be listed: libibverbs warns on stderr for every
# listed driver it cannot load.
find "$build/etc/libibverbs.d" -name '*.driver' ! -name rxe.driver ! -name siw.driver -delete
rm -rf "$dir/dl"
echo "recipe-$recipe" >"$stamp"
note "rdma-core $key ready in $build"
echo "$build"
