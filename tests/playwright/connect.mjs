// Usage: node connect.mjs <http://host:port> <token> <url-to-open>
// Attaches through afhttp's /json/version discovery with a bearer header, opens a page,
// reads its title, and prints one JSON line. Playwright launches nothing: it only connects.
import { chromium } from "playwright-core";

const [endpoint, token, target] = process.argv.slice(2);
const browser = await chromium.connectOverCDP(endpoint, {
  headers: { Authorization: `Bearer ${token}` },
  timeout: 20000,
});
const context = browser.contexts()[0] ?? (await browser.newContext());
const page = await context.newPage();
await page.goto(target, { waitUntil: "load" });
const title = await page.title();
const version = browser.version();
await page.close();
await browser.close();
console.log(JSON.stringify({ ok: true, title, version }));
