#!/usr/bin/env python3
"""Soak: many mixed fetches against one warm `afhttp host`, 8 at a time.

The mix cycles through a static ~50 KB article, an SPA shell (one JSON after 100 ms), an
XHR-heavy page (20 `fetch` calls and one XMLHttpRequest before it reads "done") and a CSV
download (`Content-Disposition: attachment`). Every tenth fetch is a full one (all default
artifacts, screenshot included), the rest want text only. The test command runs the same
soak with ~100 fetches (tests/load.rs); this one runs SOAK_FETCHES (default 500).

Recorded: failures, leaked page targets (afhttp tabs list before and after), host RSS,
browser RSS (the browser process alone and its whole process group) and the host's open
file descriptors, sampled at rest after fetch 100 and after the last one. Writes
bench/summary-soak.md and rewrites docs/benchmarks.md.
"""
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as http_bench  # noqa: E402  (shared server and doc writer)
import run_browser  # noqa: E402  (registers /spa and /api/items; host start, environment)
from run_concurrency import group_rss_kib, rss_kib  # noqa: E402

ROOT = http_bench.ROOT
BIN = os.environ.get("BENCH_BIN", http_bench.BIN)
TOTAL = int(os.environ.get("SOAK_FETCHES", "500"))
PARALLEL = 8
CHECKPOINT = min(100, TOTAL // 5)

XHR_PAGE = b"""<!doctype html><title>XHR</title><p id="s">loading</p><script>
const jobs = [];
for (let i = 0; i < 20; i++) jobs.push(fetch('/api/items').then(r => r.json()));
jobs.push(new Promise(done => { const x = new XMLHttpRequest(); x.open('GET', '/api/items');
  x.onloadend = done; x.send(); }));
Promise.all(jobs).then(() => { document.getElementById('s').textContent = 'done'; });
</script>"""
CSV = b"id,name\n" + b"".join(f"{i},row {i}\n".encode() for i in range(2000))
http_bench.PAGES["/soak/xhr"] = (XHR_PAGE, "text/html; charset=utf-8")
http_bench.PAGES["/soak/report.csv"] = (CSV, "text/csv; charset=utf-8",
                                        {"Content-Disposition": 'attachment; filename="report.csv"'})
MIX = ("/article", "/spa", "/soak/xhr", "/soak/report.csv")


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def page_targets(endpoint, env):
    p = subprocess.run([BIN, "tabs", "list", "--endpoint-url", endpoint], stdout=subprocess.PIPE, env=env)
    return len(json.loads(p.stdout)["result"]["tabs"])


def main():
    env = run_browser.bench_env()
    srv = http_bench.serve()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="afhttp-bench-soak-")
    host, ready = run_browser.start_host(env, BIN)
    endpoint, browser_pid = ready["endpoint_url"], ready["browser_pid"]
    failures, walls, lock = [], [], threading.Lock()
    next_n = [0]

    def one(n):
        argv = [BIN, "fetch", base + MIX[n % len(MIX)], "--endpoint-url", endpoint, "--render", "always",
                "--out", os.path.join(tmp, str(n))]
        if n % 10 != 5:
            argv += ["--want", "text"]
        t = time.perf_counter()
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        wall = time.perf_counter() - t
        try:
            ev = json.loads(p.stdout)
            ok = ev.get("kind") == "result" and ev["result"].get("status") == 200
        except (ValueError, KeyError):
            ok = False
        with lock:
            walls.append((n, MIX[n % len(MIX)], wall, ok))
            if not ok:
                failures.append((n, p.stdout.decode()[:500]))
        shutil.rmtree(os.path.join(tmp, str(n)), ignore_errors=True)

    def batch(end):
        def worker():
            while True:
                with lock:
                    n = next_n[0]
                    if n >= end:
                        return
                    next_n[0] += 1
                one(n)
        threads = [threading.Thread(target=worker) for _ in range(PARALLEL)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()

    def sample():
        time.sleep(1)
        return {"host_rss": rss_kib(host.pid), "browser_rss": rss_kib(browser_pid),
                "browser_tree_rss": group_rss_kib(browser_pid), "host_fds": fd_count(host.pid)}

    try:
        tabs_before = page_targets(endpoint, env)
        started = time.perf_counter()
        batch(CHECKPOINT)
        at_100 = sample()
        batch(TOTAL)
        elapsed = time.perf_counter() - started
        at_end = sample()
        tabs_after = page_targets(endpoint, env)
    finally:
        host.terminate()
        host.wait(timeout=15)
        srv.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)

    stamp = time.strftime("%Y-%m-%d", time.gmtime())
    run_dir = os.path.join(ROOT, "bench", "runs", f"{stamp}-{platform.node()}")
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "raw-soak.csv"), "w") as f:
        f.write("fetch,path,wall_ms,ok\n")
        for n, path, wall, ok in sorted(walls):
            f.write(f"{n},{path},{wall * 1000:.1f},{int(ok)}\n")

    def growth(key):
        a, b = at_100[key], at_end[key]
        return (b - a) / a * 100 if a else 0.0

    def verdict(ok):
        return "met" if ok else "NOT met"

    def mib(kib):
        return f"{kib / 1024:.1f}"

    leaked = tabs_after - tabs_before
    fd_delta = at_end["host_fds"] - at_100["host_fds"]
    summary = f"""## Soak: {TOTAL} mixed fetches on one host (issue: hardening)

Measured once, {stamp}, on {platform.node()} ({os.cpu_count()} cores shared with other work, so
wall times are noisy), Debian Chromium, one `afhttp host`, {PARALLEL} fetches at a time, each a whole
`afhttp fetch --render always` process. Mix: static article, SPA, XHR-heavy page (21 requests),
CSV download; every tenth fetch full (screenshot included), the rest `--want text`. Samples taken
at rest, 1 s after fetch {CHECKPOINT} and after the last. Rerun: `python3 bench/soak.py`
(`SOAK_FETCHES` sets the count). The test command runs the same soak with 104 fetches
(`tests/load.rs`).

| | after fetch {CHECKPOINT} | after fetch {TOTAL} | growth |
| --- | --- | --- | --- |
| host RSS (MiB) | {mib(at_100['host_rss'])} | {mib(at_end['host_rss'])} | {growth('host_rss'):+.1f}% |
| browser process RSS (MiB) | {mib(at_100['browser_rss'])} | {mib(at_end['browser_rss'])} | {growth('browser_rss'):+.1f}% |
| browser process group RSS (MiB) | {mib(at_100['browser_tree_rss'])} | {mib(at_end['browser_tree_rss'])} | {growth('browser_tree_rss'):+.1f}% |
| host open fds | {at_100['host_fds']} | {at_end['host_fds']} | {fd_delta:+d} |

| Target | Measured | Verdict |
| --- | --- | --- |
| ≥ 500 fetches, zero failures | {len(walls)} fetches, {len(failures)} failed | {verdict(len(walls) >= 500 and not failures)} |
| zero leaked page targets | {tabs_before} before, {tabs_after} after | {verdict(leaked <= 0)} |
| host RSS growth fetch {CHECKPOINT} → last < 10% | {growth('host_rss'):+.1f}% | {verdict(growth('host_rss') < 10)} |
| browser RSS growth fetch {CHECKPOINT} → last < 10% | {growth('browser_rss'):+.1f}% (group {growth('browser_tree_rss'):+.1f}%) | {verdict(growth('browser_rss') < 10 and growth('browser_tree_rss') < 10)} |
| host fds stable | {fd_delta:+d} | {verdict(fd_delta <= 4)} |
| throughput (informational) | {len(walls) / elapsed:.2f} fetches/s, {elapsed:.0f} s in all | — |
"""
    if failures:
        summary += "\nFirst failures:\n\n" + "\n".join(f"- fetch {n}: `{out[:200]}`" for n, out in failures[:5]) + "\n"
    with open(os.path.join(ROOT, "bench", "summary-soak.md"), "w") as f:
        f.write(summary)
    http_bench.write_doc()
    print(summary)


if __name__ == "__main__":
    main()
