// Run a list of MCP steps against a host's `/mcp` over Streamable HTTP with the official
// MCP TypeScript SDK (@modelcontextprotocol/sdk, installed by scripts/test.sh with
// `npm ci --prefix tests/mcp`): the TypeScript twin of calls.py, with the same steps and the
// same report, so tests/mcp/http.rs asserts on both alike.
//
// Usage: node http_calls.mjs CONFIG_JSON, CONFIG_JSON = {"url", "token", "steps": [...]}
// (steps as in calls.py). Every call has its own deadline; the caller bounds the run.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

const STEP_MS = 120_000;
const config = JSON.parse(process.argv[2]);
const opts = { timeout: STEP_MS };

function resolve(value, done) {
  if (typeof value === "string" && value.startsWith("$") && value.includes(".")) {
    const [index, ...path] = value.slice(1).split(".");
    let cur = done[Number(index)].structured ?? {};
    for (const key of path) cur = Array.isArray(cur) ? cur[Number(key)] : cur?.[key];
    return cur;
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, done));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, done)]));
  }
  return value;
}

function block(c) {
  const out = { type: c.type };
  if (c.type === "text") out.bytes = Buffer.byteLength(c.text);
  else if (c.type === "image") {
    out.mime_type = c.mimeType;
    out.data_bytes = Buffer.from(c.data, "base64").length;
    out.data = c.data;
  } else if (c.type === "resource_link") {
    out.uri = c.uri;
    out.mime_type = c.mimeType;
    out.size = c.size;
  }
  return out;
}

function reportOf(res) {
  const text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("");
  return {
    is_error: Boolean(res.isError),
    text,
    text_bytes: Buffer.byteLength(text),
    structured: res.structuredContent ?? null,
    content: res.content.map(block),
    result_bytes: JSON.stringify(res).length,
  };
}

async function page(client, args) {
  let offset = 0;
  let pages = 0;
  let maxText = 0;
  let last = null;
  const bodies = [];
  while (pages < 10_000) {
    const res = await client.callTool(
      { name: "read_artifact", arguments: { ...args, offset } },
      undefined,
      opts,
    );
    last = reportOf(res);
    if (last.is_error) break;
    pages += 1;
    maxText = Math.max(maxText, last.text_bytes);
    const nl = last.text.indexOf("\n");
    bodies.push(nl >= 0 ? last.text.slice(nl + 1) : "");
    const facts = last.structured ?? {};
    if (facts.eof !== false) break;
    offset = facts.next_offset;
  }
  return { pages, body: bodies.join(""), max_text_bytes: maxText, last, structured: last?.structured };
}

const transport = new StreamableHTTPClientTransport(new URL(config.url), {
  requestInit: { headers: { Authorization: `Bearer ${config.token}` } },
});
const report = { steps: [], protocol_version_sent: LATEST_PROTOCOL_VERSION };
// The SDK keeps the negotiated version to itself: read it off the initialize answer.
const start = transport.start.bind(transport);
transport.start = async () => {
  const inner = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message?.result?.protocolVersion) report.protocol_version = message.result.protocolVersion;
    inner?.(message, extra);
  };
  return start();
};
const client = new Client({ name: "afhttp-test-ts-http", version: "1" });
await client.connect(transport, opts);
report.server_name = client.getServerVersion()?.name;
const tools = await client.listTools(undefined, opts);
report.tools = tools.tools.map((t) => t.name).sort();
report.schemas = Object.fromEntries(tools.tools.map((t) => [t.name, t.inputSchema]));
const done = report.steps;
for (const raw of config.steps) {
  const step = resolve(raw, done);
  if ("call" in step) {
    try {
      done.push(reportOf(await client.callTool({ name: step.call, arguments: step.args ?? {} }, undefined, opts)));
    } catch (e) {
      done.push({ is_error: true, protocol_error: String(e) });
    }
  } else if ("page" in step) {
    done.push(await page(client, step.page));
  } else if ("read_resource" in step) {
    let uri = step.read_resource;
    if (uri.startsWith("/")) uri = "file://" + uri;
    try {
      const res = await client.readResource({ uri }, opts);
      done.push({
        is_error: false,
        contents: res.contents.map((c) => ({
          uri: c.uri,
          mime_type: c.mimeType,
          text: c.text ?? null,
          blob_bytes: c.blob ? Buffer.from(c.blob, "base64").length : null,
        })),
      });
    } catch (e) {
      done.push({ is_error: true, error: String(e) });
    }
  } else if ("list_resources" in step) {
    const res = await client.listResources(undefined, opts);
    done.push({
      is_error: false,
      resources: res.resources.map((r) => ({ uri: r.uri, name: r.name, mime_type: r.mimeType })),
    });
  }
}
await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
