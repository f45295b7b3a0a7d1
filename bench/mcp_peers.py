#!/usr/bin/env python3
"""MCP web readers side by side on the corpus pages (issue 24): what each hands the model,
in o200k_base tokens, and how much of the page's main text that carries.

Servers, each driven over stdio by the official Python MCP client (`mcp`) in one run, page by
page in turn, against the corpus pages served from 127.0.0.1 (bench/corpus_words.py):
- `afhttp` -- `afhttp mcp`, tool `fetch {url}` (default render auto): the first answer's text
  is counted (what a continuation would add is recorded beside it: the rest of the file its
  cut line pages, from the offset that line gives);
- `baseline` -- the same with --baseline-afhttp (an older binary, for before/after);
- `afhttp-browser` -- `fetch {url, render: always}` (opt in with --servers);
- `fetch` -- the MCP project's reference server `mcp-server-fetch` (PyPI, pinned in
  bench/peers/requirements.txt, in its own venv, with the Readability.js it uses when Node is
  present; started with --allow-private-ips, the only way it reads loopback), read to the end:
  every `start_index` continuation it asks for is followed and all answers are counted.

Tokens: js-tiktoken's bundled o200k_base (bench/tokens.py). Recall: words of 4+ letters of
expected.html found in the text the model read (bench/corpus_words.py). Also checks afhttp's
own count of its answer (`_meta` `afhttp/text_tokens`, what `--text-budget-tokens` counts;
bytes / 4 for an older binary) against the tokenizer.

All of it runs in a private network namespace (bench/netns_world.py, third parties refused),
so nothing leaves loopback even when a fetch escalates to a browser.

Setup: bench/peers_setup.sh (pip + npm, pinned). Usage (root):
  python3 bench/mcp_peers.py ../shared/corpus [--afhttp BIN] [--baseline-afhttp BIN]
      [--servers afhttp,fetch[,afhttp-browser]] [--pages a,b] [--call-timeout-s 90]
Writes bench/summary-mcp-peers.md (docs/benchmarks.md is rebuilt), bench/mcp-peers.csv and
bench/runs/<stamp>-mcp-peers.json.
"""
import argparse
import asyncio
import contextlib
import csv
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus_words as cw  # noqa: E402
import netns_world  # noqa: E402
import tokens as tok  # noqa: E402

ROOT = os.path.dirname(HERE)
DEFAULT_BIN = os.path.join(ROOT, "target", "release", "afhttp")
VENV = os.environ.get("AFHTTP_BENCH_VENV", "/var/tmp/afhttp-bench-peers-venv")
PEERS_JS = os.path.join(HERE, "peers", "browsers")
CHROMIUM = os.environ.get("AFHTTP_BENCH_CHROMIUM", "/usr/bin/chromium")
# name -> (bin, args, (navigate tool, its URL argument, extra args), snapshot tool)
BROWSER_PEERS = {
    "playwright": ("playwright-mcp", ["--headless", "--isolated", "--no-sandbox", "--executable-path", CHROMIUM],
                   ("browser_navigate", "url", {}), ("browser_snapshot", {})),
    "chrome-devtools": ("chrome-devtools-mcp", ["--headless", "--isolated", "--executablePath", CHROMIUM,
                                                "--usageStatistics", "false", "--chromeArg=--no-sandbox"],
                        ("navigate_page", "url", {"type": "url", "pageId": 1}), ("take_snapshot", {"pageId": 1})),
}
CONTINUE_RE = re.compile(r"Call the fetch tool with a start_index of (\d+)")
AFHTTP_CUT_RE = re.compile(r"--- cut at the text budget after \d+ of \d+ bytes; read on with read_artifact (\{.*?\}) ---")


def args_of(argv):
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("corpus")
    a.add_argument("--afhttp", default=DEFAULT_BIN)
    a.add_argument("--baseline-afhttp")
    a.add_argument("--servers", default="afhttp,fetch", help="afhttp, fetch, afhttp-browser, playwright, "
                   "chrome-devtools (baseline is added by --baseline-afhttp)")
    a.add_argument("--afhttp-mcp-arg", action="append", default=[], help="extra argument for `afhttp mcp`")
    a.add_argument("--pages")
    a.add_argument("--call-timeout-s", type=float, default=90.0, help="deadline of one tool call")
    a.add_argument("--no-doc", action="store_true")
    a.add_argument("--report", metavar="RUN_JSON", help="only rewrite the summary from a saved bench/runs/*.json")
    a.add_argument("--result", help=argparse.SUPPRESS)
    opts = a.parse_args(argv)
    opts.afhttp = os.path.abspath(opts.afhttp)
    opts.baseline_afhttp = opts.baseline_afhttp and os.path.abspath(opts.baseline_afhttp)
    return opts


def server_table(opts, env, cwd=None):
    """name -> (command, args, tool-argument builder)."""
    from mcp import StdioServerParameters
    table = {}
    servers = opts.servers.split(",")
    if opts.baseline_afhttp:
        servers.insert(1, "baseline")
    for name in servers:
        if name in ("afhttp", "baseline", "afhttp-browser"):
            binary = opts.baseline_afhttp if name == "baseline" else opts.afhttp
            extra = {"render": "always"} if name == "afhttp-browser" else {}
            table[name] = (StdioServerParameters(command=binary, args=["mcp", *opts.afhttp_mcp_arg], env=env, cwd=cwd),
                           extra)
        elif name in BROWSER_PEERS:
            cmd, args, _, _ = BROWSER_PEERS[name]
            exe = os.path.join(PEERS_JS, "node_modules", ".bin", cmd)
            if not os.path.exists(exe):
                raise SystemExit(f"{exe} is missing: run bench/peers_setup.sh")
            table[name] = (StdioServerParameters(command=exe, args=list(args), env=dict(
                env, CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS="1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1"), cwd=cwd), {})
        elif name == "fetch":
            exe = os.path.join(VENV, "bin", "mcp-server-fetch")
            if not os.path.exists(exe):
                raise SystemExit(f"{exe} is missing: run bench/peers_setup.sh")
            table[name] = (StdioServerParameters(command=exe, args=["--allow-private-ips"], env=env, cwd=cwd), {})
        else:
            raise SystemExit(f"unknown server {name}")
    return table


def texts_of(result):
    """(text the model reads, resource-link lines, images) of a CallToolResult."""
    texts, links, images = [], [], 0
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind == "resource_link":
            links.append(f"{block.name} {block.uri}")
        elif kind == "image":
            images += 1
    return "\n".join(texts), "\n".join(links), images


async def call(session, args, timeout):
    t = time.perf_counter()
    res = await asyncio.wait_for(session.call_tool("fetch", args), timeout)
    return res, round((time.perf_counter() - t) * 1000)


async def afhttp_page(session, url, extra, page, counter, timeout):
    res, ms = await call(session, {"url": url, **extra}, timeout)
    text, links, images = texts_of(res)
    rec = {"wall_ms": ms, "calls": 1, "error": bool(res.is_error)}
    real = counter.count(text)
    # afhttp's own count of the text (o200k_base, tiktoken-rs), reported in _meta since the
    # lean answer; an older binary has none and counted bytes / 4.
    meta = getattr(res, "meta", None) or {}
    own = meta.get("afhttp/text_tokens")
    rec.update(first_chars=len(text), first_bytes=len(text.encode()), first_tokens=real,
               tokens=real, chars=len(text), recall=page.recall(text),
               link_tokens=counter.count(links) if links else 0, images=images,
               estimate=own if own is not None else len(text.encode()) / 4,
               estimator="afhttp _meta (o200k_base, tiktoken-rs)" if own is not None else "not reported: bytes / 4 shown",
               folds=text.count("[folded "),
               url_tokens=real - counter.count(cw.PATHLIKE_RE.sub("", cw.URL_RE.sub("", text))))
    # What reading on would add: the rest of the file the cut line pages, from its offset.
    cut = AFHTTP_CUT_RE.search(text)
    rec["cut"] = bool(cut)
    sc = res.structured_content or {}
    result = (sc.get("result") or {}) if isinstance(sc, dict) else {}
    paged = json.loads(cut.group(1))["path"] if cut else (result.get("lean_file") or result.get("content_file"))
    if paged and os.path.exists(paged):
        whole = cw.read_text(paged)
        rec.update(whole_file=os.path.basename(paged), whole_tokens=counter.count(whole),
                   whole_recall=page.recall(whole))
        if cut:
            offset = json.loads(cut.group(1))["offset"]
            rest = whole.encode()[offset:].decode("utf-8", "replace")
            rec["continuation_tokens"] = counter.count(rest)
            rec["read_all_recall"] = page.recall(text + "\n" + rest)
    return rec


async def fetch_page(session, url, extra, page, counter, timeout):
    answers, calls, wall, start = [], 0, 0, 0
    while calls < 300:
        res, ms = await call(session, {"url": url, **({"start_index": start} if start else {}), **extra}, timeout)
        calls += 1
        wall += ms
        text, _, _ = texts_of(res)
        answers.append(text)
        m = CONTINUE_RE.search(text)
        if res.is_error or not m:
            break
        start = int(m.group(1))
    joined = "\n".join(answers)
    return {"wall_ms": wall, "calls": calls, "error": bool(res.is_error), "first_chars": len(answers[0]),
            "first_tokens": counter.count(answers[0]), "tokens": sum(counter.count(a) for a in answers),
            "chars": sum(len(a) for a in answers), "recall": page.recall(joined),
            "max_answer_chars": max(len(a) for a in answers)}


async def browser_page(session, name, url, page, counter, timeout):
    """Navigate, then take the snapshot (Playwright MCP's navigation links its snapshot as a
    file; chrome-devtools-mcp's has none): both answers are what the model reads."""
    _, _, (nav, arg, extra), (snap, snap_args) = BROWSER_PEERS[name]
    t = time.perf_counter()
    res = await asyncio.wait_for(session.call_tool(nav, {arg: url, **extra}), timeout)
    answers = [texts_of(res)[0]]
    error = bool(res.is_error)
    if not error:
        res = await asyncio.wait_for(session.call_tool(snap, snap_args), timeout)
        answers.append(texts_of(res)[0])
        error = bool(res.is_error)
    joined = "\n".join(answers)
    return {"wall_ms": round((time.perf_counter() - t) * 1000), "calls": len(answers), "error": error,
            "first_chars": len(joined), "first_tokens": counter.count(joined), "tokens": counter.count(joined),
            "chars": len(joined), "recall": page.recall(joined),
            "failure": joined[:200] if error else None}


async def measure(opts):
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client
    pages = cw.load_pages(opts.corpus, opts.pages.split(",") if opts.pages else None)
    world = netns_world.World()
    world.condition("refused")
    srv, base = cw.serve(pages)
    scratch = tempfile.mkdtemp(prefix="afhttp-bench-peers-")
    env = dict(os.environ, AFHTTP_LOG="off", TMPDIR=scratch, XDG_DATA_HOME=scratch, HOME=scratch)
    if os.geteuid() == 0:
        env["AFHTTP_NO_SANDBOX"] = "1"
    counter = tok.Tokenizer()
    table = server_table(opts, env, scratch)
    records = []
    load = {"start": os.getloadavg()}
    async with contextlib.AsyncExitStack() as stack:
        sessions = {}
        errlog = stack.enter_context(open(os.path.join(scratch, "servers.stderr"), "w"))
        for name, (params, _) in table.items():
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions[name] = session
        for i, page in enumerate(pages):
            url = f"{base}/{page.name}/"
            names = list(table) if i % 2 == 0 else list(reversed(table))
            for name in names:
                _, extra = table[name]
                try:
                    if name in BROWSER_PEERS:
                        rec = await browser_page(sessions[name], name, url, page, counter, opts.call_timeout_s)
                    else:
                        run = fetch_page if name == "fetch" else afhttp_page
                        rec = await run(sessions[name], url, extra, page, counter, opts.call_timeout_s)
                except (asyncio.TimeoutError, Exception) as e:  # one page's failure is a record, not the end
                    rec = {"error": True, "failure": f"{type(e).__name__}: {e}"[:300], "tokens": None, "recall": None}
                rec.update(page=page.name, server=name)
                records.append(rec)
                print(f"{name:15} {page.name:40} tokens {rec.get('tokens')} recall "
                      f"{None if rec.get('recall') is None else round(rec['recall'], 3)} calls {rec.get('calls')}",
                      flush=True)
    counter.close()
    srv.shutdown()
    shutil.rmtree(scratch, ignore_errors=True)
    load["end"] = os.getloadavg()
    return {"records": records, "load": load, "servers": list(table), "binaries": {
        "afhttp": opts.afhttp, "baseline": opts.baseline_afhttp}, "mcp_args": opts.afhttp_mcp_arg,
        "fetch_version": fetch_version()}


def fetch_version():
    try:
        with open(os.path.join(os.path.dirname(__file__), "peers", "requirements.txt")) as f:
            return next((line.strip() for line in f if line.startswith("mcp-server-fetch==")), "?")
    except OSError:
        return "?"


def q(values, p):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return statistics.median(v) if p == 0.5 else cw.quantile(v, p)


def fmt(x, digits=0):
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def server_rows(data):
    rows = []
    for name in data["servers"]:
        recs = [r for r in data["records"] if r["server"] == name]
        ok = [r for r in recs if r.get("tokens") is not None]
        per_k = [r["recall"] / (r["tokens"] / 1000) for r in ok if r.get("recall") is not None and r["tokens"]]
        rows.append({
            "server": name, "pages": len(recs), "answered": sum(not r.get("error") for r in recs),
            "tok_med": q([r["tokens"] for r in ok], 0.5), "tok_p90": q([r["tokens"] for r in ok], 0.9),
            "chr_med": q([r["chars"] for r in ok], 0.5), "chr_p90": q([r["chars"] for r in ok], 0.9),
            "share09": sum((r.get("recall") or 0) >= 0.9 for r in recs) / len(recs) if recs else 0,
            "recall_med": q([r.get("recall") for r in ok], 0.5),
            "per_k": q(per_k, 0.5),
            "per_k_total": (sum(r.get("recall") or 0 for r in ok) / (sum(r["tokens"] for r in ok) / 1000))
            if ok and sum(r["tokens"] for r in ok) else None,
            "over50k": sum((r.get("first_chars") or 0) > 50_000 for r in recs),
            "over10kt": sum((r.get("first_tokens") or 0) > 10_000 for r in recs),
            "over25kt": sum((r.get("first_tokens") or 0) > 25_000 for r in recs),
            "calls_max": max((r.get("calls") or 0) for r in recs) if recs else 0,
            "url_share": (sum(r.get("url_tokens") or 0 for r in ok) / sum(r["tokens"] for r in ok))
            if any("url_tokens" in r for r in ok) and sum(r["tokens"] for r in ok) else None,
        })
    return rows


def estimator_lines(data, server):
    """afhttp's own count of its first answers (what --text-budget-tokens counts: o200k_base
    through tiktoken-rs, reported in the result's _meta; bytes / 4 for a binary without it)
    against js-tiktoken's o200k_base."""
    recs = [r for r in data["records"] if r["server"] == server and r.get("first_tokens") and r.get("estimate") is not None]
    if not recs:
        return []
    out = []
    for label in sorted({r.get("estimator", "not reported: bytes / 4 shown") for r in recs}):
        group = [r for r in recs if r.get("estimator", "not reported: bytes / 4 shown") == label]
        ratios = sorted(((r["estimate"] / r["first_tokens"], r) for r in group), key=lambda x: x[0])
        under = [x for x in ratios if x[0] < 1]
        exact = sum(r["estimate"] == r["first_tokens"] for r in group)
        worst_ratio, worst = ratios[0]
        worst_text = (f"{worst['page']}: {worst['estimate']:,.0f} counted vs {worst['first_tokens']:,} real "
                      f"({(1 - worst_ratio) * 100:.0f}% under)") if under else "none"
        out.append(f"| {server} | {label} | {len(group)} | {ratios[0][0]:.2f} | "
                   f"{statistics.median(x[0] for x in ratios):.2f} | {ratios[-1][0]:.2f} | {exact} | {len(under)} | {worst_text} |")
    return out


def table_k(row):
    """Recall per 1,000 tokens as issue 24's table computes it: median recall over median tokens."""
    if not row["tok_med"] or row["recall_med"] is None:
        return None
    return row["recall_med"] / (row["tok_med"] / 1000)


def versus(data, server, peer="fetch"):
    """Pages where `server`'s recall per 1,000 tokens is at least `peer`'s (both answered)."""
    by = {}
    for r in data["records"]:
        if r.get("tokens") and r.get("recall") is not None:
            by.setdefault(r["page"], {})[r["server"]] = r["recall"] / (r["tokens"] / 1000)
    both = [v for v in by.values() if server in v and peer in v]
    return sum(v[server] >= v[peer] for v in both), len(both)


def write_outputs(data, stamp):
    recs = data["records"]
    cols = ["page", "server", "error", "calls", "wall_ms", "tokens", "chars", "recall", "first_tokens", "first_chars",
            "estimate", "estimator", "url_tokens", "folds", "cut", "continuation_tokens", "read_all_recall", "whole_file",
            "whole_tokens", "whole_recall", "link_tokens", "images", "failure"]
    with open(os.path.join(ROOT, "bench", "mcp-peers.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in recs:
            w.writerow([f"{r[c]:.3f}" if isinstance(r.get(c), float) else r.get(c, "") for c in cols])
    rows = server_rows(data)
    table = "\n".join(
        f"| {r['server']} | {r['answered']}/{r['pages']} | {fmt(r['tok_med'])} / {fmt(r['tok_p90'])} | "
        f"{fmt(r['chr_med'])} / {fmt(r['chr_p90'])} | {r['share09'] * 100:.1f}% | {fmt(r['recall_med'], 3)} | "
        f"{fmt(r['per_k'], 2)} ({fmt(r['per_k_total'], 2)}) | {r['over50k']} | {r['over10kt']} / {r['over25kt']} | "
        f"{r['calls_max']} | {'-' if r['url_share'] is None else format(r['url_share'] * 100, '.0f') + '%'} |" for r in rows)
    est = []
    for s in data["servers"]:
        if s in ("afhttp", "baseline", "afhttp-browser"):
            est += estimator_lines(data, s)
    cont = [r for r in recs if r["server"] == "afhttp" and r.get("cut")]
    mine = [r for r in recs if r["server"] == "afhttp"]
    cont_line = (f"{len(cont)} of {len(mine)} first answers of `afhttp` were cut at the budget; reading on (the rest of "
                 f"the file the cut line pages, from its offset) would add a median of "
                 f"{fmt(q([r.get('continuation_tokens') for r in cont], 0.5))} tokens (max "
                 f"{fmt(max((r.get('continuation_tokens') or 0) for r in cont))}), and with it recall ≥ 0.9 is reached on "
                 f"{sum(((r.get('read_all_recall') if r.get('cut') else r.get('recall')) or 0) >= 0.9 for r in mine)} of "
                 f"{len(mine)} pages." if cont else "No first answer of `afhttp` was cut at the budget.")
    folds = [r.get("folds") or 0 for r in mine]
    if any(folds):
        cont_line += (f" {sum(f > 0 for f in folds)} first answers of `afhttp` folded blocks ({sum(folds)} fold lines; "
                      f"each names its lines of content.md).")
    by_name = {r["server"]: r for r in rows}
    if "afhttp" in by_name and "fetch" in by_name:
        a, f = by_name["afhttp"], by_name["fetch"]
        n, of = versus(data, "afhttp")
        met = lambda ok: "met" if ok else "not met"  # noqa: E731
        cont_line += (
            f"\n\nIssue 24's targets for `afhttp`'s first answer against `fetch` read to the end: recall per 1,000 tokens, "
            f"median of pages {fmt(a['per_k'], 2)} vs {fmt(f['per_k'], 2)} ({met((a['per_k'] or 0) >= (f['per_k'] or 0))}), "
            f"all pages pooled {fmt(a['per_k_total'], 2)} vs {fmt(f['per_k_total'], 2)} "
            f"({met((a['per_k_total'] or 0) >= (f['per_k_total'] or 0))}), at least `fetch`'s on {n} of {of} pages; "
            f"pages with recall ≥ 0.9 {a['share09'] * 100:.1f}% vs {f['share09'] * 100:.1f}% "
            f"({met(a['share09'] >= f['share09'])}). As the issue's own table computes it (median recall ÷ median "
            f"tokens × 1,000: its 0.19 is 1 / 5,176 tokens): {fmt(table_k(a), 2)} vs {fmt(table_k(f), 2)} "
            f"({met((table_k(a) or 0) >= (table_k(f) or 0))}).")
    vs = []
    for name in data["servers"]:
        if name != "fetch" and "fetch" in data["servers"]:
            n, of = versus(data, name)
            vs.append(f"`{name}` {n} of {of}")
    if vs:
        cont_line += ("\n\nPages where the recall per 1,000 tokens is at least `fetch`'s (read to the end): "
                      + ", ".join(vs) + ".")
    failures = []
    for name in data["servers"]:
        bad = [r for r in recs if r["server"] == name and r.get("error")]
        if bad:
            first = " ".join((bad[0].get("failure") or "").split())
            at = first.lower().find("dialog")
            first = first if at < 80 else "..." + first[at - 60:]
            failures.append(f"- `{name}`: {len(bad)} page(s) answered with an error, the first on `{bad[0]['page']}`: "
                            f"{first[:160]}...")
    fail_text = ("Errors:\n" + "\n".join(failures)) if failures else "No server answered any page with an error."
    ld = data["load"]
    bins = data["binaries"]
    peers = ""
    if "playwright" in data["servers"] or "chrome-devtools" in data["servers"]:
        peers = ("; `playwright` = `@playwright/mcp` 0.0.83, `browser_navigate` + `browser_snapshot`; `chrome-devtools` = "
                 "`chrome-devtools-mcp` 1.11.0, `navigate_page` + `take_snapshot` (both answers counted; headless, isolated, "
                 "Debian's Chromium; pinned in `bench/peers/browsers`)")
    summary = f"""## MCP web readers on real pages (issue 24)

Measured {stamp} on {platform.node()} ({os.cpu_count()} cores, shared with other sessions: 1-min load average
{ld['start'][0]:.1f} at the start, {ld['end'][0]:.1f} at the end). `bench/mcp_peers.py` on the
{len({r['page'] for r in recs})} pages of `shared/corpus/pages`, served from 127.0.0.1 inside a private network namespace
(third-party hosts refused); every server driven over stdio by the official Python MCP client in the same run, page by page
in turn. `afhttp` = `afhttp mcp` (`{bins['afhttp']}`{' ' + ' '.join(data['mcp_args']) if data['mcp_args'] else ''}), tool `fetch {{url}}`,
first answer only{f"; `baseline` = the same with `{bins['baseline']}`" if bins.get('baseline') else ''}; `afhttp-browser` = `fetch {{url, render: always}}`;
`fetch` = `{data['fetch_version']}` with Readability.js (Node present), read to the end through its `start_index`
continuations (default `max_length` 5,000 characters per answer){peers}. Tokens: o200k_base (js-tiktoken's bundled ranks) of the
text content the model reads (resource links and images not counted; `link_tokens` in the CSV has the links' lines).
Recall: words of 4+ letters of `expected.html` found in that text (`bench/corpus_words.py`).

| server | answered | tokens median / p90 | characters median / p90 | recall ≥ 0.9 | median recall | recall per 1,000 tokens: median of pages (all pages pooled) | first answer > 50,000 chars | first answer > 10,000 / 25,000 tokens | most calls for one page | tokens in URLs (afhttp) |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
{table}

{cont_line}

{fail_text}

afhttp's own count of its first answer (what `--text-budget-tokens` counts; `_meta` `afhttp/text_tokens`, o200k_base
through tiktoken-rs; an older binary reports none, and bytes / 4 is shown for it) against js-tiktoken's o200k_base, per page
(ratio = counted / real; below 1 undercounts):

| server | counter | pages | min ratio | median | max | pages exact | pages undercounted | worst undercount |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
{chr(10).join(est)}

Page by page: `bench/mcp-peers.csv`; everything: `bench/runs/{stamp}-mcp-peers.json`.

Run it (root, for the private namespace; not part of `make bench`: it took {'?' if data.get('elapsed_s') is None else round(data['elapsed_s'] / 60)} min):
`bench/peers_setup.sh` once (pip and npm, pinned: the reference server's venv, Readability.js, js-tiktoken, the browser
peers), then `python3 bench/mcp_peers.py ../shared/corpus [--baseline-afhttp OLD_BINARY]
[--servers afhttp,fetch,afhttp-browser,playwright,chrome-devtools] [--afhttp-mcp-arg=--text-budget-tokens=N]`
(default binary `target/release/afhttp`, default servers `afhttp,fetch`); `--report bench/runs/STAMP-mcp-peers.json`
rewrites this section from a saved run.
"""
    with open(os.path.join(ROOT, "bench", "summary-mcp-peers.md"), "w") as f:
        f.write(summary)
    print(summary)
    import run as http_bench
    http_bench.write_doc()


def main():
    opts = args_of(sys.argv[1:])
    if opts.report:
        with open(opts.report) as f:
            write_outputs(json.load(f), os.path.basename(opts.report).split("-")[0])
        return
    if not netns_world.inside():
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        result = os.path.join(ROOT, "bench", "runs", f"{stamp}-mcp-peers.json")
        os.makedirs(os.path.dirname(result), exist_ok=True)
        code = netns_world.enter([sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--result", result],
                                 deadline_s=3 * 3600)
        if code != 0:
            raise SystemExit(code)
        with open(result) as f:
            data = json.load(f)
        if not opts.no_doc:
            write_outputs(data, stamp)
        return
    started = time.monotonic()
    data = asyncio.run(measure(opts))
    data["elapsed_s"] = round(time.monotonic() - started)
    with open(opts.result, "w") as f:
        json.dump(data, f, indent=1)


if __name__ == "__main__":
    main()
