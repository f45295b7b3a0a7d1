#!/usr/bin/env python3
"""Settled-page readiness (issue 14) against the raw-CDP "networkidle" baseline, one run:

1. Warm fetches (default `--want`, default `--wait auto`) of the bench pages -- a static
   article, an SPA, an XHR page, a tall image-heavy page of about 14,000 px -- against
   `bench/raw_cdp.py` in its networkidle mode (new tab, navigate, load, then 800 ms with no
   request in flight, outerHTML, innerText, full-page PNG, close) on the same host, alternating.
2. The stuck-third-party page (a parser-blocking script, an image and a beacon on a host that
   accepts TCP and never answers) on the warm host: afhttp returns within the readiness
   budget; the baseline never reaches network idle, so it is not run.

Usage: BENCH_BIN=target/debug/afhttp bench/readiness.py   (default: target/release/afhttp)
"""
import os
import platform
import socket
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as http_bench  # noqa: E402
import run_browser  # noqa: E402  (registers /spa and /api/items; host and env helpers)

ROOT = http_bench.ROOT
BIN = os.environ.get("BENCH_BIN") or http_bench.BIN
RUNS = int(os.environ.get("BENCH_RUNS", "5"))

XHR = b"""<!doctype html><html><head><title>XHR</title></head><body><h1>Orders</h1><ul id="l"></ul>
<script>function get(n){var x=new XMLHttpRequest();x.open('GET','/api/items');x.onload=function(){
var d=JSON.parse(x.responseText);var li=document.createElement('li');li.textContent='batch '+n+': '+d.items.length;
document.getElementById('l').appendChild(li);if(n<3)get(n+1);};x.send();}get(1);</script></body></html>"""


def tall_page():
    # About 14,000 px: 70 sections of a heading, a paragraph and a 140 px inline SVG image.
    img = ("data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/svg' width='600' height='140'>"
           "<rect width='600' height='140' fill='%23369'/><circle cx='70' cy='70' r='50' fill='%23fc3'/></svg>")
    parts = ["<!doctype html><html><head><title>Tall</title></head><body style='margin:0;font:16px sans-serif'>"]
    for i in range(70):
        parts.append(f"<h2>Section {i}</h2><p>{'Lorem ipsum dolor sit amet. ' * 12}</p>"
                     f"<img src=\"{img}\" width=600 height=140 alt='figure {i}'>")
    parts.append("</body></html>")
    return "".join(parts).encode()


http_bench.PAGES["/xhr"] = (XHR, "text/html; charset=utf-8")
http_bench.PAGES["/tall"] = (tall_page(), "text/html; charset=utf-8")


def hang_server():
    """A host on 127.0.0.2 that accepts and never answers; returns 'host:port'."""
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.listen(64)
    held = []

    def loop():
        while True:
            c, _ = s.accept()
            held.append(c)
    threading.Thread(target=loop, daemon=True).start()
    return f"127.0.0.2:{s.getsockname()[1]}"


def main():
    env = run_browser.bench_env()
    load_start = os.getloadavg()[0]
    hang = hang_server()
    http_bench.PAGES["/stuck"] = ((
        "<!doctype html><html><head><title>Stuck</title></head><body><h1>Stuck third parties</h1>"
        "<p>The article text arrives; the ad, analytics and CDN hosts never answer.</p>"
        f"<img src='http://{hang}/pixel.gif'><script>navigator.sendBeacon('http://{hang}/b','x')</script>"
        f"<script src='http://{hang}/tag.js'></script><p>after the tag</p></body></html>").encode(),
        "text/html; charset=utf-8")
    srv = http_bench.serve()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="afhttp-bench-ready-")
    host, ready = run_browser.start_host(env, BIN)
    endpoint = ready["endpoint_url"]
    cdp = endpoint + "/cdp"
    n = [0]

    def out():
        n[0] += 1
        return os.path.join(tmp, str(n[0]))

    def afhttp(path):
        return [BIN, "fetch", base + path, "--endpoint-url", endpoint, "--render", "always", "--out", out()]

    def raw(path):
        return [sys.executable, os.path.join(ROOT, "bench", "raw_cdp.py"), cdp, base + path, out(), "800"]

    pages = {"static article": "/article", "SPA": "/spa", "XHR page": "/xhr", "tall image page": "/tall"}
    for path in pages.values():
        run_browser.timed(afhttp(path), env)
        run_browser.timed(raw(path), env)
    samples = {}
    for _ in range(RUNS):
        for name, path in pages.items():
            samples.setdefault(f"afhttp {name}", []).append(run_browser.timed(afhttp(path), env))
            samples.setdefault(f"raw {name}", []).append(run_browser.timed(raw(path), env))
    stuck = []
    for _ in range(max(3, RUNS // 2)):
        t = time.perf_counter()
        run_browser.timed(afhttp("/stuck"), env)
        stuck.append(time.perf_counter() - t)
    host.terminate()
    host.wait(timeout=15)
    srv.shutdown()

    med = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    ratios = {name: med[f"afhttp {name}"] / med[f"raw {name}"] for name in pages}
    median_ratio = statistics.median(ratios.values())
    stuck_ms = statistics.median(stuck) * 1000
    stamp = http_bench.write_wall_samples("raw-readiness.csv", {**samples, "afhttp stuck": stuck})

    def verdict(ok):
        return "met" if ok else "NOT met"

    rows = "\n".join(f"| {name} | {med['afhttp ' + name]:.0f} | {med['raw ' + name]:.0f} | {ratios[name]:.2f} | "
                     f"{verdict(ratios[name] <= 0.75)} |" for name in pages)
    binary = "release" if "/release/" in BIN or os.environ.get("BENCH_RELEASE") == "1" else "debug"
    summary = f"""## Settled-page readiness (issue 14)

Measured {stamp} on {platform.node()} ({os.cpu_count()} cores, 1-min load average {load_start:.1f} at the start and
{os.getloadavg()[0]:.1f} at the end: other work on the machine
inflates every case), Debian Chromium, the {binary} afhttp binary, {RUNS} runs per case,
alternating. `afhttp fetch --render always` with the default `--want` and `--wait auto` on one warm `afhttp host`
vs `bench/raw_cdp.py` in its networkidle mode (new tab, navigate, load, 800 ms with no request in flight,
outerHTML, innerText, full-page PNG, close) on the same host's `/cdp`. Both are whole processes per fetch.

| Page | afhttp median ms | raw CDP networkidle median ms | ratio | target ≤ 0.75 |
| --- | --- | --- | --- | --- |
{rows}

| Target | Measured | Verdict |
| --- | --- | --- |
| median ratio over the pages ≤ 0.6 | {median_ratio:.2f} | {verdict(median_ratio <= 0.6)} |
| stuck third parties (parser-blocking script, image, beacon on a host that never answers): a result within the readiness budget (5 s) + 1.5 s | {stuck_ms:.0f} ms | {verdict(stuck_ms <= 6500)} |

Measured by `bench/throughput.py` (its own section below): the screenshot breakdown (composite, encode,
transfer) and 8 parallel fetches against 8 parallel baselines with CPU per fetch. The inline-cold and HTTP
targets are in their own sections.
"""
    with open(os.path.join(ROOT, "bench", "summary-readiness.md"), "w") as f:
        f.write(summary)
    print(summary)
    http_bench.write_doc()


if __name__ == "__main__":
    main()
