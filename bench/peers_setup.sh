#!/usr/bin/env bash
# Install what bench/mcp_peers.py runs, pinned: the reference fetch server (mcp-server-fetch,
# in its own venv so its dependencies never touch the test suite's Python), the Readability.js
# it uses when Node is present (readabilipy installs it on first use; here from a lock), and the
# o200k_base tokenizer (js-tiktoken, ranks bundled). Registries only, through pip and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${AFHTTP_BENCH_VENV:-/var/tmp/afhttp-bench-peers-venv}"
[ -x "$VENV/bin/mcp-server-fetch" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q -r bench/peers/requirements.txt; }
js="$("$VENV/bin/python" -c 'import os, readabilipy; print(os.path.dirname(readabilipy.__file__))')/javascript"
if [ ! -d "$js/node_modules/@mozilla/readability" ]; then
  cp bench/peers/readabilipy-js/package.json bench/peers/readabilipy-js/package-lock.json "$js/"
  npm ci --prefix "$js" --no-audit --no-fund --silent
fi
[ -d bench/tokenizer/node_modules/js-tiktoken ] || npm ci --prefix bench/tokenizer --no-audit --no-fund --silent
# Browser-based peers (extra columns): Playwright MCP and chrome-devtools-mcp, run with Debian's Chromium.
[ -d bench/peers/browsers/node_modules/@playwright/mcp ] || PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 \
  npm ci --prefix bench/peers/browsers --no-audit --no-fund --silent
python3 -c 'import mcp' >/dev/null 2>&1 || python3 -m pip install -q 'mcp~=2.3'
echo "$VENV"
