#!/usr/bin/env bash
# The fleet benchmark (bench/fleet.py) on a real single-node swarm: the private dockerd the
# container tests use (started here if it is not running), the image they build, a 3-replica
# stack from deploy/swarm/stack.sh, and a page served on the bridge's gateway so the
# containers reach it. Writes bench/runs/fleet/{raw.csv,summary.md}; removes the stack and
# leaves the swarm at the end.
#
# Environment: AFHTTP_BIN (default target/release/afhttp, built if missing), AFHTTP_IMAGE_BASE
# (base image for `afhttp container build`; default the test base image if present).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dir=${AFHTTP_TEST_DOCKER_DIR:-/var/tmp/afhttp-test-docker}
export DOCKER_HOST="unix://$dir/docker.sock"
bin=${AFHTTP_BIN:-$root/target/release/afhttp}
[ -x "$bin" ] || { cargo build --release --quiet; bin=$root/target/release/afhttp; }
export AFHTTP_BIN=$bin
stack=afhttp-bench
port=${BENCH_PORT:-21222}
token=bench-fleet-token-0123456789abcdef
mkdir -p "$dir"
work=$(mktemp -d)

# One user of the private engine at a time (the tests take the same lock).
exec 9>"$dir/lock"
flock 9
if ! timeout 10 docker info >/dev/null 2>&1; then
  setsid dockerd --host "$DOCKER_HOST" --data-root "$dir/data" --exec-root "$dir/exec" \
    --pidfile "$dir/dockerd.pid" >"$dir/dockerd-bench.log" 2>&1 < /dev/null &
  for _ in $(seq 60); do timeout 5 docker info >/dev/null 2>&1 && break; sleep 1; done
fi

base=${AFHTTP_IMAGE_BASE:-$(docker images --format '{{.Repository}}:{{.Tag}}' | grep -m1 '^afhttp-test-base:' || true)}
build=("$bin" container build --browser chromium --takeover-provider novnc)
[ -n "$base" ] && build+=(--base-image "$base")
timeout 1800 "${build[@]}" >/dev/null

gateway=$(docker network inspect bridge --format '{{(index .IPAM.Config 0).Gateway}}')
[ "$(docker info --format '{{.Swarm.LocalNodeState}}')" = active ] ||
  docker swarm init --advertise-addr "$gateway" >/dev/null

cleanup() {
  docker stack rm "$stack" >/dev/null 2>&1 || true
  for _ in $(seq 60); do
    [ -z "$(docker ps -q --filter "label=com.docker.stack.namespace=$stack")" ] && break
    sleep 1
  done
  docker volume ls -q | grep "^${stack}_" | xargs -r docker volume rm -f >/dev/null 2>&1 || true
  docker swarm leave --force >/dev/null 2>&1 || true
  [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A page with some text, on the gateway so every replica reaches it.
mkdir -p "$work/site"
python3 - "$work/site/index.html" <<'PY'
import sys
paras = "".join(f"<p>Paragraph {i}: the fleet benchmark page, plain and static.</p>" for i in range(200))
open(sys.argv[1], "w").write(f"<!doctype html><title>fleet bench</title><h1>Fleet</h1>{paras}")
PY
page_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("",0)); print(s.getsockname()[1])')
timeout 3600 python3 -m http.server "$page_port" --bind "$gateway" -d "$work/site" >/dev/null 2>&1 &
server=$!

printf %s "$token" >"$work/token.secret"
AFHTTP_TOKEN_FILE="$work/token.secret" AFHTTP_HEALTH_INTERVAL=2s \
  sh deploy/swarm/stack.sh 3 "$port" >"$work/stack.yml"
docker stack deploy -c "$work/stack.yml" "$stack" >/dev/null
fleet3="afhttp-1=ws://127.0.0.1:$port,afhttp-2=ws://127.0.0.1:$((port + 1)),afhttp-3=ws://127.0.0.1:$((port + 2))"
for _ in $(seq 120); do
  healthy=$(timeout 30 "$bin" fleet status --fleet "$fleet3" --token-secret "$token" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["members_healthy"])' || echo 0)
  [ "$healthy" = 3 ] && break
  sleep 2
done
[ "$healthy" = 3 ] || { echo "the 3 replicas did not become healthy" >&2; exit 1; }

BENCH_FLEET3=$fleet3 BENCH_FLEET1="afhttp-1=ws://127.0.0.1:$port" BENCH_TOKEN=$token \
  BENCH_URL="http://$gateway:$page_port/" BENCH_STACK=$stack timeout 1800 python3 bench/fleet.py
