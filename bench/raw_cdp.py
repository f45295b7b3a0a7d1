#!/usr/bin/env python3
"""The browser-path baseline: a minimal raw-CDP client doing what `afhttp fetch` does on a
warm host, and nothing else — new tab, navigate, wait for load plus a network-quiet window,
outerHTML + innerText + full-page screenshot, close the tab.

Usage: raw_cdp.py <ws://host:port/cdp> <url> <out-dir> [quiet_ms|load]

`load` is the floor with no quiet window (issue 26): the same capture right after the load
event, whatever is still in flight.
"""
import asyncio
import base64
import json
import os
import sys

import websockets


async def main(ws_url, url, out, quiet_ms):
    async with websockets.connect(ws_url, max_size=None) as ws:
        next_id = 0
        pending = {}
        events = asyncio.Queue()

        async def reader():
            async for raw in ws:
                msg = json.loads(raw)
                if "id" in msg and msg["id"] in pending:
                    pending.pop(msg["id"]).set_result(msg)
                elif "method" in msg:
                    await events.put(msg)

        task = asyncio.create_task(reader())

        async def call(method, params=None, session=None):
            nonlocal next_id
            next_id += 1
            fut = asyncio.get_running_loop().create_future()
            pending[next_id] = fut
            frame = {"id": next_id, "method": method, "params": params or {}}
            if session:
                frame["sessionId"] = session
            await ws.send(json.dumps(frame))
            msg = await fut
            if "error" in msg:
                raise RuntimeError(msg["error"])
            return msg.get("result", {})

        target = (await call("Target.createTarget", {"url": "about:blank"}))["targetId"]
        session = (await call("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
        await call("Page.enable", session=session)
        await call("Network.enable", session=session)
        await call("Page.navigate", {"url": url}, session=session)
        inflight, loaded = set(), False
        loop = asyncio.get_running_loop()
        quiet_since = loop.time()
        while True:
            timeout = quiet_ms / 1000 - (loop.time() - quiet_since) if quiet_ms is not None and loaded and not inflight else 10
            try:
                ev = await asyncio.wait_for(events.get(), timeout=max(timeout, 0.001))
            except asyncio.TimeoutError:
                if loaded and not inflight:
                    break
                continue
            if ev.get("sessionId") != session:
                continue
            m, p = ev["method"], ev.get("params", {})
            if m == "Page.loadEventFired":
                loaded = True
                if quiet_ms is None:
                    break
            elif m == "Network.requestWillBeSent":
                inflight.add(p["requestId"])
            elif m in ("Network.loadingFinished", "Network.loadingFailed"):
                inflight.discard(p["requestId"])
            else:
                continue
            quiet_since = loop.time()
        html = await call("Runtime.evaluate", {"expression": "document.documentElement.outerHTML", "returnByValue": True}, session)
        text = await call("Runtime.evaluate", {"expression": "document.body.innerText", "returnByValue": True}, session)
        metrics = await call("Page.getLayoutMetrics", session=session)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        shot = await call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                      "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}}, session)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "rendered.html"), "w") as f:
            f.write(html["result"]["value"])
        with open(os.path.join(out, "text.txt"), "w") as f:
            f.write(text["result"]["value"])
        with open(os.path.join(out, "page.png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        await call("Target.closeTarget", {"targetId": target})
        task.cancel()


if __name__ == "__main__":
    quiet = sys.argv[4] if len(sys.argv) > 4 else "500"
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], None if quiet == "load" else int(quiet)))
