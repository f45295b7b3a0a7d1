#!/usr/bin/env python3
"""MCP benchmark (issue 15): an MCP `fetch` over stdio against a warm host vs the same fetch by
the CLI (`afhttp fetch --endpoint-url`, one process per fetch), alternating, in one run; and
the size in bytes of what each hands the agent (the MCP tool result as JSON vs the CLI's
stdout event).

The MCP client is the official Python SDK (`mcp`); each MCP call is timed from the client's
`call_tool` to its answer, in one long-lived `afhttp mcp` session. Both fetch with
`--render always` (the MCP default want, `body,text,content,content_json` plus the browser
defaults, given to the CLI too so both write the same artifacts).

Usage: python3 bench/mcp_stdio.py   (AFHTTP_BIN picks the binary; default target/release/afhttp;
BENCH_RUNS, default 10). Prints one JSON summary; docs/benchmarks.md records it by hand.
"""
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as http_bench  # noqa: E402
import run_browser  # noqa: E402  (its fixture pages: /small, /spa)

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

BIN = os.environ.get("AFHTTP_BIN", http_bench.BIN)
RUNS = int(os.environ.get("BENCH_RUNS", "10"))
WANT = "body,text,content,content_json,rendered_html,screenshot,network,console,observation"


def cli_fetch(endpoint, url, env):
    t = time.perf_counter()
    p = subprocess.run([BIN, "fetch", url, "--endpoint-url", endpoint, "--render", "always",
                        "--want", WANT], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    elapsed = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"cli fetch failed: {p.stdout[:800]!r}")
    return elapsed, len(p.stdout)


async def main():
    env = run_browser.bench_env()
    scratch = tempfile.mkdtemp(prefix="afhttp-bench-mcp-")
    env["TMPDIR"] = scratch
    load_start = os.getloadavg()[0]
    srv = http_bench.serve()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    host, ready = run_browser.start_host(env, BIN)
    endpoint = ready["endpoint_url"]
    samples = {}
    sizes = {}
    try:
        params = StdioServerParameters(command=BIN, args=["mcp", "--endpoint-url", endpoint], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for path in ["/small", "/spa", "/article"]:
                    url = base + path
                    # Warm both (the host's browser, page caches, the binary).
                    cli_fetch(endpoint, url, env)
                    await session.call_tool("fetch", {"url": url, "render": "always"})
                    for _ in range(RUNS):
                        e, n = cli_fetch(endpoint, url, env)
                        samples.setdefault(f"cli {path}", []).append(e)
                        sizes[f"cli {path}"] = n
                        t = time.perf_counter()
                        res = await session.call_tool("fetch", {"url": url, "render": "always"})
                        samples.setdefault(f"mcp {path}", []).append(time.perf_counter() - t)
                        if res.isError if hasattr(res, "isError") else res.is_error:
                            raise SystemExit(f"mcp fetch failed: {res}")
                        sizes[f"mcp {path}"] = len(res.model_dump_json())
    finally:
        host.terminate()
        host.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    out = {
        "binary": BIN,
        "runs": RUNS,
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
        "median_ms": {k: round(statistics.median(v) * 1000) for k, v in samples.items()},
        "result_bytes": sizes,
    }
    for path in ["/small", "/spa", "/article"]:
        out.setdefault("ratio_mcp_to_cli", {})[path] = round(
            statistics.median(samples[f"mcp {path}"]) / statistics.median(samples[f"cli {path}"]), 2)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
