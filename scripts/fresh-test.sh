#!/usr/bin/env bash
# `make test` as a fresh machine runs it: a new clone of a commit (default HEAD) in a new temp
# dir, with a new HOME, XDG_* dirs, TMPDIR and AFHTTP_TEST_DOCKER_DIR (so the private dockerd
# starts from an empty data root and the base image is built again). Uncommitted changes are
# not in the clone.
#
# Kept from this machine on purpose: PATH, and RUSTUP_HOME / CARGO_HOME pointing at the
# installed toolchain and cargo's registry cache (a fresh HOME would otherwise lose rustup's
# toolchain). Everything else a run leaves (target/, node_modules, npm's cache, Chromium
# profiles, the docker data root) starts empty and is removed afterwards unless
# AFHTTP_FRESH_KEEP=1.
#
# Usage: scripts/fresh-test.sh [COMMIT]      (or: make test-fresh)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
rev="$(git -C "$repo" rev-parse --verify "${1:-HEAD}^{commit}")"

export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"

root="$(mktemp -d /var/tmp/afhttp-fresh-XXXXXX)"
cleanup() {
  status=$?
  if [ "${AFHTTP_FRESH_KEEP:-}" = 1 ]; then
    echo "fresh-test: kept $root" >&2
  else
    rm -rf "$root"
  fi
  exit "$status"
}
trap cleanup EXIT

mkdir -p "$root"/{home,config,cache,data,state,runtime,tmp,docker}
chmod 700 "$root/runtime"
# Tests that run a host as another user (transfer, sandbox) need to reach files under TMPDIR,
# as they do under /tmp on a fresh machine.
chmod 755 "$root"
chmod 1777 "$root/tmp"
git clone --quiet --no-local "$repo" "$root/afhttp"
git -C "$root/afhttp" checkout --quiet --detach "$rev"

export HOME="$root/home"
export XDG_CONFIG_HOME="$root/config" XDG_CACHE_HOME="$root/cache"
export XDG_DATA_HOME="$root/data" XDG_STATE_HOME="$root/state"
export XDG_RUNTIME_DIR="$root/runtime"
export TMPDIR="$root/tmp"
export AFHTTP_TEST_DOCKER_DIR="$root/docker"
# A DOCKER_HOST from the caller would point the tests at an engine that is not fresh.
unset DOCKER_HOST CARGO_TARGET_DIR

echo "fresh-test: $rev in $root/afhttp (started $(date -u +%H:%M:%S) UTC, load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
start=$(date +%s)
set +e
make -C "$root/afhttp" test
status=$?
set -e
echo "fresh-test: make test exited $status after $(( $(date +%s) - start )) s (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
exit "$status"
