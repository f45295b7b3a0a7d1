#!/usr/bin/env python3
"""Issue 26: ready isolated tabs. What an isolated fetch (a fleet's ephemeral fetch, in a browser
context of its own) costs against a fetch in the host's context taking a ready tab, one run.

Two warm `afhttp host`s, BENCH_BIN (new) and BENCH_BIN_BASE (baseline), each with a token. On each,
alternating, a whole process per fetch, `--render always`, default `--want`:
- "pooled": `afhttp fetch --endpoint-url HOST` (the host's context, a ready tab of `--tab-pool`);
- "isolated": `afhttp fetch --fleet a=HOST` (a one-member fleet: the router's ephemeral fetch,
  `isolated_context`), as `bench/fleet.py` sends them, without Swarm.
Reported: wall time to the exit, `tab_open` and `tab_setup` from `trace.timings_ms` (medians), and
how many isolated fetches took a ready isolated tab (`trace.tab.ready`). Also each host at rest,
before its first isolated fetch and after the last (the ready isolated tabs' memory and CPU), and
BENCH_BACK_TO_BACK (default 8) isolated fetches of the SPA one right after the other on each host
(the pool refills while the next fetch starts).

Usage: BENCH_BIN=target/release/afhttp BENCH_BIN_BASE=/path/to/base bench/isolated_tabs.py
BENCH_RUNS (default 8), BENCH_NOTE (a sentence about the builds), BENCH_NO_DOC=1 (only the summary).
"""
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as http_bench  # noqa: E402
import run_browser  # noqa: E402
import warm_floor  # noqa: E402

ROOT = http_bench.ROOT
BIN = os.environ.get("BENCH_BIN") or http_bench.BIN
BASE = os.environ.get("BENCH_BIN_BASE")
RUNS = int(os.environ.get("BENCH_RUNS", "8"))
BACK_TO_BACK = int(os.environ.get("BENCH_BACK_TO_BACK", "8"))
NOTE = os.environ.get("BENCH_NOTE", "")
TOKEN = "bench-isolated-tabs-token-0123456789"
PAGES = {"static article": "/article", "SPA": "/spa"}
MODES = ("pooled", "isolated")


def fetch(argv, env):
    """One fetch: (wall s, timings_ms, trace.tab)."""
    started = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - started
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{p.stdout.decode()[:1500]}")
    trace = json.loads(p.stdout.decode().strip().splitlines()[-1]).get("trace") or {}
    return wall, trace.get("timings_ms", {}), trace.get("tab", {})


def main():
    env = run_browser.bench_env()
    load_start = os.getloadavg()[0]
    srv = http_bench.serve()
    base_url = f"http://127.0.0.1:{srv.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="afhttp-bench-isolated-")
    hosts = {}
    for which, binary in (("new", BIN), ("base", BASE)):
        if binary:
            h, ready = run_browser.start_host(env, binary, ("--token-secret", TOKEN))
            hosts[which] = (h, ready["endpoint_url"], binary)
    n = [0]

    def argv(which, mode, path):
        _, ep, binary = hosts[which]
        n[0] += 1
        route = ["--endpoint-url", ep] if mode == "pooled" else ["--fleet", f"a={ep}", "--fleet-connect-timeout-ms", "10000"]
        return [binary, "fetch", base_url + path, *route, "--token-secret", TOKEN, "--render", "always",
                "--no-cookie-jar", "--out", os.path.join(tmp, str(n[0]))]

    cases = [(which, mode, name) for name in PAGES for which in hosts for mode in MODES]
    for which, _, name in cases:
        fetch(argv(which, "pooled", PAGES[name]), env)
    rest = {which: {"before": warm_floor.idle_cost(h.pid)} for which, (h, _, _) in hosts.items()}
    for which, mode, name in cases:
        fetch(argv(which, mode, PAGES[name]), env)
    samples, timings, ready = {}, {}, {}
    for _ in range(RUNS):
        for which, mode, name in cases:
            key = f"{which} {mode} {name}"
            wall, t, tab = fetch(argv(which, mode, PAGES[name]), env)
            samples.setdefault(key, []).append(wall)
            timings.setdefault(key, []).append(t)
            ready[key] = ready.get(key, 0) + (1 if tab.get("ready") else 0)
    for which, (h, _, _) in hosts.items():
        rest[which]["after"] = warm_floor.idle_cost(h.pid)
    burst = {}
    for which in hosts:
        for _ in range(BACK_TO_BACK):
            _, t, tab = fetch(argv(which, "isolated", PAGES["SPA"]), env)
            burst.setdefault(which, []).append((t.get("tab_open", 0) + t.get("tab_setup", 0), bool(tab.get("ready"))))
    for h, _, _ in hosts.values():
        h.terminate()
        h.wait(timeout=15)
    srv.shutdown()
    load_end = os.getloadavg()[0]

    def med(key, *parts):
        return statistics.median(sum(t.get(p, 0) for p in parts) for t in timings[key])

    rows = []
    for name in PAGES:
        for which in hosts:
            for mode in MODES:
                key = f"{which} {mode} {name}"
                wall = statistics.median(samples[key]) * 1000
                rows.append(f"| {name} | {which} | {mode} | {wall:.0f} | {med(key, 'tab_open'):.0f} | "
                            f"{med(key, 'tab_setup'):.0f} | {med(key, 'tab_open', 'tab_setup'):.0f} | "
                            f"{med(key, 'total'):.0f} | {ready[key]}/{RUNS} |")

    def extra(which, name):
        """Isolated minus pooled, same host, same page: ms of wall and of tab_open + tab_setup."""
        iso, pooled = f"{which} isolated {name}", f"{which} pooled {name}"
        wall = (statistics.median(samples[iso]) - statistics.median(samples[pooled])) * 1000
        return wall, med(iso, "tab_open", "tab_setup") - med(pooled, "tab_open", "tab_setup")

    extras = "; ".join(
        f"{which} {name}: +{extra(which, name)[0]:.0f} ms wall, +{extra(which, name)[1]:.0f} ms tab_open + tab_setup"
        for name in PAGES for which in hosts)
    at_rest = "; ".join(
        f"{which}: {r['before'][0]:.0f} MB, {r['before'][1]:.1f} ms CPU/s before its first isolated fetch, "
        f"{r['after'][0]:.0f} MB, {r['after'][1]:.1f} ms CPU/s after the last" for which, r in rest.items())
    back_to_back = "; ".join(
        f"{which}: {sum(r for _, r in b)}/{len(b)} took a ready one, tab_open + tab_setup median "
        f"{statistics.median(x for x, _ in b):.0f} ms (max {max(x for x, _ in b):.0f})" for which, b in burst.items())
    stamp = http_bench.write_wall_samples("isolated-tabs.csv", samples)
    binary = "release" if "/release/" in BIN or os.environ.get("BENCH_RELEASE") == "1" else "debug"
    summary = f"""## Ready isolated tabs (issue 26)

Measured {stamp} on {platform.node()} ({os.cpu_count()} cores shared with other working sessions; 1-min load
average {load_start:.1f} at the start and {load_end:.1f} at the end), Debian Chromium, the {binary} afhttp binary
`{os.path.basename(BIN)}`{f" against the baseline build `{BASE}`" if BASE else ""}, one warm host each (default
`--tab-pool`), {RUNS} runs per case, alternating, a whole process per fetch, `--render always`, default `--want`.
{NOTE} "pooled" is a fetch in the host's context (`--endpoint-url`, a ready tab); "isolated" the same fetch
through a one-member `--fleet` (the router's ephemeral fetch: a browser context of its own). "ready" counts the
fetches whose tab was a host's ready one (`trace.tab.ready`; the pooled fetches' ready tabs are not marked by a
baseline build). Milliseconds, medians; wall is to the process's exit.

| Page | host | fetch | wall | tab_open | tab_setup | tab_open + tab_setup | total | ready tab |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

Isolated minus pooled, same host and page: {extras}.

Each host at rest (1 s after the last fetch, then 5 s; PSS of the host and its browser tree, CPU of the tree):
{at_rest}.

{BACK_TO_BACK} isolated fetches of the SPA one right after the other, after the above: {back_to_back}.
"""
    with open(os.path.join(ROOT, "bench", "summary-isolated-tabs.md"), "w") as f:
        f.write(summary)
    print(summary)
    if os.environ.get("BENCH_NO_DOC") != "1":
        http_bench.write_doc()


if __name__ == "__main__":
    main()
