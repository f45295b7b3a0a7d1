#!/usr/bin/env bash
# Build the release binary and run the benchmarks; docs/benchmarks.md is rebuilt from the
# bench/summary-*.md files (each script rewrites its own).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cargo build --release --quiet
python3 -c 'import websockets' >/dev/null 2>&1 || python3 -m pip install -q websockets
python3 bench/run.py "$@"
python3 bench/run_browser.py "$@"
python3 bench/run_concurrency.py "$@"
python3 bench/soak.py "$@"
python3 bench/observation_growth.py "$@"
python3 bench/takeover.py "$@"
python3 bench/readiness.py "$@"
python3 bench/throughput.py "$@"
# Isolated fetches (a one-member fleet) against pooled ones; BENCH_BIN_BASE adds a baseline host.
python3 bench/isolated_tabs.py
# PDF text and --want pdf (prints its tables; bench/summary-documents.md records a run).
bench/documents.sh
# MCP over stdio vs the CLI (prints its JSON; bench/summary-mcp.md is written from it by hand).
python3 -c "import mcp" >/dev/null 2>&1 || python3 -m pip install -q "mcp~=2.3"
python3 bench/mcp_stdio.py
# The fleet on a single-node swarm (the private dockerd of the container tests).
AFHTTP_BIN="$(pwd)/target/release/afhttp" bench/fleet.sh
# Time-boxed fuzzing (nightly; FUZZ_SECONDS per target, default 60).
exec bench/fuzz.sh
