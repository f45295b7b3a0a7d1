"""Run a list of MCP steps against `afhttp mcp` over stdio, or a host's `/mcp` over
Streamable HTTP, with the official Python SDK.

Usage: calls.py CONFIG_JSON, where CONFIG_JSON is
  {"afhttp": BIN, "args": [...], "env": {...}, "steps": [STEP, ...]}          (stdio)
  {"url": "http://H:P/mcp", "token": TOKEN, "steps": [STEP, ...]}             (HTTP)
and a STEP is one of
  {"call": TOOL, "args": {...}}
  {"page": {...read_artifact args without offset...}}   (reads on until eof)
  {"read_resource": URI}
  {"list_resources": true}
A string argument "$N.a.b" is replaced by field a.b of step N's structuredContent (or, for a
read_resource step, of its report). Prints one JSON report: {"tools": [...], "steps": [...]};
the Rust tests (tests/mcp*.rs) assert on it. Every call has its own deadline.
"""

import asyncio
import base64
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

STEP = 120  # seconds per MCP call


def g(obj, snake, camel):
    """A field by its SDK 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake, None) if hasattr(obj, snake) else getattr(obj, camel, None)


def resolve(value, done):
    if isinstance(value, str) and value.startswith("$") and "." in value:
        index, *path = value[1:].split(".")
        cur = done[int(index)].get("structured") or {}
        for key in path:
            cur = cur[int(key)] if isinstance(cur, list) else cur.get(key)
        return cur
    if isinstance(value, dict):
        return {k: resolve(v, done) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, done) for v in value]
    return value


def block(c):
    kind = getattr(c, "type", "")
    out = {"type": kind}
    if kind == "text":
        out["bytes"] = len(c.text.encode())
    elif kind == "image":
        out["mime_type"] = g(c, "mime_type", "mimeType")
        out["data_bytes"] = len(base64.b64decode(c.data))
        out["data"] = c.data
    elif kind == "resource_link":
        out["uri"] = str(c.uri)
        out["mime_type"] = g(c, "mime_type", "mimeType")
        out["size"] = c.size
    return out


def report_of(res):
    text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
    return {
        "is_error": bool(g(res, "is_error", "isError")),
        "text": text,
        "text_bytes": len(text.encode()),
        "structured": g(res, "structured_content", "structuredContent"),
        "content": [block(c) for c in res.content],
        "result_bytes": len(res.model_dump_json()),
    }


async def page(session, args):
    offset, pages, bodies, max_text, max_page, last = 0, 0, [], 0, "", None
    while pages < 10_000:
        res = await asyncio.wait_for(
            session.call_tool("read_artifact", dict(args, offset=offset)), STEP
        )
        last = report_of(res)
        if last["is_error"]:
            break
        pages += 1
        if last["text_bytes"] > max_text:
            max_text, max_page = last["text_bytes"], last["text"]
        bodies.append(last["text"].split("\n", 1)[1] if "\n" in last["text"] else "")
        facts = last["structured"] or {}
        if facts.get("eof", True):
            break
        offset = facts["next_offset"]
    return {
        "pages": pages,
        "body": "".join(bodies),
        "max_text_bytes": max_text,
        "max_text": max_page,
        "last": last,
        "structured": (last or {}).get("structured"),
    }


def transport(config):
    if "url" in config:
        headers = {"Authorization": "Bearer " + config["token"]}
        return streamable_http_client(
            config["url"], http_client=create_mcp_http_client(headers=headers)
        )
    params = StdioServerParameters(
        command=config["afhttp"], args=config.get("args", ["mcp"]), env=config.get("env", {})
    )
    return stdio_client(params)


async def main(config):
    report = {"steps": []}
    done = report["steps"]
    async with transport(config) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await asyncio.wait_for(session.initialize(), STEP)
            report["protocol_version"] = str(g(init, "protocol_version", "protocolVersion"))
            tools = await asyncio.wait_for(session.list_tools(), STEP)
            report["tools"] = sorted(t.name for t in tools.tools)
            report["schemas"] = {
                t.name: g(t, "input_schema", "inputSchema") for t in tools.tools
            }
            for step in config["steps"]:
                step = resolve(step, done)
                if "call" in step:
                    try:
                        res = await asyncio.wait_for(
                            session.call_tool(step["call"], step.get("args", {})), STEP
                        )
                        done.append(report_of(res))
                    except Exception as e:  # a protocol error is the answer under test
                        done.append({"is_error": True, "protocol_error": str(e)})
                elif "page" in step:
                    done.append(await page(session, step["page"]))
                elif "read_resource" in step:
                    uri = step["read_resource"]
                    if uri.startswith("/") and step.get("as_uri", True) and (
                        "afhttp-out" in uri or "mcp-out" in uri
                    ):
                        uri = "file://" + uri
                    step["read_resource"] = uri
                    try:
                        res = await asyncio.wait_for(
                            session.read_resource(step["read_resource"]), STEP
                        )
                        contents = []
                        for c in res.contents:
                            text = getattr(c, "text", None)
                            blob = getattr(c, "blob", None)
                            contents.append({
                                "uri": str(c.uri),
                                "mime_type": g(c, "mime_type", "mimeType"),
                                "text": text,
                                "blob_bytes": len(base64.b64decode(blob)) if blob else None,
                            })
                        done.append({"is_error": False, "contents": contents})
                    except Exception as e:  # a protocol error is the answer under test
                        done.append({"is_error": True, "error": str(e)})
                elif "list_resources" in step:
                    res = await asyncio.wait_for(session.list_resources(), STEP)
                    done.append({
                        "is_error": False,
                        "resources": [
                            {"uri": str(r.uri), "name": r.name,
                             "mime_type": g(r, "mime_type", "mimeType")}
                            for r in res.resources
                        ],
                    })
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
