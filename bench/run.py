#!/usr/bin/env python3
"""afhttp benchmarks: ratios against a baseline measured in the same run.

Serves generated pages from a local threaded HTTP server on 127.0.0.1, then alternates
runs of afhttp and its baseline (curl) so both see the same machine state. Records
raw samples and a summary under bench/runs/<date>-<host>/ and rewrites docs/benchmarks.md.
"""
import csv
import datetime
import http.server
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("BENCH_BIN") or os.path.join(ROOT, "target", "release", "afhttp")
# BENCH_BIN_BASE: a second afhttp build run beside BIN (`--render none`, 50 KB page) in the same
# run; BENCH_NOTE: a sentence about the builds for the summary.
BASE = os.environ.get("BENCH_BIN_BASE")
NOTE = os.environ.get("BENCH_NOTE", "")
RUNS = int(os.environ.get("BENCH_RUNS", "40"))


def article(size=50_000):
    parts = ["<!doctype html><html><head><meta charset=utf-8><title>Bench article</title></head><body>"]
    i = 0
    while sum(map(len, parts)) < size:
        parts.append(f"<h2>Section {i}</h2><p>Paragraph {i} with <a href='/p/{i}'>a link</a> and some words "
                     + "lorem ipsum dolor sit amet " * 8 + "</p>")
        i += 1
    parts.append("</body></html>")
    return "".join(parts).encode()


PAGES = {"/article": (article(), "text/html; charset=utf-8")}
BIG = 50 * 1024 * 1024


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path == "/big":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(BIG))
            self.end_headers()
            chunk = bytes(range(256)) * 256
            sent = 0
            while sent < BIG:
                n = min(len(chunk), BIG - sent)
                self.wfile.write(chunk[:n])
                sent += n
            return
        # An entry is (body, content type[, extra headers dict]).
        body, ctype, *extra = PAGES.get(self.path, (b"not found", "text/plain"))
        self.send_response(200 if self.path in PAGES else 404)
        self.send_header("Content-Type", ctype)
        for name, value in (extra[0] if extra else {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


RSS_FILE = tempfile.mktemp(prefix="afhttp-bench-rss-")


def run_once(argv):
    """Run argv under GNU time; return (wall seconds, peak RSS KiB of argv alone, stdout).

    GNU time reports the measured program's own maximum RSS; Python's wait4 would include
    the pre-exec copy of this Python process.
    """
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", RSS_FILE] + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"command failed ({p.returncode}): {' '.join(argv)}\n{p.stdout.decode()[:2000]}")
    with open(RSS_FILE) as f:
        rss = int(f.read().strip().splitlines()[-1])
    return wall, rss, p.stdout


def rendered_in_browser(stdout):
    """Whether a fetch's event says a browser rendered it (its `result.render` is not `http`).

    The fetch's own answer, not a count of browser processes: the machine may be shared, and
    another session's browser starting during the run is not this fetch's.
    """
    try:
        return json.loads(stdout.decode().strip().splitlines()[-1])["result"]["render"] != "http"
    except (ValueError, KeyError, IndexError):
        return True


def bench(cases, runs):
    """cases: name -> argv factory(i). Alternates cases each iteration."""
    samples = {name: [] for name in cases}
    for i in range(runs):
        for name, make in cases.items():
            wall, rss, out = run_once(make(i))
            samples[name].append((wall, rss, out))
    return samples


def write_wall_samples(name, samples):
    """bench/runs/<date>-<machine>/<name>: `case,run,wall_ms` from {case: [seconds, ...]}."""
    stamp = time.strftime("%Y-%m-%d", time.gmtime())
    run_dir = os.path.join(ROOT, "bench", "runs", f"{stamp}-{platform.node()}")
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, name), "w") as f:
        f.write("case,run,wall_ms\n")
        for k, v in samples.items():
            for i, x in enumerate(v):
                f.write(f"{k},{i},{x * 1000:.1f}\n")
    return stamp


def write_doc():
    """docs/benchmarks.md = header + the latest summary of each benchmark (bench/summary-*.md).

    Scripts rewrite their own summary file; sections measured by hand or by other scripts
    (documents, fleet, MCP, readiness, the CI timing) are kept in theirs, so a rerun of one
    benchmark never drops another's section.
    """
    header = ("# Benchmarks\n\nEvery number here comes from `make bench` (`bench/run.py` for the HTTP path, "
              "`bench/run_browser.py` for the browser path, `bench/run_concurrency.py` for parallel fetches and "
              "host memory, `bench/observation_growth.py` for capture vs DOM size, `bench/soak.py` for the long soak, "
              "`bench/takeover.py` for the takeover display, `bench/documents.sh` for PDF text and `--want pdf`, "
              "`bench/fleet.sh` for the fleet on Docker Swarm, `bench/mcp_stdio.py` for MCP, "
              "`bench/readiness.py` for settled-page readiness, `bench/throughput.py` for parallel throughput against "
              "the raw-CDP baseline and the screenshot's cost, `bench/warm_floor.py` and `bench/floor_parts.py` for the "
              "warm, cold, memory and parallel floors of issue 26, `bench/isolated_tabs.py` for isolated fetches' ready tabs, `bench/real_pages.py` and `bench/mcp_peers.py` for the "
              "real-world corpus pages (run by hand: see their sections), `bench/fuzz.sh` for fuzzing), except the container "
              "section, which comes from the container test runs; each section lives in its `bench/summary-*.md` "
              "and raw samples are in `bench/runs/`.\n"
              "Speed targets are checked here, never by timed tests.\n\n")
    parts = [header]
    # Known sections first, in reading order; any other summary after them.
    order = ["summary-http.md", "summary-browser.md", "summary-concurrency.md", "summary-observation.md",
             "summary-soak.md", "summary-takeover.md", "summary-documents.md", "summary-fuzz.md",
             "summary-container.md", "summary-fleet.md", "summary-ci.md", "summary-mcp.md",
             "summary-readiness.md", "summary-throughput.md", "summary-real-pages.md", "summary-mcp-peers.md"]
    found = sorted(n for n in os.listdir(os.path.join(ROOT, "bench")) if n.startswith("summary-") and n.endswith(".md"))
    for name in [n for n in order if n in found] + [n for n in found if n not in order]:
        with open(os.path.join(ROOT, "bench", name)) as f:
            parts.append(f.read().rstrip("\n") + "\n\n")
    with open(os.path.join(ROOT, "docs", "benchmarks.md"), "w") as f:
        f.write("".join(parts).rstrip("\n") + "\n")


def main():
    if not os.path.exists(BIN):
        subprocess.check_call(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    if not shutil.which("curl"):
        raise SystemExit("curl is required (apt-get install curl)")
    srv = serve()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="afhttp-bench-")
    load_start = os.getloadavg()[0]
    env_note = f"{platform.node()} {platform.machine()} {os.cpu_count()} cores, {RUNS} runs per case"

    def out(i, name):
        return os.path.join(tmp, f"{name}-{i}")

    # Warm up page cache and server.
    for _ in range(3):
        run_once(["curl", "-s", "-o", os.devnull, base + "/article"])
        run_once([BIN, "fetch", base + "/article", "--render", "none", "--out", out(0, "warm")])

    cases = {
        "curl -o (50 KB page)": lambda i: ["curl", "-s", "-o", out(i, "curl"), base + "/article"],
        "afhttp --render none (50 KB page)": lambda i: [BIN, "fetch", base + "/article", "--render", "none", "--out", out(i, "none")],
        "afhttp --render auto --want content (50 KB page)": lambda i: [BIN, "fetch", base + "/article", "--render", "auto", "--want", "content", "--out", out(i, "auto")],
    }
    if BASE:
        cases["baseline afhttp --render none (50 KB page)"] = lambda i: [BASE, "fetch", base + "/article", "--render", "none", "--out", out(i, "base")]
    small = bench(cases, RUNS)
    started_browser = any(rendered_in_browser(out) for _, _, out in small["afhttp --render auto --want content (50 KB page)"])
    big_cases = {
        "curl -o (50 MB body)": lambda i: ["curl", "-s", "-o", out(i, "curlbig"), base + "/big"],
        "afhttp --render none (50 MB body)": lambda i: [BIN, "fetch", base + "/big", "--render", "none", "--out", out(i, "big")],
    }
    big = bench(big_cases, max(5, RUNS // 8))
    for d in os.listdir(tmp):
        shutil.rmtree(os.path.join(tmp, d), ignore_errors=True)

    def med(s):
        return statistics.median(x[0] for x in s)

    def peak(s):
        return max(x[1] for x in s) / 1024

    rows = []
    for group in (small, big):
        for name, s in group.items():
            rows.append((name, med(s) * 1000, statistics.quantiles([x[0] for x in s], n=10)[0] * 1000 if len(s) >= 10 else min(x[0] for x in s) * 1000, peak(s), len(s)))

    c = med(small["curl -o (50 KB page)"])
    r_none = med(small["afhttp --render none (50 KB page)"]) / c
    r_auto = med(small["afhttp --render auto --want content (50 KB page)"]) / c
    r_big = med(big["afhttp --render none (50 MB body)"]) / med(big["curl -o (50 MB body)"])
    rss_small = peak(small["afhttp --render none (50 KB page)"])
    rss_big = peak(big["afhttp --render none (50 MB body)"])
    load_end = os.getloadavg()[0]
    base_row = ""
    if BASE:
        r_base = med(small["baseline afhttp --render none (50 KB page)"]) / c
        base_row = f"| baseline build `--render none` vs `curl -o`, 50 KB page (informational) | {r_base:.2f} | — |\n"

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    run_dir = os.path.join(ROOT, "bench", "runs", f"{stamp}-{platform.node()}")
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "raw.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "run", "wall_ms", "peak_rss_kib"])
        for group in (small, big):
            for name, s in group.items():
                for i, (wall, rss, _) in enumerate(s):
                    w.writerow([name, i, f"{wall * 1000:.2f}", rss])
    with open(os.path.join(run_dir, "README.SETUP"), "w") as f:
        f.write(f"{env_note}\nafhttp: {BIN}\ncurl: {subprocess.check_output(['curl', '--version']).decode().splitlines()[0]}\n"
                f"server: Python ThreadingHTTPServer on 127.0.0.1\n")

    def verdict(ok):
        return "met" if ok else "NOT met"

    table = "\n".join(f"| {n} | {m:.1f} | {p10:.1f} | {rss:.1f} | {k} |" for n, m, p10, rss, k in rows)
    summary = f"""## HTTP path (issue: foundation)

Measured {stamp} on {env_note}; 1-min load average {load_start:.1f} at the start and {load_end:.1f} at the end.
Baseline: `curl -s -o FILE` against the same local server in the same run, cases alternating.
Rerun with `make bench` (`BENCH_RUNS` sets the run count; `BENCH_BIN_BASE` adds another build).
{NOTE}

| Case | median ms | p10 ms | peak RSS MiB | runs |
| --- | --- | --- | --- | --- |
{table}

| Target | Measured | Verdict |
| --- | --- | --- |
| `--render none` vs `curl -o`, 50 KB page, ratio of medians ≤ 1.2 | {r_none:.2f} | {verdict(r_none <= 1.2)} |
| `--render auto --want content` vs `curl -o`, ≤ 2× | {r_auto:.2f} | {verdict(r_auto <= 2.0)} |
| no browser started by `--render auto` on a static page | {"none started (every event: render http)" if not started_browser else "a fetch rendered in a browser"} | {verdict(not started_browser)} |
| peak RSS, 50 KB page ≤ 25 MiB | {rss_small:.1f} MiB | {verdict(rss_small <= 25)} |
| peak RSS while streaming a 50 MB body ≤ 40 MiB | {rss_big:.1f} MiB | {verdict(rss_big <= 40)} |
| 50 MB body: afhttp vs curl (informational) | {r_big:.2f} | — |
{base_row}"""
    with open(os.path.join(run_dir, "summary.md"), "w") as f:
        f.write(summary)
    with open(os.path.join(ROOT, "bench", "summary-http.md"), "w") as f:
        f.write(summary)
    write_doc()
    print(summary)
    shutil.rmtree(tmp, ignore_errors=True)
    srv.shutdown()


if __name__ == "__main__":
    main()
