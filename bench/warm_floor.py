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
BENCH_POOL / BENCH_BASE_POOL: `--tab-pool` of the new / baseline host (unset: the binary's
default), so one binary can be its own baseline with the pool on and off.
BENCH_NOTE: a sentence about the builds, written into the summary. BENCH_DUMP=path: the raw samples as JSON. BENCH_RELEASE=1: the binaries are
release builds kept outside target/release.
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
POOL = os.environ.get("BENCH_POOL")
BASE_POOL = os.environ.get("BENCH_BASE_POOL")
NOTE = os.environ.get("BENCH_NOTE", "")
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
    """Run `argv`, sampling the PSS of `roots`' trees and the driver's; returns (wall s, peak KiB,
    the parts at the peak: each root alone, the rest of its tree (the browser), the driver)."""
    stop = threading.Event()
    peak = [0, {}]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    def sample():
        while not stop.is_set():
            parts = {"driver": pss_kib(tree(proc.pid))}
            for r in roots:
                parts["root"] = parts.get("root", 0) + pss_kib([r])
                parts["browser"] = parts.get("browser", 0) + pss_kib([q for q in tree(r) if q != r])
            total = sum(parts.values())
            if total > peak[0]:
                peak[0], peak[1] = total, parts
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
    return wall, peak[0], peak[1]


def cpu_ticks(pids):
    """utime + stime of `pids`, in clock ticks."""
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            pass
    return total


def idle_cost(pid, seconds=5.0):
    """A host at rest: the PSS of its tree (MB) and the CPU it spends (ms per second)."""
    time.sleep(1.0)
    before = cpu_ticks(tree(pid))
    time.sleep(seconds)
    ticks = cpu_ticks(tree(pid)) - before
    return pss_kib(tree(pid)) / 1024, ticks * 1000 / os.sysconf("SC_CLK_TCK") / seconds


def timed_answer(argv, env):
    """Run one `afhttp fetch`; returns (wall s to exit, its `trace.timings_ms` with
    `after_answer`: the ms from the event on stdout to the process's exit, which a caller
    waiting for the exit also waits for)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    lines, answered = [], None
    for line in proc.stdout:
        answered = time.perf_counter()
        lines.append(line)
    proc.wait()
    ended = time.perf_counter()
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"failed: {' '.join(argv)}\n{b''.join(lines).decode()[:1500]}")
    timings = dict((json.loads(lines[-1]).get("trace") or {}).get("timings_ms", {}))
    timings["after_answer"] = (ended - answered) * 1000
    return ended - started, timings


def bare_chromium(tmp):
    """A bare Chromium with a DevTools port; returns (process, browser ws url)."""
    prof = os.path.join(tmp, "bare-profile")
    # afhttp's window (1280x800, src/host/browser/env.rs): the same viewport, so the same capture
    # (Chromium's headless default, 800x600, gives a narrower and taller page: other pixels).
    argv = [shutil.which("chromium") or "/usr/bin/chromium", "--headless", "--remote-debugging-port=0",
            f"--user-data-dir={prof}", "--no-first-run", "--window-size=1280,800", "about:blank"]
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
    pool_args = lambda n: ("--tab-pool", n) if n is not None else ()  # noqa: E731
    host, ready = run_browser.start_host(env, BIN, pool_args(POOL))
    hosts = {"new": (host, ready["endpoint_url"], BIN)}
    if BASE:
        bhost, bready = run_browser.start_host(env, BASE, pool_args(BASE_POOL))
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
    at_rest = {which: idle_cost(h.pid) for which, (h, _, _) in hosts.items()}
    samples, timings = {}, {}
    for _ in range(RUNS):
        for case, (argv, traced) in cases.items():
            if traced:
                wall, t = timed_answer(argv(), env)
                timings.setdefault(case, []).append(t)
            else:
                wall = run_browser.timed(argv(), env)
            samples.setdefault(case, []).append(wall)

    # Peak PSS of the tall page: the new host's tree + driver vs the floor on a bare Chromium.
    chrome, ws = bare_chromium(tmp)
    pss = {"afhttp": [], "floor": []}
    parts = {"afhttp": [], "floor": []}
    for _ in range(max(3, RUNS // 2)):
        _, kib, at = peak_pss([host.pid], afhttp("new", "/tall"), env)
        pss["afhttp"].append(kib)
        parts["afhttp"].append(at)
        _, kib, at = peak_pss([chrome.pid], [sys.executable, os.path.join(ROOT, "bench", "raw_cdp.py"),
                                            ws, base_url + "/tall", out(), "load"], env)
        pss["floor"].append(kib)
        parts["floor"].append(at)
    chrome.terminate()
    chrome.wait(timeout=15)
    for h, _, _ in hosts.values():
        h.terminate()
        h.wait(timeout=15)
    srv.shutdown()
    load_end = os.getloadavg()[0]

    if os.environ.get("BENCH_DUMP"):
        with open(os.environ["BENCH_DUMP"], "w") as f:
            json.dump({"samples": samples, "timings": timings, "pss": pss, "parts": parts, "at_rest": at_rest,
                       "load": [load_start, load_end]}, f)
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
        fixed = tmed(f"afhttp new {name}", "tab_open", "tab_setup", "tab_close", "after_answer")
        fixed_base = tmed(f"afhttp base {name}", "tab_open", "tab_setup", "tab_close", "after_answer") if BASE else float("nan")
        rows.append(f"| {name} | {new:.0f} | {basecol} {floor:.0f} | {idle:.0f} | {new / floor:.2f} | {new / idle:.2f} | "
                    f"{fixed:.0f} | {fixed_base:.0f} |")
    fixed_all = statistics.median(
        sum(t.get(k, 0) for k in ("tab_open", "tab_setup", "tab_close", "after_answer"))
        for name in PAGES for t in timings[f"afhttp new {name}"])
    idle_median = statistics.median(idle_ratios)
    tall_ratios = {name: med[f"afhttp new {name}"] / med[f"floor {name}"] for name in TALL}
    pss_new, pss_floor = statistics.median(pss["afhttp"]) / 1024, statistics.median(pss["floor"]) / 1024
    phases = ("tab_open", "tab_setup", "navigate", "wait", "capture", "tab_close", "total", "after_answer")
    phase_rows = "\n".join(
        f"| {case.replace('afhttp ', '')} | " + " | ".join(f"{tmed(case, k):.0f}" for k in phases) + " |"
        for case in timings)
    def part(which, key):
        return statistics.median(p.get(key, 0) for p in parts[which]) / 1024

    pss_rows = "\n".join(
        f"| {which} | {part(which, 'root'):.0f} | {part(which, 'browser'):.0f} | {part(which, 'driver'):.0f} | "
        f"{statistics.median(pss[which]) / 1024:.0f} |" for which in ("afhttp", "floor"))
    stamp = http_bench.write_wall_samples("warm-floor.csv", samples)
    binary = "release" if "/release/" in BIN or os.environ.get("BENCH_RELEASE") == "1" else "debug"
    summary = f"""## Warm fetches at the floor (issue 26)

Measured {stamp} on {platform.node()} ({os.cpu_count()} cores shared with about 7 other working sessions;
1-min load average {load_start:.1f} at the start and {load_end:.1f} at the end: absolute times are inflated,
ratios within the run still compare like with like), Debian Chromium, the {binary} afhttp binary
`{os.path.basename(BIN)}`{f" (`--tab-pool {POOL}`)" if POOL is not None else ""}{f" against the baseline build `{BASE}`" if BASE else ""}{f" (`--tab-pool {BASE_POOL}`)" if BASE and BASE_POOL is not None else ""},
{RUNS} runs per case, alternating, a whole process per fetch. {NOTE} "floor" is `bench/raw_cdp.py load` (new tab, navigate, load event, outerHTML,
innerText, the same full-page PNG, close; no quiet window); "networkidle" is its 800 ms mode; both on the
new host's `/cdp`. Fixed overhead = `tab_open` + `tab_setup` + `tab_close` from `trace.timings_ms` + `after_answer`
(measured by the bench: from the event on stdout to the process's exit, which a caller waiting for the exit
waits for too; a build that closes the tab after printing has no `tab_close`, 0). "new ms" is to the exit.

| Page | new ms | baseline ms | floor ms | networkidle ms | new / floor | new / networkidle | fixed overhead new ms | fixed overhead baseline ms |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

Medians of `trace.timings_ms`:

| Case | {' | '.join(phases)} |
| --- | {' | '.join('---' for _ in phases)} |
{phase_rows}

Where the peak PSS of the tall page is (MB, medians at each run's peak; "root" is the afhttp host process
itself or the bare Chromium's browser process, "browser" the rest of its tree, "driver" the fetch process):

| Run | root | browser | driver | total |
| --- | --- | --- | --- | --- |
{pss_rows}

A warm host at rest (after the warm-up fetches; 1 s after the last, then 5 s): PSS of the host and its browser
tree, and the CPU they spend: {'; '.join(f"{w} {m:.0f} MB, {c:.1f} ms CPU per s" for w, (m, c) in at_rest.items())}.

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
