#!/usr/bin/env python3
"""How observation and content capture grow with the DOM.

Generated pages of about 1k / 10k / 50k elements (rows of text, a link every 50 rows, a
pointer-cursor card every 100 rows) are fetched through one warm `afhttp host` with
`--render always --wait load` and one artifact wanted at a time. `trace.timings_ms.capture`
is the capture phase alone (navigation and waiting excluded); it always serializes the DOM
once, so `rendered_html` alone is the baseline measured in the same run. Prints a markdown
table of medians. BENCH_RUNS (default 5) sets runs per cell; BENCH_BIN picks the binary
(default target/release/afhttp).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as http_bench  # noqa: E402  (shared fixture server)
import run_browser  # noqa: E402  (shared host start and environment)

BIN = os.environ.get("BENCH_BIN", http_bench.BIN)
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
SIZES = (1000, 10000, 50000)
WANTS = ("rendered_html", "observation", "content")


def page(n):
    """About n elements: rows of four elements, links and pointer cards sprinkled in."""
    rows = []
    for i in range(n // 4):
        if i % 100 == 0:
            rows.append(f'<div class="card" style="cursor:pointer"><b>Card {i}</b><i>x</i><span>y</span></div>')
        elif i % 50 == 0:
            rows.append(f'<div><a href="/p/{i}">Link {i}</a><i>x</i><span>y</span></div>')
        else:
            rows.append(f"<div><span>Row {i}</span><i>x</i><b>y</b></div>")
    return f"<!doctype html><title>Grow {n}</title><body>{''.join(rows)}</body>".encode()


def fetch(endpoint, url, want, out):
    p = subprocess.run([BIN, "fetch", url, "--endpoint-url", endpoint, "--render", "always", "--want", want,
                        "--wait", "load", "--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ev = json.loads(p.stdout)
    if ev.get("kind") != "result":
        raise SystemExit(f"fetch failed: {p.stdout.decode()[:1500]}")
    return ev


def main():
    env = run_browser.bench_env()
    for n in SIZES:
        http_bench.PAGES[f"/grow/{n}"] = (page(n), "text/html; charset=utf-8")
    srv = http_bench.serve()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="afhttp-bench-obs-")
    host, ready = run_browser.start_host(env, BIN)
    try:
        endpoint = ready["endpoint_url"]
        k = 0
        rows = []
        for n in SIZES:
            url = f"{base}/grow/{n}"
            fetch(endpoint, url, "observation", os.path.join(tmp, "warm"))
            ms = {w: [] for w in WANTS}
            obs = None
            for _ in range(RUNS):
                for w in WANTS:
                    k += 1
                    out = os.path.join(tmp, str(k))
                    ev = fetch(endpoint, url, w, out)
                    ms[w].append(ev["trace"]["timings_ms"]["capture"])
                    if w == "observation":
                        with open(ev["result"]["observation_file"]) as f:
                            obs = json.load(f)
            med = {w: statistics.median(v) for w, v in ms.items()}
            t = obs["truncated"]
            rows.append(f"| {n:,} | {len(page(n)) // 1024} | {med['rendered_html']:.0f} | {med['observation']:.0f} "
                        f"(+{med['observation'] - med['rendered_html']:.0f}) | {med['content']:.0f} "
                        f"(+{med['content'] - med['rendered_html']:.0f}) | {len(obs['nodes'])} | "
                        f"{t['reason'] + ', scanned ' + str(t['scanned']) if t else 'no'} |")
    finally:
        host.terminate()
        host.wait(timeout=15)
        srv.shutdown()
    summary = (f"## Observation and content capture vs DOM size (issue: deep capture)\n\n"
               f"Measured once, {time.strftime('%Y-%m-%d', time.gmtime())}, on a 2-core machine shared with other "
               "work (noisy: read the growth, not the digits). "
               f"Capture phase, median of {RUNS} warm fetches per cell (`trace.timings_ms.capture`, ms; "
               "in brackets: above the `rendered_html` baseline of the same run). Observation is bounded "
               "by its scan cap (2,000 elements); content walks the whole page.\n\n"
               "| elements | page KiB | rendered_html (baseline) | observation | content | observation nodes | truncated |\n"
               "| --- | --- | --- | --- | --- | --- | --- |\n" + "\n".join(rows) + "\n")
    with open(os.path.join(http_bench.ROOT, "bench", "summary-observation.md"), "w") as f:
        f.write(summary)
    http_bench.write_doc()
    print(summary)


if __name__ == "__main__":
    main()
