#!/usr/bin/env bash
# ulp-packages.sh [GROUP...]: the user-space tools of the kernel's own RDMA users (issue 35),
# from the host suite's (bookworm's) Debian packages, downloaded with `apt-get download` and
# unpacked with `dpkg-deb -x` into the git-ignored cache; nothing is installed on the host
# and no service is started there (the guest runs them, from its overlay of the host's root):
#   $RDMA_INTEROP_CACHE/ulp/root/       the unpacked packages (usr/sbin/nvme, sbin/rpc.nfsd ...)
#   $RDMA_INTEROP_CACHE/ulp/debs/       the .deb files
#   $RDMA_INTEROP_CACHE/ulp/.complete   the recipe and the groups unpacked
# GROUP (default: all three):
#   nvme   nvme-cli and libnvme1 (`nvme connect -t rdma`)
#   nfs    nfs-kernel-server, nfs-common, rpcbind and their libraries missing on a minimal
#          host (rpc.nfsd, exportfs, rpc.mountd, mount.nfs)
#   iser   open-iscsi and its libraries (iscsid, iscsiadm)
# The guest's programs find the libraries with LD_LIBRARY_PATH=<root>/usr/lib/x86_64-linux-gnu:
# <root>/lib/x86_64-linux-gnu (src/ulp/tools.ts). A warm run (the stamp matches) is offline.
# Prints the root directory on its last stdout line.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(nvme nfs iser)
packages=()
for group in "${groups[@]}"; do
  case "$group" in
  nvme) packages+=(nvme-cli libnvme1) ;;
  # libnfsidmap1, libwrap0 and keyutils are what nfs-common and rpcbind need beyond the
  # host's libraries (libtirpc3, libevent, libkrb5 are part of a bookworm host).
  nfs) packages+=(nfs-kernel-server nfs-common rpcbind libnfsidmap1 libwrap0 keyutils) ;;
  iser) packages+=(open-iscsi libisns0 libopeniscsiusr) ;;
  *) die "unknown group '$group' (known: nvme nfs iser)" ;;
  esac
done

dir="$RDMA_INTEROP_CACHE/ulp"
stamp="$dir/.complete"
# Bump when the recipe below changes.
recipe=1
want="recipe-$recipe ${groups[*]}"
mkdir -p "$dir"
exec 8>"$dir/.lock"
flock 8
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  note "ULP tools (${groups[*]}): cached in $dir/root"
  echo "$dir/root"
  exit 0
fi
started=$(date +%s.%N)
rm -rf "$dir/debs" "$dir/root"
mkdir -p "$dir/debs" "$dir/root"
# No package lists yet (a fresh container whose packages were all present): fetch them once,
# as guest-assets.sh does.
candidate=$(apt-cache policy nvme-cli 2>/dev/null | sed -n 's/ *Candidate: //p')
if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
  [ "$(id -u)" -eq 0 ] || die "apt has no package lists for nvme-cli: run 'sudo apt-get update', then this again"
  step "apt-get update (to find the ULP tools)"
  apt-get update -qq
  step_done "apt-get update"
fi
step "downloading ${packages[*]} (the host suite's packages)"
(
  cd "$dir/debs"
  apt-get download -q "${packages[@]}" 2>&1 | grep -v -e '^Get:' -e 'unsandboxed' -e '^Fetched' || true
)
[ "$(find "$dir/debs" -name '*.deb' | wc -l)" -eq "${#packages[@]}" ] ||
  die "download failed (have: $(cd "$dir/debs" && echo *); wanted ${packages[*]}); apt-get update?"
step_done "download ($(du -sh "$dir/debs" | cut -f1))"
for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done

# Every program the guest runs must resolve its libraries from the host's or the unpacked ones.
libs="$dir/root/usr/lib/x86_64-linux-gnu:$dir/root/lib/x86_64-linux-gnu"
for program in usr/sbin/nvme usr/sbin/rpc.nfsd usr/sbin/exportfs usr/sbin/rpc.mountd sbin/mount.nfs sbin/rpcbind sbin/iscsiadm sbin/iscsid; do
  [ -e "$dir/root/$program" ] || continue
  missing=$(LD_LIBRARY_PATH=$libs ldd "$dir/root/$program" 2>/dev/null | grep 'not found' || true)
  [ -z "$missing" ] || die "$program lacks libraries: $missing"
done
echo "$want" >"$stamp"
note "ULP tools ready in $dir/root in $(elapsed "$started" "$(date +%s.%N)") s"
echo "$dir/root"
