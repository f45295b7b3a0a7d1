#!/usr/bin/env bash
# The main job: build afhttp, serve the bundled demo/ site on 127.0.0.1, fetch it the way an
# agent would, and show the JSON events and the artifacts written.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1; }
missing=()
need python3 || missing+=(python3)    # serves the demo site
need chromium || missing+=(chromium)  # renders the JavaScript page
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Chromium refuses to run its sandbox as root; afhttp keeps it on unless told otherwise.
if [ "$(id -u)" = 0 ]; then export AFHTTP_NO_SANDBOX=1; fi
need cargo || { echo "cargo is required: install Rust with rustup first" >&2; exit 1; }

cargo build --release --quiet
bin=target/release/afhttp
out=demo-out
rm -rf "$out"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory demo >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break
  sleep 0.1
done

echo "== static page over plain HTTP (no browser)"
"$bin" fetch "http://127.0.0.1:$port/" --want body,text,content,content_json,network --out "$out/static" | python3 -m json.tool
echo
echo "== content.md, the artifact an agent reads first"
cat "$out/static/content.md"
echo
echo "== JavaScript page with --render auto: the empty shell is detected mechanically and a"
echo "   private browser renders it (screenshot, rendered HTML, text, console, ...)"
"$bin" fetch "http://127.0.0.1:$port/app.html" --out "$out/app" | python3 -m json.tool
echo
echo "== text.txt of the rendered JavaScript page"
cat "$out/app/text.txt"
echo
echo "== artifacts"
find "$out" -type f -printf '%M %8s  %p\n' | sort -k3
