"""Drive `afhttp mcp` over stdio with the official MCP Python SDK (PyPI `mcp`).

Usage: stdio_client.py AFHTTP_BIN BASE_URL TMPDIR
Prints one JSON report on stdout; the Rust test (tests/mcp.rs) asserts on it. Every step
has its own deadline, and the whole run is bounded by the caller.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

STEP = 60  # seconds per MCP call


def g(obj, snake, camel):
    """A field by its SDK 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake, None) if hasattr(obj, snake) else getattr(obj, camel, None)


def first_text(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main(afhttp, base, tmpdir):
    params = StdioServerParameters(
        command=afhttp,
        args=["mcp", "--text-budget-tokens", "256", "--text-budget-chars", "1024"],
        env={"TMPDIR": tmpdir, "PATH": "/usr/bin:/bin", "AFHTTP_LOG": "warn"},
    )
    report = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await asyncio.wait_for(session.initialize(), STEP)
            report["protocol_version"] = str(g(init, "protocol_version", "protocolVersion"))
            report["server_name"] = g(init, "server_info", "serverInfo").name
            tools = await asyncio.wait_for(session.list_tools(), STEP)
            report["tools"] = sorted(t.name for t in tools.tools)
            fetch_tool = next(t for t in tools.tools if t.name == "fetch")
            report["fetch_schema_props"] = sorted(g(fetch_tool, "input_schema", "inputSchema").get("properties", {}))

            res = await asyncio.wait_for(
                session.call_tool("fetch", {"url": base + "/article"}), STEP
            )
            text = first_text(res)
            links = [c for c in res.content if getattr(c, "type", "") == "resource_link"]
            sc = g(res, "structured_content", "structuredContent") or {}
            report["fetch"] = {
                "is_error": g(res, "is_error", "isError"),
                "text_bytes": len(text.encode()),
                "text_has_status": text.startswith("fetch 200 "),
                "text_says_read_on": "read_artifact" in text,
                "kind": sc.get("kind"),
                "status": sc.get("result", {}).get("status"),
                "content_file": sc.get("result", {}).get("content_file"),
                "link_uris": sorted(str(l.uri) for l in links),
                "structured_bytes": len(json.dumps(sc)),
            }
            content_file = report["fetch"]["content_file"]
            whole = open(content_file, encoding="utf-8").read() if content_file else ""
            report["content_md_bytes"] = len(whole.encode())

            # Page through content.md by bytes until the end, and compare with the file.
            pages, offset, got = 0, 0, b""
            while pages < 100:
                r = await asyncio.wait_for(
                    session.call_tool(
                        "read_artifact",
                        {"path": content_file, "offset": offset, "limit": 700},
                    ),
                    STEP,
                )
                facts = g(r, "structured_content", "structuredContent") or {}
                body = first_text(r).split("\n", 1)[1] if "\n" in first_text(r) else ""
                got += body.encode()
                pages += 1
                if g(r, "is_error", "isError") or facts.get("eof", True):
                    break
                offset = facts["next_offset"]
            report["paged"] = {"pages": pages, "equal": got == whole.encode()}

            r = await asyncio.wait_for(
                session.call_tool(
                    "read_artifact",
                    {"path": content_file, "offset": 1, "limit": 2, "unit": "lines"},
                ),
                STEP,
            )
            report["lines"] = g(r, "structured_content", "structuredContent")

            r = await asyncio.wait_for(
                session.call_tool("read_artifact", {"path": "/etc/passwd"}), STEP
            )
            report["outside"] = {
                "is_error": g(r, "is_error", "isError"),
                "code": (g(r, "structured_content", "structuredContent") or {}).get("error", {}).get("code"),
            }

            r = await asyncio.wait_for(
                session.call_tool(
                    "fetch", {"url": "http://afhttp-mcp-test.invalid/", "render": "none"}
                ),
                STEP,
            )
            err = (g(r, "structured_content", "structuredContent") or {}).get("error", {})
            report["dns"] = {
                "is_error": g(r, "is_error", "isError"),
                "code": err.get("code"),
                "retryable": err.get("retryable"),
                "text": first_text(r),
            }

            r = await asyncio.wait_for(
                session.call_tool("fetch", {"url": base + "/static", "header": ["no colon"]}),
                STEP,
            )
            err = (g(r, "structured_content", "structuredContent") or {}).get("error", {})
            report["bad_header"] = {"is_error": g(r, "is_error", "isError"), "code": err.get("code")}

            r = await asyncio.wait_for(
                session.call_tool("fetch", {"url": base + "/static", "bogus": 1}), STEP
            )
            err = (g(r, "structured_content", "structuredContent") or {}).get("error", {})
            report["unknown_field"] = {
                "is_error": g(r, "is_error", "isError"),
                "code": err.get("code"),
                "field": err.get("field"),
            }

            r = await asyncio.wait_for(session.call_tool("health", {}), STEP)
            report["health"] = (g(r, "structured_content", "structuredContent") or {}).get("result", {}).get("status")
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
