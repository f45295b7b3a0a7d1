#!/usr/bin/env python3
"""Takeover benchmarks (issue: takeover), each case alternating with its baseline:

1. Start to `/health` ok: `afhttp host --takeover-provider novnc` (Xvnc, openbox, websockify,
   headful Chromium) vs a plain headless `afhttp host`.
2. Panel: `afhttp panel` until it prints the takeover URL, then a separate headless Chromium
   (tests/playwright/takeover.mjs, connect-only) from opening that URL until noVNC reports
   connected through the listener's `/takeover/panel` proxy.

Needs what `make test` installs (tigervnc, websockify, novnc, openbox, node + playwright-core).
"""
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as http_bench  # noqa: E402
from run_browser import bench_env  # noqa: E402

ROOT = http_bench.ROOT
BIN = http_bench.BIN
RUNS = int(os.environ.get("BENCH_TAKEOVER_RUNS", "5"))
TOKEN = "bench-takeover-token"
PLAYWRIGHT = os.path.join(ROOT, "tests", "playwright")


def health_ok(endpoint):
    base = endpoint.replace("ws://", "http://")
    req = urllib.request.Request(base + "/health", headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        with urllib.request.urlopen(req, timeout=2) as r:
            return json.loads(r.read()).get("status") == "ok"
    except OSError:
        return False


def start_to_healthy(env, extra):
    """Seconds from spawning the host until its `/health` says ok; returns (secs, process, endpoint)."""
    t = time.perf_counter()
    host = subprocess.Popen([BIN, "host", "--listen", "tcp:127.0.0.1:0", "--token-secret", TOKEN, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    line = host.stdout.readline()
    if not line:
        raise SystemExit(f"host did not start: {extra}")
    endpoint = json.loads(line)["result"]["endpoint_url"]
    while not health_ok(endpoint):
        if time.perf_counter() - t > 60:
            raise SystemExit("host never became healthy")
        time.sleep(0.02)
    return time.perf_counter() - t, host, endpoint


def stop(host):
    host.terminate()
    host.wait(timeout=15)


def panel_connect(env, endpoint):
    """(seconds for `afhttp panel`, seconds from opening the URL to a connected noVNC)."""
    t = time.perf_counter()
    p = subprocess.run([BIN, "panel", "--endpoint-url", endpoint, "--token-secret", TOKEN],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, check=True)
    minted = time.perf_counter() - t
    url = json.loads(p.stdout)["result"]["takeover_url"]
    v = subprocess.run(["node", "takeover.mjs", url, "-"], cwd=PLAYWRIGHT, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=True)
    out = json.loads(v.stdout.decode().strip().splitlines()[-1])
    if not out.get("ok"):
        raise SystemExit(f"panel did not connect: {out}")
    return minted, out["connect_ms"] / 1000


def main():
    env = bench_env()
    load_before = os.getloadavg()[0]
    samples = {k: [] for k in ("takeover host start to /health ok", "headless host start to /health ok",
                               "afhttp panel (mint the URL)", "open URL to noVNC connected")}
    for _ in range(RUNS):
        secs, host, endpoint = start_to_healthy(env, ["--takeover-provider", "novnc"])
        samples["takeover host start to /health ok"].append(secs)
        minted, connected = panel_connect(env, endpoint)
        samples["afhttp panel (mint the URL)"].append(minted)
        samples["open URL to noVNC connected"].append(connected)
        stop(host)
        secs, host, _ = start_to_healthy(env, [])
        samples["headless host start to /health ok"].append(secs)
        stop(host)

    load = max(load_before, os.getloadavg()[0])
    med = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    stamp = http_bench.write_wall_samples("raw-takeover.csv", samples)
    rows = "\n".join(f"| {k} | {m:.0f} | {min(samples[k]) * 1000:.0f}–{max(samples[k]) * 1000:.0f} | {len(samples[k])} |"
                     for k, m in med.items())
    extra = med["takeover host start to /health ok"] - med["headless host start to /health ok"]
    summary = f"""## Takeover (issue: takeover)

Measured {stamp} on {platform.node()} ({os.cpu_count()} cores, 1-minute load average up to {load:.1f}) by
`bench/takeover.py`, {RUNS} runs per case,
the takeover and headless hosts alternating. The takeover host runs the `novnc` provider
(TigerVNC `Xvnc`, openbox, websockify, noVNC, headful Chromium on that display). The panel is
opened by a separate headless Chromium (Playwright, connect-only), whose own launch is not
counted.

| Case | median ms | range ms | runs |
| --- | --- | --- | --- |
{rows}

The display stack adds {extra:.0f} ms to a host's start. From `afhttp panel` to a connected
panel a human waits about {med['afhttp panel (mint the URL)'] + med['open URL to noVNC connected']:.0f} ms plus their browser's own start.
"""
    with open(os.path.join(ROOT, "bench", "summary-takeover.md"), "w") as f:
        f.write(summary)
    http_bench.write_doc()
    print(summary)


if __name__ == "__main__":
    main()
