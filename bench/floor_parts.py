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

Part 1 also runs the raw cold floor (`run_browser.raw_cold_floor`: the same browser, then over
raw CDP the work an inline fetch does, no afhttp) and, with BENCH_BASELINE_BIN, the baseline
binary's inline cold fetch, alternating.

Usage: BENCH_BIN=target/release/afhttp [BENCH_BASELINE_BIN=...] [BENCH_RUNS=5]
       [BENCH_PARTS=cold,memory,parallel] [BENCH_NOTE=...] bench/floor_parts.py
Writes bench/summary-floor-cold.md (part 1), bench/summary-floor-parts.md (parts 2-3) and
docs/benchmarks.md (`run.write_doc`), raw samples in bench/runs/.
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
BASE_BIN = os.environ.get("BENCH_BASELINE_BIN")
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
PARTS = os.environ.get("BENCH_PARTS", "cold,memory,parallel").split(",")
NOTE = os.environ.get("BENCH_NOTE", "")
RAW = os.path.join(ROOT, "bench", "raw_cdp.py")
med = statistics.median


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


def cold(env, base, out):
    """Inline cold fetches (this binary and the baseline's), the raw cold floor and the
    browser's own start, alternating."""
    real = rb.chromium_behind_wrapper()
    bins = {"inline cold": (BIN, [])}
    if BASE_BIN:
        bins["baseline inline cold"] = (BASE_BIN, [])
    if real:
        bins["inline cold, --browser-bin the real executable"] = (BIN, ["--browser-bin", real])
    s = {k: [] for k in (*bins, "raw cold floor", "browser start", "first page ready")}
    if real:
        s["browser start, no wrapper script"] = []
    # The page's own work without any cold start: the same fetch on a warm host (informational).
    host, ready = rb.start_host(env, BIN)
    warm = "warm fetch of the same page (a host's ready tab)"
    bins[warm] = (BIN, ["--endpoint-url", ready["endpoint_url"]])
    s[warm] = []
    stages = {k: {} for k in (*bins, "raw cold floor")}
    try:
        for _ in range(2):
            wf.timed_answer([BIN, "fetch", base + "/small", *bins[warm][1], "--render", "always", "--out", out()], env)
        for _ in range(RUNS):
            cold_round(env, base, out, bins, s, stages, real)
    finally:
        host.terminate()
        host.wait(timeout=15)
    return s, stages


def cold_round(env, base, out, bins, s, stages, real):
    """One round of `cold`: every case once."""
    for name, (binary, extra) in bins.items():
        wall, t = wf.timed_answer([binary, "fetch", base + "/small", "--render", "always", "--wait", "load",
                                   *extra, "--out", out()], env)
        s[name].append(wall * 1000)
        for k, v in t.items():
            stages[name].setdefault(k, []).append(v)
    parts = rb.raw_cold_floor(env, base + "/small", out())
    s["raw cold floor"].append(parts["total"])
    for k, v in parts.items():
        stages["raw cold floor"].setdefault(k, []).append(v)
    s["browser start"].append(rb.browser_start_alone(env) * 1000)
    s["first page ready"].append(rb.browser_start_alone(env, page_ready=True) * 1000)
    if real:
        s["browser start, no wrapper script"].append(rb.browser_start_alone(env, binary=real) * 1000)


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

    c, stages, m, p = None, None, None, None
    if "cold" in PARTS:
        c, stages = cold(env, base, out)
    if "memory" in PARTS:
        m = memory(env, base, out, tmp)
    if "parallel" in PARTS:
        p = parallel(env, base, out)
    load_end = os.getloadavg()[0]
    # A cold-only run keeps its raw samples apart from the whole run's.
    name = "floor-cold" if PARTS == ["cold"] else "floor-parts"
    stamp = http_bench.write_wall_samples(f"{name}.csv", {k: [x / 1000 for x in v] for k, v in (c or {}).items()})
    run_dir = os.path.join(ROOT, "bench", "runs", f"{stamp}-{platform.node()}")
    with open(os.path.join(run_dir, f"{name}.json"), "w") as f:
        json.dump({"cold": c, "stages": stages, "memory": m, "parallel": p, "load": [load_start, load_end],
                   "binary": BIN, "baseline_binary": BASE_BIN}, f)
    subprocess.run(["rm", "-rf", tmp], check=False)
    srv.shutdown()
    if c:
        write_cold_summary(c, stages, load_start, load_end)
    if m and p:
        write_summary(m, p, load_start, load_end)
    if os.environ.get("BENCH_NO_DOC") != "1":
        http_bench.write_doc()


def verdict(ok):
    return "met" if ok else "NOT met"


def binary_kind():
    return "release" if "/release/" in BIN or os.environ.get("BENCH_RELEASE") == "1" else "debug"


def write_cold_summary(c, stages, load_start, load_end):
    """bench/summary-floor-cold.md: part 1."""
    cm = {k: med(v) for k, v in c.items()}
    start, ready = cm["browser start"], cm["first page ready"]
    order = ("setup", "inline_host_start", "tab_open", "tab_setup", "navigate", "wait", "capture", "total",
             "after_answer")
    fetches = [k for k in c if "inline cold" in k or k.startswith("warm fetch")]
    stage_rows = "\n".join(
        f"| {k} | " + " | ".join(f"{med(stages[k][s]):.0f}" if s in stages[k] else "–" for s in order) + " |"
        for k in fetches)
    floor_order = ("start", "page", "navigate", "capture", "exit", "total")
    floor_row = " | ".join(f"{med(stages['raw cold floor'][k]):.0f}" for k in floor_order)
    rows = "\n".join(f"| {k} | {cm[k]:.0f} | {cm[k] - start:+.0f} | {cm[k] - ready:+.0f} |" for k in c)
    base_note = f" The baseline binary: `{BASE_BIN}`." if BASE_BIN else ""
    added, floor_added = cm["inline cold"] - start, cm["raw cold floor"] - start
    summary = f"""## Inline cold start at the floor (issue 26)

Measured {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC on {platform.node()} ({os.cpu_count()} cores shared
with other working sessions; 1-min load average {load_start:.1f} at the start and {load_end:.1f} at the end), Debian
Chromium, the {binary_kind()} binary `{BIN}`, {len(c['inline cold'])} rounds, every case a whole launch, cases
alternating within each round. `BENCH_PARTS=cold bench/floor_parts.py`.{base_note} {NOTE}

Cases: `afhttp fetch URL --render always --wait load` of a small page with no host (the inline browser), to the
process's exit; the raw cold floor (`run_browser.raw_cold_floor`: the same Chromium with afhttp's flags, then over
raw CDP what the inline fetch does: attach to the start-up page, Page/Network enable, navigate, load event,
outerHTML, innerText, the same full-page PNG, SIGKILL to the browser's group, profile removed; no afhttp, the
driver already running); the browser started alone with afhttp's flags until it answers `Target.createTarget`
("browser start", the target's definition), and until its start-up page answers `Page.enable` ("first page
ready"); where `chromium` is a distribution's shell script (Debian's `/usr/bin/chromium`, which sources
`/etc/chromium.d` and runs a dozen small programs first), also the real executable behind it started alone
("no wrapper script", informational: afhttp and every other case launch the script); and the same fetch on a
host started once before the rounds (`--endpoint-url`: its pool's ready tab in a warm browser), which is the
page's own work with no cold start at all (informational).

| Case | median ms | vs browser start | vs first page ready |
| --- | --- | --- | --- |
{rows}

Medians of the inline fetches' `trace.timings_ms` (`after_answer`: from the event on stdout to the exit):

| binary | {' | '.join(order)} |
| --- | {' | '.join('---' for _ in order)} |
{stage_rows}

The raw cold floor's parts (ms; `start`: launch until `Target.getTargets` answers, `page`: attach and the two
enables, `navigate`: until the load event, `capture`: the reads and the PNG written, `exit`: kill and profile
removal):

| {' | '.join(floor_order)} |
| {' | '.join('---' for _ in floor_order)} |
| {floor_row} |

| Target | Measured | Verdict |
| --- | --- | --- |
| inline cold fetch ≤ the browser's own start + 200 ms | {added:+.0f} ms (the raw cold floor: {floor_added:+.0f} ms) | {verdict(added <= 200)} |
"""
    with open(os.path.join(ROOT, "bench", "summary-floor-cold.md"), "w") as f:
        f.write(summary)
    print(summary)


def write_summary(m, p, load_start, load_end):
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
    binary = binary_kind()
    summary = f"""## Capture memory, parallel fetches at the floor (issue 26)

Measured {time.strftime('%Y-%m-%d', time.gmtime())} on {platform.node()} ({os.cpu_count()} cores shared with other
working sessions; 1-min load average {load_start:.1f} at the start and {load_end:.1f} at the end: absolute times
are inflated, ratios within the run compare like with like), Debian Chromium, the {binary} binary, every case a
whole process, cases alternating. `bench/floor_parts.py`. {NOTE}

The inline cold start is in its own section (`bench/summary-floor-cold.md`, `BENCH_PARTS=cold`).

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
| peak PSS of a warm tall-page fetch ≤ 1.15× the raw-CDP floor on a bare Chromium | {pss['afhttp']:.0f} vs {pss['floor']:.0f} MB = {ratio_mem:.2f} | {verdict(ratio_mem <= 1.15)} |
| 8 parallel warm SPA fetches ≤ 0.7× 8 parallel networkidle runs | {ratio_par:.2f} | {verdict(ratio_par <= 0.7)} |
"""
    with open(os.path.join(ROOT, "bench", "summary-floor-parts.md"), "w") as f:
        f.write(summary)
    print(summary)


if __name__ == "__main__":
    main()
