#!/usr/bin/env python3
"""Fleet benchmark on a running Swarm stack from deploy/swarm/stack.sh (see docs/benchmarks.md).

1. Throughput: 24 ephemeral fetches (`--render always`, 6 at a time) over 3 replicas vs the
   same 24 over 1 replica, in one run, with CPU per fetch (the replicas' containers' cgroup
   CPU time plus the drivers' own).
2. Failover cost: an ephemeral fetch whose first member answers the probe as healthy and idle
   but refuses CDP (a member that died after the probe), vs the same fetch on the live member
   alone: the extra wall time. Target: <= 1 s beyond the member connect timeout.

Environment: BENCH_FLEET3 (3-member spec), BENCH_FLEET1 (1-member spec), BENCH_TOKEN,
BENCH_URL (a page the containers reach), DOCKER_HOST (the stack's engine), BENCH_STACK (stack
name, default afhttp-bench), BENCH_OUT (directory for raw.csv and summary.md).
"""
import concurrent.futures
import http.server
import json
import os
import resource
import statistics
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("AFHTTP_BIN", os.path.join(ROOT, "target", "release", "afhttp"))
TOKEN = os.environ["BENCH_TOKEN"]
URL = os.environ["BENCH_URL"]
STACK = os.environ.get("BENCH_STACK", "afhttp-bench")
FETCHES, PARALLEL, FAILOVER_ROUNDS = 24, 6, 5


def fetch(fleet):
    t = time.monotonic()
    out = subprocess.run(
        [BIN, "fetch", URL, "--fleet", fleet, "--token-secret", TOKEN, "--render", "always",
         "--want", "body", "--no-cookie-jar", "--timeout-ms", "60000"],
        capture_output=True, text=True, timeout=120)
    ev = json.loads(out.stdout)
    assert ev["kind"] == "result", out.stdout
    return time.monotonic() - t, ev["trace"]["fleet"]


def container_cpu_s():
    """CPU seconds of the stack's containers (cgroup v2 or v1, cgroupfs or systemd layout)."""
    ids = subprocess.run(
        ["docker", "ps", "-q", "--no-trunc", "--filter", f"label=com.docker.stack.namespace={STACK}"],
        capture_output=True, text=True, check=True).stdout.split()
    total = 0.0
    for cid in ids:
        for path in (f"/sys/fs/cgroup/docker/{cid}/cpu.stat",
                     f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/cpu.stat"):
            if os.path.exists(path):
                with open(path) as f:
                    stat = dict(line.split() for line in f)
                total += int(stat["usage_usec"]) / 1e6
                break
        else:
            for path in (f"/sys/fs/cgroup/cpuacct/docker/{cid}/cpuacct.usage",):
                if os.path.exists(path):
                    total += int(open(path).read()) / 1e9
    return total


def driver_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def round_of(fleet):
    c0, d0, t0 = container_cpu_s(), driver_cpu_s(), time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        results = list(pool.map(lambda _: fetch(fleet), range(FETCHES)))
    wall = time.monotonic() - t0
    members = sorted({r[1]["member"] for r in results})
    return {
        "wall_s": wall,
        "cpu_ms_per_fetch": (container_cpu_s() - c0 + driver_cpu_s() - d0) * 1000 / FETCHES,
        "members": members,
    }


class Refusing(http.server.BaseHTTPRequestHandler):
    """Healthy and idle to the probe, 503 to CDP."""

    def do_GET(self):
        if self.path.startswith("/health"):
            body = b'{"code":"health","status":"ok","version":"0","tabs_active":0}'
            code = 200
        elif self.path.startswith("/capabilities"):
            body, code = b'{"code":"capabilities","limits":{"clients_in_use":0}}', 200
        else:
            body, code = b'{"code":"cdp_unavailable"}', 503
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    fleet3, fleet1 = os.environ["BENCH_FLEET3"], os.environ["BENCH_FLEET1"]
    fetch(fleet3)  # warm every path once
    one, three = round_of(fleet1), round_of(fleet3)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    dead = f"dead=ws://127.0.0.1:{srv.server_address[1]}"
    plain, failed_over = [], []
    for _ in range(FAILOVER_ROUNDS):
        plain.append(fetch(fleet1)[0])
        wall, trace = fetch(f"{dead},{fleet1}")
        assert len(trace["attempts"]) == 2 and trace["attempts"][0]["member"] == "dead", trace
        failed_over.append(wall)
    extra_ms = (statistics.median(failed_over) - statistics.median(plain)) * 1000
    out = os.environ.get("BENCH_OUT", os.path.join(ROOT, "bench", "runs", "fleet"))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "raw.csv"), "w") as f:
        f.write("case,wall_s,cpu_ms_per_fetch,members\n")
        for name, r in (("1 replica", one), ("3 replicas", three)):
            f.write(f"{name},{r['wall_s']:.2f},{r['cpu_ms_per_fetch']:.0f},{'|'.join(r['members'])}\n")
        for a, b in zip(plain, failed_over):
            f.write(f"failover,{b:.3f},,plain {a:.3f}\n")
    summary = (
        f"| case | 24 fetches, 6 at a time | fetches/s | CPU per fetch | members used |\n"
        f"| --- | --- | --- | --- | --- |\n"
        f"| 1 replica | {one['wall_s']:.1f} s | {FETCHES / one['wall_s']:.2f} | {one['cpu_ms_per_fetch']:.0f} ms | {len(one['members'])} |\n"
        f"| 3 replicas | {three['wall_s']:.1f} s | {FETCHES / three['wall_s']:.2f} | {three['cpu_ms_per_fetch']:.0f} ms | {len(three['members'])} |\n\n"
        f"Speed-up {one['wall_s'] / three['wall_s']:.2f}x. Failover (first member refuses CDP): "
        f"median {statistics.median(failed_over) * 1000:.0f} ms vs {statistics.median(plain) * 1000:.0f} ms "
        f"on the live member alone, {extra_ms:.0f} ms extra (target <= 1000 ms beyond the 2000 ms "
        f"connect timeout).\n")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(summary)
    print(summary)


if __name__ == "__main__":
    main()
