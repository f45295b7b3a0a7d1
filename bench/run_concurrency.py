#!/usr/bin/env python3
"""Parallel fetches and host memory on one warm `afhttp host`, each against a baseline
measured in the same run:

1. Throughput: 8 fetches of the SPA page (an empty shell that fetches one JSON after 100 ms
   and renders 50 items) started at once vs the same 8 one after another. Most of a fetch is
   waiting for the page to settle, so parallel fetches must overlap those waits
   (target: >= 4x on 2 cores).
2. Memory: the host process's RSS after 200 fetches vs after 20 (target: within 10%), with
   the browser's process tree reported beside it.
3. Scaling: 16 fetches with 1, 2, 4 and 8 workers: throughput (fetches/s) and the peak RSS of
   the host and of the browser's process group while they run (sampled every 200 ms).

BENCH_ROUNDS (default 5) sets how many sequential/parallel rounds alternate; each round starts
after a 1 s pause, from a browser with no teardown left over from the round before.
"""
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as http_bench  # noqa: E402  (shared server pieces and doc writer)
import run_browser  # noqa: E402,F401  (registers /spa and /api/items on the shared server)

ROOT = http_bench.ROOT
BIN = http_bench.BIN
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
PARALLEL = 8
SWEEP = (1, 2, 4, 8)
SWEEP_FETCHES = 16
SETTLE_S = 1.0


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def group_sum(pgid, measure):
    """`measure(pid)` summed over every process in the group (one that vanishes counts 0)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getpgid(int(entry)) == pgid:
                total += measure(entry)
        except (ProcessLookupError, FileNotFoundError, PermissionError):
            pass
    return total


def group_rss_kib(pgid):
    return group_sum(pgid, rss_kib)


def cpu_s(pid, children=True):
    """CPU seconds of `pid` (with its reaped children when `children`), 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    ticks = sum(int(v) for v in fields[11:15 if children else 13])
    return ticks / os.sysconf("SC_CLK_TCK")


def group_cpu_s(pgid):
    """CPU seconds of every process in the group, plus the children they reaped: a renderer
    that exited is counted through its parent."""
    return group_sum(pgid, cpu_s)


def drivers_cpu_s():
    """CPU seconds of every finished child of this script: the `afhttp fetch` processes."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    env = run_browser.bench_env()
    load_start = os.getloadavg()[0]
    started_utc = time.strftime("%H:%M:%S", time.gmtime())
    srv = http_bench.serve()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="afhttp-bench-conc-")
    host, ready = run_browser.start_host(env)
    endpoint = ready["endpoint_url"]
    browser_pid = ready["browser_pid"]
    n = [0]
    lock = threading.Lock()

    def fetch():
        with lock:
            n[0] += 1
            out = os.path.join(tmp, str(n[0]))
        run_browser.timed([BIN, "fetch", base + "/spa", "--endpoint-url", endpoint, "--render", "always",
                           "--want", "rendered_html,text,screenshot,network,console,observation", "--out", out], env)

    def cpu_now():
        return (group_cpu_s(browser_pid), cpu_s(host.pid, children=False), drivers_cpu_s())

    def cpu_per_fetch(before):
        """CPU ms per fetch since `before`: (browser tree, host, drivers)."""
        return tuple((b - a) * 1000 / PARALLEL for a, b in zip(before, cpu_now()))

    def settle():
        """Let the browser finish the last round's teardown (closing tabs, exiting renderers)
        so that neither case pays for the other's."""
        time.sleep(SETTLE_S)

    def sequential():
        settle()
        before, t = cpu_now(), time.perf_counter()
        for _ in range(PARALLEL):
            fetch()
        return time.perf_counter() - t, cpu_per_fetch(before)

    def parallel():
        settle()
        before, t = cpu_now(), time.perf_counter()
        threads = [threading.Thread(target=fetch) for _ in range(PARALLEL)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return time.perf_counter() - t, cpu_per_fetch(before)

    def sweep(workers):
        """SWEEP_FETCHES fetches over `workers` threads: (fetches/s, peak host KiB, peak browser KiB)."""
        left = [SWEEP_FETCHES]
        peak = [0, 0]
        done = threading.Event()

        def sampler():
            while not done.is_set():
                peak[0] = max(peak[0], rss_kib(host.pid))
                peak[1] = max(peak[1], group_rss_kib(browser_pid))
                time.sleep(0.2)

        def worker():
            while True:
                with lock:
                    if left[0] == 0:
                        return
                    left[0] -= 1
                fetch()

        watcher = threading.Thread(target=sampler)
        watcher.start()
        t = time.perf_counter()
        threads = [threading.Thread(target=worker) for _ in range(workers)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        wall = time.perf_counter() - t
        done.set()
        watcher.join()
        return SWEEP_FETCHES / wall, peak[0], peak[1]

    try:
        for _ in range(2):
            fetch()
        seq, par, seq_cpu, par_cpu = [], [], [], []
        for _ in range(ROUNDS):
            wall, cpu = sequential()
            seq.append(wall)
            seq_cpu.append(cpu)
            wall, cpu = parallel()
            par.append(wall)
            par_cpu.append(cpu)
        # Memory: count every fetch so far, top up to 20, then to 200 in parallel batches.
        while n[0] < 20:
            fetch()
        time.sleep(1)
        host_20, browser_20 = rss_kib(host.pid), group_rss_kib(browser_pid)
        while n[0] < 200:
            parallel()
        time.sleep(1)
        host_200, browser_200 = rss_kib(host.pid), group_rss_kib(browser_pid)
        fetches = n[0]
        scaling = {w: sweep(w) for w in SWEEP}
    finally:
        host.terminate()
        host.wait(timeout=15)
        srv.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)

    seq_med, par_med = statistics.median(seq), statistics.median(par)

    def cpu_cells(samples):
        return " | ".join(f"{statistics.median(s[i] for s in samples):.0f}" for i in range(3))

    speedup = seq_med / par_med
    growth = (host_200 - host_20) / host_20 * 100 if host_20 else 0.0
    stamp = time.strftime("%Y-%m-%d", time.gmtime())
    run_dir = os.path.join(ROOT, "bench", "runs", f"{stamp}-{platform.node()}")
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "raw-concurrency.csv"), "w") as f:
        f.write("case,round,wall_ms\n")
        for i, x in enumerate(seq):
            f.write(f"sequential8,{i},{x * 1000:.1f}\n")
        for i, x in enumerate(par):
            f.write(f"parallel8,{i},{x * 1000:.1f}\n")

    # Every run is kept: on a shared VM the ratio moves between runs (the CPU a fetch costs
    # does), and one run alone would hide that.
    history = os.path.join(run_dir, "history-concurrency.csv")
    new_file = not os.path.exists(history)
    with open(history, "a") as f:
        if new_file:
            f.write("utc,load_start,settle_s,rounds,sequential8_ms,parallel8_ms,ratio\n")
        f.write(f"{started_utc},{load_start:.2f},{SETTLE_S:.1f},{ROUNDS},"
                f"{seq_med * 1000:.0f},{par_med * 1000:.0f},{speedup:.2f}\n")
    with open(history) as f:
        runs = [line.strip().split(",") for line in f.readlines()[1:] if line.strip()]
    runs_line = ", ".join(f"{r[6]}x{'' if float(r[2]) > 0 else ' (no pause)'}" for r in runs)

    def verdict(ok):
        return "met" if ok else "NOT met"

    one = scaling[1][0]
    scaling_rows = "\n".join(f"| {w} | {fps:.2f} | {fps / one:.2f}x | {h / 1024:.1f} | {b / 1024:.1f} |"
                             for w, (fps, h, b) in scaling.items())
    summary = f"""## Parallel fetches and host memory (issue: deep capture)

Measured {stamp} on {platform.node()} ({os.cpu_count()} cores, 1-min load average {load_start:.1f} at the start and
{os.getloadavg()[0]:.1f} at the end: other work on the machine inflates every case), Debian Chromium, one warm `afhttp host`,
{ROUNDS} alternating rounds, each after a {SETTLE_S:.0f} s pause. Each fetch is a whole `afhttp fetch --render always` process on the SPA
page with rendered_html, text, screenshot, network, console and observation.

| Case | median ms per round of 8 | CPU ms per fetch: browser tree | host | `afhttp fetch` |
| --- | --- | --- | --- | --- |
| 8 fetches one after another | {seq_med * 1000:.0f} | {cpu_cells(seq_cpu)} |
| 8 fetches at once | {par_med * 1000:.0f} | {cpu_cells(par_cpu)} |

CPU per fetch (median of the rounds): the browser's whole process tree (renderers, GPU and
network processes included), the host, and the `afhttp fetch` process itself. On {os.cpu_count()} cores
a round of {PARALLEL} cannot end sooner than {PARALLEL} x that CPU / {os.cpu_count()}.

Every run of this bench on this machine today (`{os.path.relpath(history, ROOT)}`), oldest
first: {runs_line}. Runs marked "no pause" started each round straight after the previous
one, so the parallel round also paid for the sequential round's tab teardown.

| Memory after | host RSS (MiB) | browser tree RSS (MiB) |
| --- | --- | --- |
| 20 fetches | {host_20 / 1024:.1f} | {browser_20 / 1024:.1f} |
| {fetches} fetches | {host_200 / 1024:.1f} | {browser_200 / 1024:.1f} |

Scaling with concurrency, measured once (a noisy shared machine: read the trend, not the digits):
{SWEEP_FETCHES} fetches per row, the same SPA fetch.

| parallel fetches | fetches/s | vs 1 | peak host RSS (MiB) | peak browser group RSS (MiB) |
| --- | --- | --- | --- | --- |
{scaling_rows}

| Target | Measured | Verdict |
| --- | --- | --- |
| 8 parallel vs 8 sequential throughput >= 4x | {speedup:.2f}x | {verdict(speedup >= 4)} |
| host RSS after 200 fetches within 10% of after 20 | {growth:+.1f}% | {verdict(abs(growth) <= 10)} |
"""
    with open(os.path.join(ROOT, "bench", "summary-concurrency.md"), "w") as f:
        f.write(summary)
    http_bench.write_doc()
    print(summary)


if __name__ == "__main__":
    main()
