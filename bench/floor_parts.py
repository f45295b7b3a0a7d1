#!/usr/bin/env python3
"""Issue 26, parts 3-4, the figures `bench/warm_floor.py` does not take, one run, each beside
its same-run baseline:

1. Inline cold `fetch --render always --wait load` of a small page vs the browser's own start
   (`run_browser.browser_start_alone`: launch until it answers `Target.createTarget`, and until
   its start-up page answers `Page.enable`), with the fetch's `trace.timings_ms` and the time
   from its answer to its exit.
2. Peak PSS of a warm tall-page fetch (host process, its browser tree and the fetch process)
   vs `raw_cdp.py load` on a bare Chromium with afhttp's window (`warm_floor.peak_pss`), with
   the image each took.
3. 8 warm SPA fetches started at once vs 8 `raw_cdp.py 800` (networkidle, the same capture)
   started at once on the same host's `/cdp`: batch time and CPU per fetch (host + browser
   tree, and the driver processes).

Usage: BENCH_BIN=target/release/afhttp [BENCH_RUNS=5] [BENCH_NOTE=...] bench/floor_parts.py
Writes bench/summary-floor-parts.md and docs/benchmarks.md (`run.write_doc`), raw samples in
bench/runs/.
"""
import json
import os
import platform
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as http_bench  # noqa: E402
import run_browser as rb  # noqa: E402  (registers /spa, /small)
import readiness  # noqa: E402,F401  (registers /tall)
import warm_floor as wf  # noqa: E402

ROOT = http_bench.ROOT
BIN = os.environ.get("BENCH_BIN") or http_bench.BIN
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
NOTE = os.environ.get("BENCH_NOTE", "")
RAW = os.path.join(ROOT, "bench", "raw_cdp.py")
med = statistics.median


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


def cold(env, base, out):
    """Inline cold fetches and the browser's own start, alternating."""
    s = {"inline cold": [], "browser start": [], "first page ready": [], "after answer": []}
    stages = {}
    for _ in range(RUNS):
        wall, t = wf.timed_answer([BIN, "fetch", base + "/small", "--render", "always", "--wait", "load",
                                   "--out", out()], env)
        s["inline cold"].append(wall * 1000)
        s["after answer"].append(t.pop("after_answer"))
        for k, v in t.items():
            stages.setdefault(k, []).append(v)
        s["browser start"].append(rb.browser_start_alone(env) * 1000)
        s["first page ready"].append(rb.browser_start_alone(env, page_ready=True) * 1000)
    return s, stages


def memory(env, base, out, tmp):
    """Peak PSS of a warm /tall fetch vs the raw-CDP floor on a bare Chromium, alternating."""
    host, ready = rb.start_host(env, BIN)
    bare, ws = wf.bare_chromium(tmp)
    ep = ready["endpoint_url"]
    argv = {
        "afhttp": lambda o: [BIN, "fetch", base + "/tall", "--endpoint-url", ep, "--render", "always", "--out", o],
        "floor": lambda o: [sys.executable, RAW, ws, base + "/tall", o, "load"],
    }
    roots = {"afhttp": host.pid, "floor": bare.pid}
    for k in argv:
        rb.timed(argv[k](out()), env)
    r = {k: {"pss": [], "parts": [], "wall": [], "image": None} for k in argv}
    try:
        for _ in range(max(3, RUNS // 2)):
            for k in argv:
                o = out()
                wall, peak, parts = wf.peak_pss([roots[k]], argv[k](o), env)
                r[k]["pss"].append(peak)
                r[k]["parts"].append(parts)
                r[k]["wall"].append(wall * 1000)
                for name in os.listdir(o):
                    if name.endswith(".png"):
                        r[k]["image"] = png_size(os.path.join(o, name))
    finally:
        host.terminate()
        host.wait(timeout=15)
        bare.kill()
        bare.wait()
    return r


def parallel(env, base, out):
    """8 warm SPA fetches at once vs 8 networkidle runs at once on one host, alternating."""
    host, ready = rb.start_host(env, BIN)
    ep = ready["endpoint_url"]
    make = {
        "afhttp": lambda: [BIN, "fetch", base + "/spa", "--endpoint-url", ep, "--render", "always", "--out", out()],
        "networkidle": lambda: [sys.executable, RAW, ep + "/cdp", base + "/spa", out(), "800"],
    }
    tick = os.sysconf("SC_CLK_TCK")

    def batch(argv):
        host0 = wf.cpu_ticks(wf.tree(host.pid))
        ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        procs = [subprocess.Popen(argv(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
                 for _ in range(8)]
        if any(p.wait() != 0 for p in procs):
            raise SystemExit("a parallel fetch failed")
        wall = time.perf_counter() - t
        ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        browser = (wf.cpu_ticks(wf.tree(host.pid)) - host0) / tick
        driver = (ch1.ru_utime + ch1.ru_stime) - (ch0.ru_utime + ch0.ru_stime)
        return {"wall": wall * 1000, "browser_cpu": browser * 1000 / 8, "driver_cpu": driver * 1000 / 8}

    r = {k: [] for k in make}
    try:
        for k in make:
            rb.timed(make[k](), env)
        for _ in range(max(3, RUNS // 2)):
            for k in make:
                time.sleep(1.0)
                r[k].append(batch(make[k]))
    finally:
        host.terminate()
        host.wait(timeout=15)
    return r


def main():
    env = rb.bench_env()
    load_start = os.getloadavg()[0]
    srv = http_bench.serve()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="afhttp-bench-parts-")
    n = [0]

    def out():
        n[0] += 1
        return os.path.join(tmp, str(n[0]))

    c, stages = cold(env, base, out)
    m = memory(env, base, out, tmp)
    p = parallel(env, base, out)
    load_end = os.getloadavg()[0]
    stamp = http_bench.write_wall_samples("floor-parts.csv", {k: [x / 1000 for x in v] for k, v in c.items()})
    run_dir = os.path.join(ROOT, "bench", "runs", f"{stamp}-{platform.node()}")
    with open(os.path.join(run_dir, "floor-parts.json"), "w") as f:
        json.dump({"cold": c, "stages": stages, "memory": m, "parallel": p, "load": [load_start, load_end],
                   "binary": BIN}, f)
    subprocess.run(["rm", "-rf", tmp], check=False)
    srv.shutdown()
    write_summary(c, stages, m, p, load_start, load_end)


def verdict(ok):
    return "met" if ok else "NOT met"


def write_summary(c, stages, m, p, load_start, load_end):
    cm = {k: med(v) for k, v in c.items()}
    added, added_ready = cm["inline cold"] - cm["browser start"], cm["inline cold"] - cm["first page ready"]
    order = ("setup", "inline_host_start", "tab_open", "tab_setup", "navigate", "wait", "capture", "total")
    stage_row = " | ".join(f"{med(stages[k]):.0f}" if k in stages else "–" for k in order)

    def part(k, key):
        return med(x.get(key, 0) for x in m[k]["parts"]) / 1024

    pss = {k: med(m[k]["pss"]) / 1024 for k in m}
    mem_rows = "\n".join(
        f"| {k} | {part(k, 'root'):.0f} | {part(k, 'browser'):.0f} | {part(k, 'driver'):.0f} | {pss[k]:.0f} | "
        f"{m[k]['image'][0]}×{m[k]['image'][1]} | {med(m[k]['wall']):.0f} |" for k in m)
    pm = {k: {f: med(x[f] for x in v) for f in ("wall", "browser_cpu", "driver_cpu")} for k, v in p.items()}
    par_rows = "\n".join(
        f"| {k} | {v['wall']:.0f} | {v['browser_cpu'] + v['driver_cpu']:.0f} | {v['browser_cpu']:.0f} | "
        f"{v['driver_cpu']:.0f} |" for k, v in pm.items())
    ratio_mem = pss["afhttp"] / pss["floor"]
    ratio_par = pm["afhttp"]["wall"] / pm["networkidle"]["wall"]
    binary = "release" if "/release/" in BIN or os.environ.get("BENCH_RELEASE") == "1" else "debug"
    summary = f"""## Cold start, capture memory, parallel fetches at the floor (issue 26)

Measured {time.strftime('%Y-%m-%d', time.gmtime())} on {platform.node()} ({os.cpu_count()} cores shared with other
working sessions; 1-min load average {load_start:.1f} at the start and {load_end:.1f} at the end: absolute times
are inflated, ratios within the run compare like with like), Debian Chromium, the {binary} binary, every case a
whole process, cases alternating. `bench/floor_parts.py`. {NOTE}

Inline cold `fetch --render always --wait load` of a small page ({len(c['inline cold'])} runs) beside the same
browser started alone with afhttp's flags: until it answers `Target.createTarget` ("browser start"), and until
its start-up page answers `Page.enable` ("first page ready": its first renderer is up).

| Case | median ms |
| --- | --- |
| inline cold fetch, to the exit | {cm['inline cold']:.0f} |
| browser start | {cm['browser start']:.0f} |
| browser start, first page ready | {cm['first page ready']:.0f} |
| the fetch's answer to its exit (stopping the browser, removing its profile) | {cm['after answer']:.0f} |

Medians of the inline fetch's `trace.timings_ms`:

| {' | '.join(order)} |
| {' | '.join('---' for _ in order)} |
| {stage_row} |

Peak PSS of a warm fetch of the tall image page (MB, medians at each run's peak of {len(m['afhttp']['pss'])}; "root"
is the afhttp host process or the bare Chromium's browser process, "browser" the rest of its tree, "driver" the
fetch process or `raw_cdp.py load`), the image each took and the time:

| Run | root | browser | driver | total | image px | ms |
| --- | --- | --- | --- | --- | --- | --- |
{mem_rows}

8 warm SPA fetches started at once on one host vs 8 `raw_cdp.py 800` (networkidle, the same capture) at once
on its `/cdp` (medians of {len(p['afhttp'])} batches; CPU per fetch = host and browser tree + the driver
processes, over the batch, divided by 8):

| Case | batch ms | CPU per fetch ms | host + browser | driver |
| --- | --- | --- | --- | --- |
{par_rows}

| Target | Measured | Verdict |
| --- | --- | --- |
| inline cold fetch ≤ the browser's own start + 200 ms | +{added:.0f} ms (+{added_ready:.0f} ms over its first page ready) | {verdict(added <= 200)} |
| peak PSS of a warm tall-page fetch ≤ 1.15× the raw-CDP floor on a bare Chromium | {pss['afhttp']:.0f} vs {pss['floor']:.0f} MB = {ratio_mem:.2f} | {verdict(ratio_mem <= 1.15)} |
| 8 parallel warm SPA fetches ≤ 0.7× 8 parallel networkidle runs | {ratio_par:.2f} | {verdict(ratio_par <= 0.7)} |
"""
    with open(os.path.join(ROOT, "bench", "summary-floor-parts.md"), "w") as f:
        f.write(summary)
    if os.environ.get("BENCH_NO_DOC") != "1":
        http_bench.write_doc()
    print(summary)


if __name__ == "__main__":
    main()
