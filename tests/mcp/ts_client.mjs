// Drive `afhttp mcp` over stdio with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk, installed by scripts/test.sh with `npm ci --prefix tests/mcp`).
//
// Usage: node ts_client.mjs AFHTTP_BIN BASE_URL TMPDIR
// Prints one JSON report on stdout with the same keys as stdio_client.py, plus what only this
// client checks over stdio: the SPA rendered by the browser, its screenshot received inline,
// and artifacts read back as resources (`spa`, `resources`). The Rust test (tests/mcp.rs)
// asserts on it. Every call has its own deadline; the caller bounds the run.

import fs from "node:fs";
import path from "node:path";
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
  args: ["mcp", "--text-budget-tokens", "256", "--text-budget-chars", "1024"],
  // The SPA renders in an inline Chromium: as root it runs without its sandbox.
  env: {
    TMPDIR: tmpdir,
    HOME: tmpdir,
    PATH: "/usr/bin:/bin",
    AFHTTP_LOG: "warn",
    AFHTTP_NO_SANDBOX: "1",
  },
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

// The SPA: an empty shell over HTTP, so the browser renders it; its screenshot comes inline.
res = await call(client, "fetch", { url: base + "/spa" });
const spa = res.structuredContent?.result ?? {};
const image = res.content.find((c) => c.type === "image");
const links = res.content.filter((c) => c.type === "resource_link");
report.spa = {
  is_error: res.isError ?? false,
  render: spa.render,
  screenshot_file: spa.screenshot_file,
  content_file: spa.content_file,
  screenshot_line: textOf(res).split("\n").find((l) => l.startsWith("screenshot: ")) ?? null,
  image: image
    ? { mime_type: image.mimeType, data: image.data, data_bytes: Buffer.from(image.data, "base64").length }
    : null,
};
// Artifacts read back by their resource_link URIs: content.md as text, the screenshot as a blob.
report.resources = {};
for (const file of [spa.content_file, spa.screenshot_file]) {
  const link = links.find((l) => file && l.uri.endsWith("/" + path.basename(file)));
  if (!link) continue;
  const r = await client.readResource({ uri: link.uri }, { timeout: STEP_MS });
  const c = r.contents[0] ?? {};
  report.resources[path.basename(file)] = {
    uri: c.uri,
    mime_type: c.mimeType,
    text: c.text ?? null,
    blob_bytes: c.blob ? Buffer.from(c.blob, "base64").length : null,
  };
}

res = await call(client, "health", {});
report.health = res.structuredContent?.result?.status;

await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
