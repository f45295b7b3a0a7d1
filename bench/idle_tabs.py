#!/usr/bin/env python3
"""Issue 26, part 1: what ready tabs cost a host with no traffic.

For each `--tab-pool N` (BENCH_POOLS, default 0,2,4,8), one `afhttp host` of BENCH_BIN on a
loopback port: wait until `/health` reports `tabs_ready` N, let it rest 2 s, then over
BENCH_IDLE_S seconds (default 10) sample the PSS of the host and its browser tree and the CPU
the tree spends (utime + stime), split by process kind (the host itself, the browser
process, renderers, the rest: GPU, network and storage services, zygotes). The hosts run one
after the other, never two at once. A host with no traffic must not keep renderers busy:
the renderer CPU column is the check.

Usage: BENCH_BIN=target/release/afhttp bench/idle_tabs.py
Writes bench/summary-idle-tabs.md and docs/benchmarks.md (BENCH_NO_DOC=1: the summary only).
"""
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as http_bench  # noqa: E402
import run_browser  # noqa: E402
from warm_floor import cpu_ticks, pss_kib, tree  # noqa: E402

ROOT = http_bench.ROOT
BIN = os.environ.get("BENCH_BIN") or http_bench.BIN
POOLS = [int(n) for n in os.environ.get("BENCH_POOLS", "0,2,4,8").split(",")]
IDLE_S = float(os.environ.get("BENCH_IDLE_S", "10"))
NOTE = os.environ.get("BENCH_NOTE", "")


def kind(pid, host_pid):
    """The host itself, the browser process, a renderer, or another child."""
    if pid == host_pid:
        return "host"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            # Chromium's children rewrite their command line into one space-separated string.
            argv = f.read().replace(b"\0", b" ").split()
    except OSError:
        return "other"
    if b"--type=renderer" in argv:
        return "renderer"
    if argv and not any(a.startswith(b"--type=") for a in argv) and b"chrom" in argv[0]:
        return "browser"
    return "other"


def health(env, endpoint):
    """`afhttp health` of the host: its result."""
    out = subprocess.run([BIN, "health", "--endpoint-url", endpoint], env=env, capture_output=True,
                         timeout=30).stdout
    return json.loads(out.splitlines()[-1]).get("result", {})


def measure(env, n):
    host, ready = run_browser.start_host(env, BIN, ("--tab-pool", str(n)))
    try:
        endpoint = ready["endpoint_url"]
        until = time.time() + 60
        while health(env, endpoint).get("tabs_ready", 0) < n:
            if time.time() > until:
                raise SystemExit(f"--tab-pool {n}: the pool never filled")
            time.sleep(0.2)
        time.sleep(2.0)
        pids = tree(host.pid)
        kinds = {p: kind(p, host.pid) for p in pids}
        before = {p: cpu_ticks([p]) for p in pids}
        time.sleep(IDLE_S)
        hz = os.sysconf("SC_CLK_TCK")
        cpu = {}
        for p in pids:
            cpu[kinds[p]] = cpu.get(kinds[p], 0) + (cpu_ticks([p]) - before[p]) * 1000 / hz / IDLE_S
        pss = {}
        for p in tree(host.pid):
            k = kinds.get(p) or kind(p, host.pid)
            pss[k] = pss.get(k, 0) + pss_kib([p]) / 1024
        h = health(env, endpoint)
        return {"pool": n, "tabs_ready": h.get("tabs_ready"), "tabs_active": h.get("tabs_active"),
                "renderers": sum(1 for k in kinds.values() if k == "renderer"),
                "pss_mb": pss, "cpu_ms_per_s": cpu}
    finally:
        host.terminate()
        host.wait(timeout=30)


def main():
    env = run_browser.bench_env()
    load_start = os.getloadavg()[0]
    rows = [measure(env, n) for n in POOLS]
    load_end = os.getloadavg()[0]
    kinds = ("host", "browser", "renderer", "other")
    lines = [
        "## Ready tabs at rest (issue 26, part 1)", "",
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.node()} ({os.cpu_count()} cores shared with other "
        f"working sessions; 1-min load average {load_start:.1f} at the start and {load_end:.1f} at the end), "
        f"Debian Chromium, `{os.path.basename(BIN)}`. {NOTE}".rstrip(), "",
        f"One `afhttp host --tab-pool N` at a time, no traffic: once `/health` reports `tabs_ready` N, 2 s of "
        f"rest, then {IDLE_S:.0f} s sampled. PSS in MB at the end; CPU in ms per second over the window "
        "(utime + stime of each process of the host's tree).", "",
        "| `--tab-pool` | renderers | `tabs_active` | PSS host | PSS browser | PSS renderers | PSS other | "
        "PSS total | CPU host | CPU browser | CPU renderers | CPU other |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        pss = [r["pss_mb"].get(k, 0) for k in kinds]
        cpu = [r["cpu_ms_per_s"].get(k, 0) for k in kinds]
        lines.append(f"| {r['pool']} | {r['renderers']} | {r['tabs_active']} | "
                     + " | ".join(f"{v:.0f}" for v in pss) + f" | {sum(pss):.0f} | "
                     + " | ".join(f"{v:.1f}" for v in cpu) + " |")
    summary = "\n".join(lines) + "\n"
    with open(os.path.join(ROOT, "bench", "summary-idle-tabs.md"), "w") as f:
        f.write(summary)
    print(summary)
    print(json.dumps(rows))
    if os.environ.get("BENCH_NO_DOC") != "1":
        http_bench.write_doc()


if __name__ == "__main__":
    main()
