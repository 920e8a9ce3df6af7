#!/usr/bin/env bash
# Shared helpers for the project's shell scripts: progress lines, the cache root.
# Sourced, never run.

# The project root, whatever the caller's working directory.
RDMA_INTEROP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export RDMA_INTEROP_ROOT
# Everything the set-up produces lives here. In a git checkout: the git-ignored .cache/,
# so a clean clone starts cold and a second run finds it warm. An installed package has
# no default here: the CLI (`rdma-interop setup`, src/runtime/paths.ts, the one place the
# rule lives) resolves the user's cache directory and passes it in.
if [ -z "${RDMA_INTEROP_CACHE:-}" ]; then
  if [ -e "$RDMA_INTEROP_ROOT/.git" ]; then
    RDMA_INTEROP_CACHE="$RDMA_INTEROP_ROOT/.cache"
  else
    printf '[setup] error: RDMA_INTEROP_CACHE is not set (run "npx rdma-interop setup")\n' >&2
    exit 1
  fi
fi
export RDMA_INTEROP_CACHE

step_started_at=0

# elapsed START END: seconds between two `date +%s.%N` readings, one decimal (awk: no bc
# needed before the packages are installed).
elapsed() {
  awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'
}

# step "what": announce a long step so nobody stares at a silent terminal.
step() {
  step_started_at=$(date +%s.%N)
  printf '[setup] %s ...\n' "$*" >&2
}

# step_done "what": close the step with its duration.
step_done() {
  local now
  now=$(date +%s.%N)
  printf '[setup] %s: done in %s s\n' "$*" "$(elapsed "$step_started_at" "$now")" >&2
}

note() {
  printf '[setup] %s\n' "$*" >&2
}

die() {
  printf '[setup] error: %s\n' "$*" >&2
  exit 1
}
