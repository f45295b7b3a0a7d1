#!/usr/bin/env bash
# Documents benchmark (one run): text of a 100-page PDF by `afhttp fetch --render none
# --want text` against `curl -o` + `pdftotext` on the same file from the same loopback
# server, wall time and peak RSS (GNU time's %M: the larger of afhttp and its reader child
# `afhttp-pdf-reader`, not their sum; bench/pdf_corpus.py sums them on real PDFs).
# Prints one markdown table row per tool; docs/benchmarks.md records a run.
# Usage: bench/documents.sh [AFHTTP_BINARY]   (default target/release/afhttp)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/afhttp}
work=$(mktemp -d)
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 - "$work/long.html" <<'PY'
import sys
pages = "".join(
    f"<section><h2>Chapter {i}</h2><p>" + " ".join(f"Sentence {j} of chapter {i} talks about widgets and gadgets." for j in range(40)) + "</p></section>"
    for i in range(1, 101))
open(sys.argv[1], "w").write("<!doctype html><meta charset=utf-8><title>Long</title><style>section{page-break-after:always}</style>" + pages)
PY
timeout 120 chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer \
  --user-data-dir="$work/profile" --print-to-pdf="$work/long.pdf" "file://$work/long.html" 2>/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$work" && exec python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) & srv=$!
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/long.pdf" && break; sleep 0.1; done
url="http://127.0.0.1:$port/long.pdf"
measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>&1
  read -r secs kib < "$work/time"
  printf '| %s | %.3f | %d |\n' "$label" "$secs" "$((kib / 1024))"
}
echo "| tool | wall s | peak RSS MiB |"
echo "| --- | --- | --- |"
measure "afhttp fetch --render none --want text" timeout 60 "$bin" fetch "$url" --render none --want text --out "$work/afhttp"
measure "curl -o + pdftotext" timeout 60 sh -c "curl -s -o '$work/c.pdf' '$url' && pdftotext '$work/c.pdf' '$work/c.txt'"
measure "pdftotext alone" timeout 60 pdftotext "$work/long.pdf" "$work/p.txt"
# The 1 GiB decompression bomb: time and peak RSS until the reader is stopped.
python3 - "$work/bomb.pdf" <<'PY'
import sys, zlib
c = zlib.compressobj(9); data = b"".join(c.compress(b"\0" * (1 << 20)) for _ in range(1024)) + c.flush()
objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"]
out = b"%PDF-1.4\n"; offs = []
for i, o in enumerate(objs):
    offs.append(len(out)); out += b"%d 0 obj\n" % (i + 1) + o + b"\nendobj\n"
x = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offs)
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, x)
open(sys.argv[1], "wb").write(out)
PY
measure "afhttp, 1 GiB bomb" timeout 60 "$bin" fetch "http://127.0.0.1:$port/bomb.pdf" --render none --want text --out "$work/bomb"
measure "pdftotext, 1 GiB bomb" timeout 120 pdftotext "$work/bomb.pdf" "$work/b.txt"
# `--want pdf` against the plain screenshot fetch of the same page (the 100-chapter HTML the
# PDF above was printed from), on one running host so browser start-up is not counted:
# three runs each, the median wall time (client side; the browser's RSS is not the client's).
hport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
AFHTTP_NO_SANDBOX=1 AFHTTP_BROWSER_BIN=${AFHTTP_BROWSER_BIN:-/usr/bin/chromium} \
  "$bin" host --listen "tcp:127.0.0.1:$hport" >"$work/host.out" 2>"$work/host.err" & host=$!
trap 'kill "$srv" "$host" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q host_ready "$work/host.out" && break; sleep 0.1; done
page="http://127.0.0.1:$port/long.html"
median() { # label, command...
  local label=$1; shift
  local times=()
  for i in 1 2 3; do
    /usr/bin/time -f "%e" -o "$work/time" "$@" --out "$work/m$i" >/dev/null 2>&1
    times+=("$(cat "$work/time")"); rm -rf "$work/m$i"
  done
  printf '| %s | %s | %s |\n' "$label" "$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)" "${times[*]}"
}
echo
echo "| fetch of the 100-chapter page, on a running host | median wall s | runs |"
echo "| --- | --- | --- |"
median "--want screenshot" timeout 120 "$bin" fetch "$page" --endpoint-url "ws://127.0.0.1:$hport" --render always --wait load --want screenshot
median "--want pdf" timeout 120 "$bin" fetch "$page" --endpoint-url "ws://127.0.0.1:$hport" --render always --wait load --want pdf
