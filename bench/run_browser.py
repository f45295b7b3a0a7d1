#!/usr/bin/env python3
"""Browser-path benchmarks, each against a baseline measured in the same run:

1. Inline cold `fetch --render always` vs starting the browser alone (until it answers its
   first CDP command: a new tab).
2. Warm-host fetches of a static ~50 KB article and an SPA shell (one JSON after 100 ms,
   50 items) vs `bench/raw_cdp.py`, a minimal raw-CDP client doing the same waits (load +
   500 ms network quiet) and outerHTML + innerText + full-page screenshot on the same browser.
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
import run as http_bench  # noqa: E402  (shared server pieces and doc writer)

ROOT = http_bench.ROOT
BIN = http_bench.BIN
RUNS = int(os.environ.get("BENCH_RUNS", "15"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

SPA = b"""<!doctype html><html><head><title>SPA</title></head><body><div id="root"></div>
<script>setTimeout(function(){fetch('/api/items').then(r=>r.json()).then(d=>{var ul=document.createElement('ul');
d.items.forEach(function(i){var li=document.createElement('li');li.textContent=i.name;ul.appendChild(li);});
document.getElementById('root').appendChild(ul);});},100);</script></body></html>"""
ITEMS = json.dumps({"items": [{"id": i, "name": f"Item {i}"} for i in range(1, 51)]}).encode()
http_bench.PAGES["/spa"] = (SPA, "text/html; charset=utf-8")
http_bench.PAGES["/api/items"] = (ITEMS, "application/json")
SMALL = b"<!doctype html><html><head><title>Small</title></head><body><h1>Hello</h1><p>A small static page.</p></body></html>"
http_bench.PAGES["/small"] = (SMALL, "text/html; charset=utf-8")


def timed(argv, env=None):
    t = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{p.stdout.decode()[:1500]}\n{p.stderr.decode()[-1500:]}")
    return time.perf_counter() - t


def timed_trace(argv, env=None):
    """Like `timed`, also returning the fetch event's `trace.timings_ms`."""
    t = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{p.stdout.decode()[:1500]}\n{p.stderr.decode()[-1500:]}")
    event = json.loads(p.stdout.decode().strip().splitlines()[-1])
    return elapsed, (event.get("trace") or {}).get("timings_ms", {})


def inline_profile_root():
    """Where an inline fetch puts its throwaway profile (`memory_scratch_root` in
    src/host/inline.rs): /dev/shm when TMPDIR is unset and /dev/shm is a tmpfs with >= 1 GiB
    free, else the temp dir. The baseline browser gets its profile in the same place, so the
    comparison measures afhttp's work, not the disk's."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        st = os.statvfs("/dev/shm")
        with open("/proc/mounts") as f:
            tmpfs = any(line.split()[1] == "/dev/shm" and line.split()[2] == "tmpfs" for line in f)
    except OSError:
        return None
    return "/dev/shm" if tmpfs and st.f_bavail * st.f_frsize >= 1 << 30 else None


def chromium_behind_wrapper():
    """The executable behind `CHROMIUM` when that is a shell script (Debian's `/usr/bin/chromium`
    runs `/usr/lib/chromium/chromium` after sourcing `/etc/chromium.d`), else None."""
    try:
        with open(CHROMIUM, "rb") as f:
            script = f.read(2) == b"#!"
    except OSError:
        return None
    real = "/usr/lib/chromium/chromium"
    return real if script and os.access(real, os.X_OK) else None


def afhttp_chromium_argv(env, profile, binary=None):
    """Chromium's command line as an inline afhttp fetch launches it (`chromium_args` in
    src/host/browser/args.rs, headless, no proxy, no extra args)."""
    argv = [binary or CHROMIUM, "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={profile}", "--headless=new"]
    if env.get("AFHTTP_NO_SANDBOX") == "1":
        argv.append("--no-sandbox")
    return argv + [
        "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-features=Translate,MediaRouter,OptimizationHints",
        "--disable-quic", "--metrics-recording-only", "--password-store=basic", "--use-mock-keychain",
        "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
        "--disable-backgrounding-occluded-windows", "--disable-blink-features=AutomationControlled",
        "--window-size=1280,720", "--screen-info={1280x720}", "--disable-infobars", "about:blank"]


def launch_like_afhttp(env, profile, binary=None):
    """Start Chromium (`binary`, default `CHROMIUM`) with afhttp's flags in its own process
    group; returns (process, the browser's DevTools WebSocket URL, None if it printed none)."""
    p = subprocess.Popen(afhttp_chromium_argv(env, profile, binary), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         start_new_session=True)
    for line in p.stderr:
        if b"DevTools listening on" in line:
            return p, line.decode().split("on ", 1)[1].strip()
    return p, None


def raw_cold_floor(env, url, out):
    """Issue 26's fair floor for an inline cold fetch, with no afhttp: Chromium launched alone
    with afhttp's flags, then over raw CDP what an inline fetch does (attach to the start-up
    page, Page/Network enable, navigate, load event, outerHTML, innerText, the same full-page
    PNG, written to `out`), then the browser killed (SIGKILL to its group, as afhttp stops an
    ephemeral browser) and its profile removed. Returns the ms of each part: `start` (until
    the browser answers `Target.getTargets`), `page` (attach + the enables: the start-up
    page's first renderer), `navigate` (until the load event), `capture`, `exit`, `total`."""
    import asyncio
    import base64
    import websockets

    d = tempfile.mkdtemp(prefix="bench-chromium-", dir=inline_profile_root())
    marks = [("launch", time.perf_counter())]
    p, ws_url = launch_like_afhttp(env, d)

    async def drive():
        async with websockets.connect(ws_url, max_size=None) as ws:
            pending, loaded = {}, asyncio.Event()
            ids = iter(range(1, 1 << 30))

            async def reader():
                async for raw in ws:
                    msg = json.loads(raw)
                    if msg.get("id") in pending:
                        pending.pop(msg["id"]).set_result(msg)
                    elif msg.get("method") == "Page.loadEventFired":
                        loaded.set()

            task = asyncio.create_task(reader())

            async def call(method, params=None, session=None):
                n = next(ids)
                fut = asyncio.get_running_loop().create_future()
                pending[n] = fut
                frame = {"id": n, "method": method, "params": params or {}}
                if session:
                    frame["sessionId"] = session
                await ws.send(json.dumps(frame))
                msg = await fut
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

            infos = (await call("Target.getTargets"))["targetInfos"]
            marks.append(("start", time.perf_counter()))
            page = next(i["targetId"] for i in infos if i["type"] == "page")
            session = (await call("Target.attachToTarget", {"targetId": page, "flatten": True}))["sessionId"]
            await asyncio.gather(call("Page.enable", session=session), call("Network.enable", session=session))
            marks.append(("page", time.perf_counter()))
            await call("Page.navigate", {"url": url}, session)
            await asyncio.wait_for(loaded.wait(), 30)
            marks.append(("navigate", time.perf_counter()))
            html = await call("Runtime.evaluate", {"expression": "document.documentElement.outerHTML",
                                                   "returnByValue": True}, session)
            text = await call("Runtime.evaluate", {"expression": "document.body.innerText", "returnByValue": True},
                              session)
            metrics = await call("Page.getLayoutMetrics", session=session)
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            shot = await call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": {
                "x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}}, session)
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, "rendered.html"), "w") as f:
                f.write(html["result"]["value"])
            with open(os.path.join(out, "text.txt"), "w") as f:
                f.write(text["result"]["value"])
            with open(os.path.join(out, "page.png"), "wb") as f:
                f.write(base64.b64decode(shot["data"]))
            marks.append(("capture", time.perf_counter()))
            task.cancel()

    try:
        if ws_url is None:
            raise SystemExit("chromium printed no DevTools line")
        asyncio.run(drive())
    finally:
        # As afhttp stops an ephemeral browser: SIGKILL to the group and the profile removed at
        # once, the kernel's teardown of the killed processes not waited for.
        os.killpg(p.pid, 9)
        shutil.rmtree(d, ignore_errors=True)
        marks.append(("exit", time.perf_counter()))
        p.wait()
    parts = {name: (t - marks[i][1]) * 1000 for i, (name, t) in enumerate(marks[1:])}
    parts["total"] = (marks[-1][1] - marks[0][1]) * 1000
    return parts


def browser_start_alone(env, page_ready=False, binary=None):
    """Launch Chromium with afhttp's flags; time until it answers its first CDP command
    (`Target.createTarget` on the browser socket); kill it.

    With `page_ready`, time instead until its start-up page answers `Page.enable`: that is
    when the first renderer is up, which a loaded machine delays far more than the browser
    process (informational; the target keeps the first definition).

    The DevTools line alone is not a usable browser: Chromium prints it several hundred
    milliseconds before it accepts a WebSocket, and any CDP client pays that wait.
    """
    import asyncio
    import websockets

    d = tempfile.mkdtemp(prefix="bench-chromium-", dir=inline_profile_root())
    t = time.perf_counter()
    p, url = launch_like_afhttp(env, d, binary)

    async def first_command():
        async with websockets.connect(url, max_size=None) as ws:
            if not page_ready:
                await ws.send(json.dumps({"id": 1, "method": "Target.createTarget", "params": {"url": "about:blank"}}))
                await ws.recv()
                return
            await ws.send(json.dumps({"id": 1, "method": "Target.getTargets"}))
            infos = json.loads(await ws.recv())["result"]["targetInfos"]
            page = next(t["targetId"] for t in infos if t["type"] == "page")
            await ws.send(json.dumps({"id": 2, "method": "Target.attachToTarget",
                                      "params": {"targetId": page, "flatten": True}}))
            session = None
            while session is None:
                msg = json.loads(await ws.recv())
                if msg.get("id") == 2:
                    session = msg["result"]["sessionId"]
            await ws.send(json.dumps({"id": 3, "method": "Page.enable", "sessionId": session}))
            while json.loads(await ws.recv()).get("id") != 3:
                pass

    if url:
        asyncio.run(first_command())
    elapsed = time.perf_counter() - t
    os.killpg(p.pid, 9)
    p.wait()
    shutil.rmtree(d, ignore_errors=True)
    return elapsed


def bench_env():
    """The environment every benchmark runs afhttp with: quiet logs, no sandbox as root."""
    env = dict(os.environ)
    if os.geteuid() == 0:
        env["AFHTTP_NO_SANDBOX"] = "1"
    env["AFHTTP_LOG"] = "off"
    return env


def start_host(env, binary=BIN, args=()):
    """Start `afhttp host` on an ephemeral loopback port (with `args`); returns (process, ready result)."""
    host = subprocess.Popen([binary, "host", "--listen", "tcp:127.0.0.1:0", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    return host, json.loads(host.stdout.readline())["result"]


def main():
    env = bench_env()
    load_start = os.getloadavg()[0]
    srv = http_bench.serve()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="afhttp-bench-browser-")
    host, ready = start_host(env)
    endpoint = ready["endpoint_url"]
    cdp = endpoint + "/cdp"
    want = "rendered_html,text,screenshot"
    n = [0]

    def out():
        n[0] += 1
        return os.path.join(tmp, str(n[0]))

    def afhttp_warm(path):
        return [BIN, "fetch", base + path, "--endpoint-url", endpoint, "--render", "always", "--want", want,
                "--wait", "idle", "--readiness-idle-ms", "500", "--out", out()]

    def raw(path):
        return [sys.executable, os.path.join(ROOT, "bench", "raw_cdp.py"), cdp, base + path, out(), "500"]

    for _ in range(2):
        timed(afhttp_warm("/article"), env)
        timed(raw("/article"), env)
    samples = {k: [] for k in ("afhttp static", "raw static", "afhttp spa", "raw spa", "inline cold", "browser start", "browser start, first page ready")}
    for _ in range(RUNS):
        samples["afhttp static"].append(timed(afhttp_warm("/article"), env))
        samples["raw static"].append(timed(raw("/article"), env))
        samples["afhttp spa"].append(timed(afhttp_warm("/spa"), env))
        samples["raw spa"].append(timed(raw("/spa"), env))
    host.terminate()
    host.wait(timeout=15)
    # Only directories that appear during this run count: the machine may be shared.
    def inline_dirs():
        roots = {tempfile.gettempdir(), inline_profile_root() or tempfile.gettempdir()}
        return {os.path.join(r, e) for r in roots for e in os.listdir(r)
                if e.startswith(("afhttp-inline-", "afhttp-profile-", "afhttp-browser-tmp-"))}

    before = inline_dirs()
    stages = {}
    for _ in range(max(7, RUNS // 2)):
        elapsed, timings = timed_trace([BIN, "fetch", base + "/small", "--render", "always", "--want", want, "--wait", "load",
                                        "--out", out()], env)
        samples["inline cold"].append(elapsed)
        for k, v in timings.items():
            stages.setdefault(k, []).append(v)
        samples["browser start"].append(browser_start_alone(env))
        samples["browser start, first page ready"].append(browser_start_alone(env, page_ready=True))
    leftovers = sorted(inline_dirs() - before)
    shutil.rmtree(tmp, ignore_errors=True)
    srv.shutdown()

    med = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    r_static = med["afhttp static"] / med["raw static"]
    r_spa = med["afhttp spa"] / med["raw spa"]
    added = med["inline cold"] - med["browser start"]
    added_ready = med["inline cold"] - med["browser start, first page ready"]
    stamp = http_bench.write_wall_samples("raw-browser.csv", samples)

    def verdict(ok):
        return "met" if ok else "NOT met"

    rows = "\n".join(f"| {k} | {m:.0f} | {len(samples[k])} |" for k, m in med.items())
    # inline_host_start is part of host_connect, which times the whole way to a connection.
    stage_rows = "\n".join(f"| {k} | {statistics.median(v):.0f} |" for k, v in stages.items())
    summary = f"""## Browser path (issue: browser host)

Measured {stamp} on {platform.node()} ({os.cpu_count()} cores, 1-min load average {load_start:.1f} at the start and
{os.getloadavg()[0]:.1f} at the end: other work on the machine inflates every case), Debian Chromium, {RUNS} warm runs per case.
Warm cases: one `afhttp host`; `afhttp fetch --render always --want {want} --wait idle
--readiness-idle-ms 500` (a whole process per fetch) vs `bench/raw_cdp.py` (also a whole
process: Python start, WebSocket, new tab, navigate, load + 500 ms network quiet, outerHTML,
innerText, full-page screenshot, close) on the same host's `/cdp`, alternating.

| Case | median ms | runs |
| --- | --- | --- |
{rows}

Where an inline cold fetch's time goes (medians of its `trace.timings_ms`; `host_connect`
includes `inline_host_start`):

| Stage | median ms |
| --- | --- |
{stage_rows}

| Target | Measured | Verdict |
| --- | --- | --- |
| warm static article: afhttp / raw CDP ≤ 1.1 | {r_static:.2f} | {verdict(r_static <= 1.1)} |
| warm SPA: afhttp / raw CDP ≤ 1.1 | {r_spa:.2f} | {verdict(r_spa <= 1.1)} |
| inline cold fetch of a small page adds ≤ 300 ms to the browser's own start (launch until it opens a tab over CDP) | {added:.0f} ms | {verdict(added <= 300)} |
| inline cold fetch beyond the browser's start with its first page ready (informational) | {added_ready:.0f} ms | — |
| inline fetches leave no temp dir or lock | {len(leftovers)} left | {verdict(not leftovers)} |
"""
    with open(os.path.join(ROOT, "bench", "summary-browser.md"), "w") as f:
        f.write(summary)
    http_bench.write_doc()
    print(summary)


if __name__ == "__main__":
    main()
