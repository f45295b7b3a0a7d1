// Drive `afhttp mcp` over stdio with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk, installed by scripts/test.sh with `npm ci --prefix tests/mcp`).
//
// Usage: node ts_client.mjs AFHTTP_BIN BASE_URL TMPDIR
// Prints one JSON report on stdout with the same keys as stdio_client.py; the Rust test
// (tests/mcp.rs) asserts on it. Every call has its own deadline; the caller bounds the run.

import fs from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

const STEP_MS = 60_000;
const [afhttp, base, tmpdir] = process.argv.slice(2);

const textOf = (res) =>
  res.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const errOf = (res) => (res.structuredContent ?? {}).error ?? {};
const call = (client, name, args) =>
  client.callTool({ name, arguments: args }, undefined, { timeout: STEP_MS });

const transport = new StdioClientTransport({
  command: afhttp,
  args: ["mcp", "--text-budget-tokens", "256"],
  env: { TMPDIR: tmpdir, PATH: "/usr/bin:/bin", AFHTTP_LOG: "warn" },
  stderr: "inherit",
});
const client = new Client({ name: "afhttp-test-ts", version: "1" });
const report = { protocol_version_sent: LATEST_PROTOCOL_VERSION };
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
await client.connect(transport, { timeout: STEP_MS });
report.server_name = client.getServerVersion()?.name;

const tools = await client.listTools(undefined, { timeout: STEP_MS });
report.tools = tools.tools.map((t) => t.name).sort();
const fetchTool = tools.tools.find((t) => t.name === "fetch");
report.fetch_schema_props = Object.keys(fetchTool.inputSchema.properties ?? {}).sort();

let res = await call(client, "fetch", { url: base + "/article" });
let text = textOf(res);
const sc = res.structuredContent ?? {};
report.fetch = {
  is_error: res.isError ?? false,
  text_bytes: Buffer.byteLength(text),
  text_has_status: text.startsWith("fetch 200 "),
  text_says_read_on: text.includes("read_artifact"),
  kind: sc.kind,
  status: sc.result?.status,
  content_file: sc.result?.content_file,
  link_uris: res.content.filter((c) => c.type === "resource_link").map((c) => c.uri).sort(),
  structured_bytes: JSON.stringify(sc).length,
};
const contentFile = report.fetch.content_file;
const whole = contentFile ? fs.readFileSync(contentFile) : Buffer.alloc(0);
report.content_md_bytes = whole.length;

// Page through content.md by bytes to its end and compare with the file.
let pages = 0;
let offset = 0;
const got = [];
while (pages < 100) {
  const r = await call(client, "read_artifact", { path: contentFile, offset, limit: 700 });
  const facts = r.structuredContent ?? {};
  const t = textOf(r);
  got.push(Buffer.from(t.includes("\n") ? t.slice(t.indexOf("\n") + 1) : ""));
  pages += 1;
  if (r.isError || facts.eof !== false) break;
  offset = facts.next_offset;
}
report.paged = { pages, equal: Buffer.concat(got).equals(whole) };

res = await call(client, "read_artifact", { path: contentFile, offset: 1, limit: 2, unit: "lines" });
report.lines = res.structuredContent;

res = await call(client, "read_artifact", { path: "/etc/passwd" });
report.outside = { is_error: res.isError ?? false, code: errOf(res).code };

res = await call(client, "fetch", { url: "http://afhttp-mcp-test.invalid/", render: "none" });
report.dns = {
  is_error: res.isError ?? false,
  code: errOf(res).code,
  retryable: errOf(res).retryable,
  text: textOf(res),
};

res = await call(client, "fetch", { url: base + "/static", header: ["no colon"] });
report.bad_header = { is_error: res.isError ?? false, code: errOf(res).code };

res = await call(client, "fetch", { url: base + "/static", bogus: 1 });
report.unknown_field = {
  is_error: res.isError ?? false,
  code: errOf(res).code,
  field: errOf(res).field,
};

res = await call(client, "health", {});
report.health = res.structuredContent?.result?.status;

await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
