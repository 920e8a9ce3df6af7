#!/usr/bin/env bash
# Sourced, never run: apt for another Debian suite (bookworm-backports, trixie,
# trixie-backports) without touching the machine's own apt set-up. Each suite gets its own
# sources list, package lists and package cache under the git-ignored cache:
#   $RDMA_INTEROP_CACHE/apt/<suite>/sources.list, lists/, cache/
# (kernel-runtime.md: Dir::Etc::sourcelist + an empty sourceparts + Dir::State::Lists;
# Dir::Cache too, or apt would rebuild the machine's pkgcache.bin from these lists).
# Nothing is ever installed from these lists: they serve `apt-cache show`, `apt-get
# download` and `apt-get source --download-only`, run as the invoking user.

# suite_apt_dir SUITE: where the suite's apt state lives.
suite_apt_dir() {
  printf '%s/apt/%s\n' "$RDMA_INTEROP_CACHE" "$1"
}

# suite_apt_opts SUITE: the apt options that confine apt to the suite's own state.
suite_apt_opts() {
  local d
  d=$(suite_apt_dir "$1")
  printf '%s\n' \
    -o "Dir::Etc::sourcelist=$d/sources.list" \
    -o Dir::Etc::sourceparts=/dev/null \
    -o "Dir::State::Lists=$d/lists" \
    -o "Dir::Cache=$d/cache" \
    -o Dir::Cache::pkgcache= \
    -o Dir::Cache::srcpkgcache= \
    -o APT::Sandbox::User=root \
    -o Debug::NoLocking=1
}

# suite_apt_get SUITE ARGS...: apt-get confined to the suite.
suite_apt_get() {
  local suite=$1
  shift
  local opts
  mapfile -t opts < <(suite_apt_opts "$suite")
  apt-get "${opts[@]}" "$@"
}

# suite_apt_cache SUITE ARGS...: apt-cache confined to the suite.
suite_apt_cache() {
  local suite=$1
  shift
  local opts
  mapfile -t opts < <(suite_apt_opts "$suite")
  apt-cache "${opts[@]}" "$@"
}

# suite_apt_ready SUITE [deb-src]: writes the suite's sources list (binary packages, plus
# source packages when asked) and refreshes its lists when missing or older than a day
# (Debian's security updates bump kernel ABIs; a warm set-up on the same day stays offline).
suite_apt_ready() {
  local suite=$1 with_src=${2:-} d types=deb
  d=$(suite_apt_dir "$suite")
  [ "$with_src" = deb-src ] && types="deb deb-src"
  mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
  # Dir::Etc::sourcelist is read in the one-line format.
  local list="" t
  for t in $types; do
    list+="$t [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main"$'\n'
  done
  if [ "$(cat "$d/sources.list" 2>/dev/null)" != "${list%$'\n'}" ]; then
    printf '%s' "$list" >"$d/sources.list"
    rm -f "$d/updated.stamp"
  fi
  if [ -z "$(find "$d/updated.stamp" -mmin -1440 2>/dev/null)" ]; then
    step "apt-get update for $suite (own lists in $d)"
    suite_apt_get "$suite" update -qq 2>&1 | grep -v -e 'unsandboxed' >&2 || true
    ls "$d"/lists/*_InRelease >/dev/null 2>&1 || die "apt-get update for $suite failed"
    touch "$d/updated.stamp"
    step_done "apt-get update for $suite"
  fi
}

# suite_pin_versions SUITE VERSION PKG...: one "PKG=VER" line per package that the suite's
# lists have: VER is the kernel's own VERSION where the archive still has that package at
# it, else the package's candidate. The kernel's parts depend on each other with ">=" where
# they may (the headers on "linux-kbuild-6.1 (>= 6.1.192-2)"), and bookworm-security keeps
# only the newest linux-kbuild-6.1: on 2026-11-28 it had 6.1.192-3 beside an image of
# 6.1.192-2, and a download of every part pinned to 6.1.192-2 failed. SUITE "host" is the
# host's own apt.
suite_pin_versions() {
  local suite=$1 version=$2 pkg candidate shown
  shift 2
  local cache=(apt-cache)
  [ "$suite" = host ] || cache=(suite_apt_cache "$suite")
  for pkg in "$@"; do
    # apt-cache show PKG=VER exits 0 with no output for a version it does not have. Its
    # output is read whole first: `| grep -q` would close the pipe at the first match and,
    # under pipefail, turn apt-cache's SIGPIPE into a miss (linux-source-6.1 6.1.192-2 was
    # passed over for 6.1.192-3 that way).
    shown=$("${cache[@]}" show "$pkg=$version" 2>/dev/null || true)
    if grep -q '^Version: ' <<<"$shown"; then
      echo "$pkg=$version"
    else
      candidate=$("${cache[@]}" show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -n1)
      [ -z "$candidate" ] || echo "$pkg=$candidate"
    fi
  done
}
