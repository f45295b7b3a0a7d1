#!/usr/bin/env python3
"""Issue 26: warm fetches against the raw-CDP floor, one run, each figure beside its baseline.

On the four bench pages of `bench/readiness.py` (static article, SPA, XHR page, tall image
page), alternating, each case a whole process per fetch:
- `afhttp fetch --render always` (default `--want`, `--wait auto`) on a warm `afhttp host` of
  BENCH_BIN (new) and of BENCH_BIN_BASE (the baseline build, its own warm host);
- `bench/raw_cdp.py` in its `load` mode (the floor: new tab, navigate, load event, outerHTML,
  innerText, the same full-page PNG, close; no quiet window) and in its networkidle mode
  (800 ms with no request in flight), both on the new host's `/cdp`;
- peak PSS of a tall-page fetch: the new host, its browser tree and the driver, sampled every
  20 ms, against the floor run by `raw_cdp.py load` on a bare Chromium (browser tree + driver).

Targets (issue 26, part 4): warm fetch <= 1.2x the floor on the two tall pages; <= 0.45x the
networkidle recipe as a median over the four pages; fixed overhead (`tab_open` + `tab_setup` +
what the caller waits for after capture) <= 25 ms median; peak PSS <= 1.15x the floor's.

Usage: BENCH_BIN=target/release/afhttp BENCH_BIN_BASE=/path/to/base bench/warm_floor.py
"""
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as http_bench  # noqa: E402
import run_browser  # noqa: E402
import readiness  # noqa: E402,F401  (registers /xhr and /tall)

ROOT = http_bench.ROOT
BIN = os.environ.get("BENCH_BIN") or http_bench.BIN
BASE = os.environ.get("BENCH_BIN_BASE")
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
PAGES = {"static article": "/article", "SPA": "/spa", "XHR page": "/xhr", "tall image page": "/tall"}
TALL = ("static article", "tall image page")


def tree(pid):
    """`pid` and its descendants."""
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(p))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def pss_kib(pids):
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def peak_pss(roots, argv, env):
    """Run `argv`, sampling the PSS of `roots`' trees and the driver's; returns (wall s, peak KiB)."""
    stop = threading.Event()
    peak = [0]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    def sample():
        while not stop.is_set():
            pids = [q for r in roots + [proc.pid] for q in tree(r)]
            peak[0] = max(peak[0], pss_kib(pids))
            time.sleep(0.02)

    t = threading.Thread(target=sample)
    started = time.perf_counter()
    t.start()
    proc.communicate()
    wall = time.perf_counter() - started
    stop.set()
    t.join()
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}")
    return wall, peak[0]


def bare_chromium(tmp):
    """A bare Chromium with a DevTools port; returns (process, browser ws url)."""
    prof = os.path.join(tmp, "bare-profile")
    argv = [shutil.which("chromium") or "/usr/bin/chromium", "--headless", "--remote-debugging-port=0",
            f"--user-data-dir={prof}", "--no-first-run", "about:blank"]
    if os.geteuid() == 0:
        argv.insert(1, "--no-sandbox")
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if "DevTools listening on" in line:
            threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
            return p, line.split("on ", 1)[1].strip()
    raise SystemExit("bare chromium did not start")


def main():
    env = run_browser.bench_env()
    load_start = os.getloadavg()[0]
    srv = http_bench.serve()
    base_url = f"http://127.0.0.1:{srv.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="afhttp-bench-floor-")
    host, ready = run_browser.start_host(env, BIN)
    hosts = {"new": (host, ready["endpoint_url"], BIN)}
    if BASE:
        bhost, bready = run_browser.start_host(env, BASE)
        hosts["base"] = (bhost, bready["endpoint_url"], BASE)
    cdp = ready["endpoint_url"] + "/cdp"
    n = [0]

    def out():
        n[0] += 1
        return os.path.join(tmp, str(n[0]))

    def afhttp(which, path):
        _, endpoint, binary = hosts[which]
        return [binary, "fetch", base_url + path, "--endpoint-url", endpoint, "--render", "always", "--out", out()]

    def raw(path, mode):
        return [sys.executable, os.path.join(ROOT, "bench", "raw_cdp.py"), cdp, base_url + path, out(), mode]

    cases = {}
    for name, path in PAGES.items():
        for which in hosts:
            cases[f"afhttp {which} {name}"] = (lambda w=which, p=path: afhttp(w, p), True)
        cases[f"floor {name}"] = (lambda p=path: raw(p, "load"), False)
        cases[f"networkidle {name}"] = (lambda p=path: raw(p, "800"), False)
    for argv, _ in cases.values():
        run_browser.timed(argv(), env)
    samples, timings = {}, {}
    for _ in range(RUNS):
        for case, (argv, traced) in cases.items():
            if traced:
                wall, t = run_browser.timed_trace(argv(), env)
                timings.setdefault(case, []).append(t)
            else:
                wall = run_browser.timed(argv(), env)
            samples.setdefault(case, []).append(wall)

    # Peak PSS of the tall page: the new host's tree + driver vs the floor on a bare Chromium.
    chrome, ws = bare_chromium(tmp)
    pss = {"afhttp": [], "floor": []}
    for _ in range(max(3, RUNS // 2)):
        pss["afhttp"].append(peak_pss([host.pid], afhttp("new", "/tall"), env)[1])
        pss["floor"].append(peak_pss([chrome.pid], [sys.executable, os.path.join(ROOT, "bench", "raw_cdp.py"),
                                                     ws, base_url + "/tall", out(), "load"], env)[1])
    chrome.terminate()
    chrome.wait(timeout=15)
    for h, _, _ in hosts.values():
        h.terminate()
        h.wait(timeout=15)
    srv.shutdown()
    load_end = os.getloadavg()[0]

    med = {k: statistics.median(v) * 1000 for k, v in samples.items()}

    def tmed(case, *keys):
        return statistics.median(sum(t.get(k, 0) for k in keys) for t in timings[case])

    def verdict(ok):
        return "met" if ok else "NOT met"

    rows, idle_ratios = [], []
    for name in PAGES:
        new = med[f"afhttp new {name}"]
        floor, idle = med[f"floor {name}"], med[f"networkidle {name}"]
        idle_ratios.append(new / idle)
        basecol = f"{med[f'afhttp base {name}']:.0f} |" if BASE else "– |"
        fixed = tmed(f"afhttp new {name}", "tab_open", "tab_setup", "tab_close")
        fixed_base = tmed(f"afhttp base {name}", "tab_open", "tab_setup", "tab_close") if BASE else float("nan")
        rows.append(f"| {name} | {new:.0f} | {basecol} {floor:.0f} | {idle:.0f} | {new / floor:.2f} | {new / idle:.2f} | "
                    f"{fixed:.0f} | {fixed_base:.0f} |")
    fixed_all = statistics.median(
        sum(t.get(k, 0) for k in ("tab_open", "tab_setup", "tab_close"))
        for name in PAGES for t in timings[f"afhttp new {name}"])
    idle_median = statistics.median(idle_ratios)
    tall_ratios = {name: med[f"afhttp new {name}"] / med[f"floor {name}"] for name in TALL}
    pss_new, pss_floor = statistics.median(pss["afhttp"]) / 1024, statistics.median(pss["floor"]) / 1024
    phases = ("tab_open", "tab_setup", "navigate", "wait", "capture", "tab_close", "total")
    phase_rows = "\n".join(
        f"| {case.replace('afhttp ', '')} | " + " | ".join(f"{tmed(case, k):.0f}" for k in phases) + " |"
        for case in timings)
    stamp = http_bench.write_wall_samples("warm-floor.csv", samples)
    binary = "release" if "/release/" in BIN else "debug"
    summary = f"""## Warm fetches at the floor (issue 26)

Measured {stamp} on {platform.node()} ({os.cpu_count()} cores shared with about 7 other working sessions;
1-min load average {load_start:.1f} at the start and {load_end:.1f} at the end: absolute times are inflated,
ratios within the run still compare like with like), Debian Chromium, the {binary} afhttp binary
`{os.path.basename(BIN)}`{f" against the baseline build `{BASE}`" if BASE else ""}, {RUNS} runs per case, alternating,
a whole process per fetch. "floor" is `bench/raw_cdp.py load` (new tab, navigate, load event, outerHTML,
innerText, the same full-page PNG, close; no quiet window); "networkidle" is its 800 ms mode; both on the
new host's `/cdp`. Fixed overhead = `tab_open` + `tab_setup` + `tab_close` from `trace.timings_ms` (the new
build closes the tab after printing, so its `tab_close` is absent: 0).

| Page | new ms | baseline ms | floor ms | networkidle ms | new / floor | new / networkidle | fixed overhead new ms | fixed overhead baseline ms |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

Medians of `trace.timings_ms`:

| Case | {' | '.join(phases)} |
| --- | {' | '.join('---' for _ in phases)} |
{phase_rows}

| Target | Measured | Verdict |
| --- | --- | --- |
| warm fetch ≤ 1.2× the floor on the two tall pages | {', '.join(f'{k} {v:.2f}' for k, v in tall_ratios.items())} | {verdict(all(v <= 1.2 for v in tall_ratios.values()))} |
| ≤ 0.45× networkidle, median over the four pages | {idle_median:.2f} | {verdict(idle_median <= 0.45)} |
| fixed overhead ≤ 25 ms median | {fixed_all:.0f} ms | {verdict(fixed_all <= 25)} |
| peak PSS of a warm tall-page fetch ≤ 1.15× the floor on a bare Chromium | {pss_new:.0f} MB vs {pss_floor:.0f} MB = {pss_new / pss_floor:.2f} | {verdict(pss_new / pss_floor <= 1.15)} |
"""
    with open(os.path.join(ROOT, "bench", "summary-warm-floor.md"), "w") as f:
        f.write(summary)
    print(summary)
    if os.environ.get("BENCH_NO_DOC") != "1":
        http_bench.write_doc()


if __name__ == "__main__":
    main()
