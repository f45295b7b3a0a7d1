// Usage: node takeover.mjs <takeover_url> <r,g,b> <text> <screenshot.png> [hold]
//        node takeover.mjs <takeover_url> - (connect only: bench/takeover.py times it)
// A separate, real headless Chromium (Debian's, launched here; nothing is downloaded) opens
// afhttp's takeover URL like a human would: the handoff is traded for the cookie, noVNC
// connects through /takeover/panel/websockify, the panel screenshot must show the host
// browser's colour block, and a click plus keystrokes go into the host page's text field.
// Prints one JSON line. With `hold`, it first prints {"phase":"typed"} and keeps the panel
// connected until its stdin closes (the agent uses CDP meanwhile: multi-attach), then
// reports whether noVNC stayed connected throughout.
import { chromium } from "playwright-core";

const [url, rgb, text, shot, hold] = process.argv.slice(2);
const [r, g, b] = rgb === "-" ? [0, 0, 0] : rgb.split(",").map(Number);
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
});
const out = { ok: false };
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(60000);
  const t0 = Date.now();
  const response = await page.goto(url, { waitUntil: "load" });
  out.status = response.status();
  out.final_url = page.url();
  await page.waitForSelector("html.noVNC_connected", { timeout: 60000 });
  out.connect_ms = Date.now() - t0;
  const cookies = await context.cookies();
  out.cookie = cookies.find((c) => c.name === "afhttp_takeover") ?? null;
  if (rgb !== "-") await checkAndType(page);
  out.ok = true;
} catch (e) {
  out.error = String(e && e.stack ? e.stack : e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));

// The panel shows the host page's block, and a click plus keystrokes reach its field.
async function checkAndType(page) {
  const t0 = Date.now();

  // Count pixels of the block's colour in a real screenshot of the panel (decoded by the
  // page itself), polling until the framebuffer has arrived.
  const fraction = async () => {
    const png = (await page.screenshot()).toString("base64");
    return page.evaluate(
      async ({ png, r, g, b }) => {
        const img = new Image();
        img.src = `data:image/png;base64,${png}`;
        await img.decode();
        const c = document.createElement("canvas");
        c.width = img.width;
        c.height = img.height;
        const ctx = c.getContext("2d");
        ctx.drawImage(img, 0, 0);
        const d = ctx.getImageData(0, 0, c.width, c.height).data;
        let hits = 0;
        for (let i = 0; i < d.length; i += 4) {
          if (Math.abs(d[i] - r) < 40 && Math.abs(d[i + 1] - g) < 40 && Math.abs(d[i + 2] - b) < 40) hits++;
        }
        return hits / (d.length / 4);
      },
      { png, r, g, b },
    );
  };
  const deadline = Date.now() + 30000;
  out.colour_fraction = await fraction();
  while (out.colour_fraction < 0.1 && Date.now() < deadline) {
    await page.waitForTimeout(250);
    out.colour_fraction = await fraction();
  }
  out.colour_ms = Date.now() - t0;
  await page.screenshot({ path: shot });

  // Click into the lower part of the remote screen (the host page's input), then type.
  const canvas = await page.waitForSelector("#noVNC_container canvas");
  const box = await canvas.boundingBox();
  out.canvas = box;
  await page.mouse.click(box.x + box.width * 0.5, box.y + box.height * 0.78);
  await page.waitForTimeout(300);
  await page.keyboard.type(text, { delay: 40 });
  await page.waitForTimeout(500);
  if (hold === "hold") {
    console.log(JSON.stringify({ phase: "typed" }));
    process.stdin.resume();
    await new Promise((resolve) => process.stdin.on("end", resolve));
    out.still_connected = await page.evaluate(() =>
      document.documentElement.classList.contains("noVNC_connected"),
    );
  }
}
