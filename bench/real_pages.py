#!/usr/bin/env python3
"""Real pages, complete (issue 22): the corpus pages through the browser path while their
third parties stall or are refused.

Serves each page's source.html from 127.0.0.1 (at /NAME/) and fetches it with
`--render always` (default `--want`) through a warm `afhttp host` and through the inline
browser, under two network conditions (see bench/netns_world.py: every name but localhost
resolves to a listener that accepts and never answers -- stalled -- or to an address where
connections are refused at once), and once with `--render none` (the plain-HTTP path, the
reference). Per page: outcome, wall time, `trace.timings_ms`, warning codes, and the
main-content word recall of text.txt against expected.html (bench/corpus_words.py).

With --baseline-afhttp, a second binary runs the same fetches in the same run, alternating
page by page, each with its own warm host.

Usage (root; runs itself inside a private network namespace):
  python3 bench/real_pages.py ../shared/corpus [--afhttp BIN] [--baseline-afhttp BIN]
      [--conditions stalled,refused] [--modes host,inline] [--pages a,b] [--fetch-timeout-s 60]
Writes bench/summary-real-pages.md (and rebuilds docs/benchmarks.md from the summaries),
bench/real-pages.csv (page by page) and bench/runs/<stamp>-real-pages.json (everything).
"""
import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus_words as cw  # noqa: E402
import netns_world  # noqa: E402

ROOT = os.path.dirname(HERE)
DEFAULT_BIN = os.path.join(ROOT, "target", "release", "afhttp")


def args_of(argv):
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("corpus", help="corpus directory (holding pages/, or pages/ itself)")
    a.add_argument("--afhttp", default=DEFAULT_BIN, help="the binary measured (default target/release/afhttp)")
    a.add_argument("--baseline-afhttp", help="a second binary measured in the same run, alternating")
    a.add_argument("--conditions", default="stalled,refused")
    a.add_argument("--modes", default="host,inline", help="host (warm afhttp host), inline (throwaway browser)")
    a.add_argument("--baseline-modes", help="the modes the baseline binary runs (default: --modes), e.g. host "
                   "to skip its inline fetches when their numbers are known")
    a.add_argument("--pages", help="comma-separated page names (default: all)")
    a.add_argument("--fetch-timeout-s", type=float, default=60.0, help="deadline of one fetch process")
    a.add_argument("--budget-ms", type=int, default=5000, help="the readiness budget in force (for 'over budget')")
    a.add_argument("--reserve-ms", type=int, default=7500, help="the capture reserve in force (a quarter of --timeout-ms)")
    a.add_argument("--fetch-arg", action="append", default=[], help="extra argument for every browser fetch")
    a.add_argument("--no-doc", action="store_true", help="do not write bench/summary-real-pages.md / docs")
    a.add_argument("--report", metavar="RUN_JSON", help="only rewrite the summary from a saved bench/runs/*.json")
    a.add_argument("--events", metavar="DIR", help="also keep each fetch's JSON event in DIR (for traces)")
    a.add_argument("--result", help=argparse.SUPPRESS)  # set by the outer run for the one inside
    opts = a.parse_args(argv)
    opts.afhttp = os.path.abspath(opts.afhttp)
    opts.baseline_afhttp = opts.baseline_afhttp and os.path.abspath(opts.baseline_afhttp)
    return opts


def bench_env():
    env = dict(os.environ)
    if os.geteuid() == 0:
        env["AFHTTP_NO_SANDBOX"] = "1"
    env["AFHTTP_LOG"] = "off"
    return env


def run_fetch(argv, env, deadline):
    """One fetch process, killed (its whole group) at `deadline` s. Returns a record."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate(timeout=30)
        return {"outcome": "killed_at_deadline", "wall_ms": round((time.perf_counter() - t) * 1000)}
    wall = round((time.perf_counter() - t) * 1000)
    lines = out.decode("utf-8", "replace").strip().splitlines()
    try:
        event = json.loads(lines[-1])
    except (IndexError, ValueError):
        return {"outcome": f"no_event(rc={p.returncode})", "wall_ms": wall, "stderr": err.decode()[-400:]}
    trace = event.get("trace") or {}
    res = event.get("result") or {}
    cuts = (trace.get("readiness") or {}).get("cuts") or {}
    rec = {"wall_ms": wall, "timings_ms": trace.get("timings_ms") or {},
           "ended_by": (trace.get("readiness") or {}).get("ended_by"),
           "text_source": trace.get("text_source") or (trace.get("readiness") or {}).get("text_source"),
           "cut_rounds": len(cuts.get("rounds") or []), "remembered": len(cuts.get("remembered") or []),
           "event": event}
    if event.get("kind") == "error" or "error" in event:
        e = event.get("error") or {}
        rec["outcome"] = "error:" + str(e.get("code") or "unknown")
        return rec
    rec["outcome"] = "ok"
    rec["warnings"] = sorted({w.get("code", "?") if isinstance(w, dict) else str(w) for w in res.get("warnings") or []})
    rec["text_file"] = res.get("text_file")
    rec["render"] = res.get("render")
    return rec


def score(rec, page, http_words=None):
    """Adds text size, word count, recall and the empty / near-empty flags to `rec`."""
    text = cw.read_text(rec.get("text_file") or "") if rec.get("outcome") == "ok" else ""
    got = cw.words(text)
    n = sum(got.values())
    rec["text_bytes"] = len(text.encode())
    rec["words"] = n
    rec["recall"] = None if rec.get("outcome") != "ok" else page.recall(text)
    rec["empty"] = n == 0
    rec["near_empty"] = n > 0 and http_words is not None and n < max(20, 0.1 * http_words)
    return rec


class Binary:
    """One afhttp binary under test, with its warm host for the current condition."""

    def __init__(self, label, path, env):
        self.label, self.path, self.env = label, path, env
        self.host = None
        self.endpoint = None

    def start_host(self):
        self.host = subprocess.Popen([self.path, "host", "--listen", "tcp:127.0.0.1:0"], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=self.env, start_new_session=True)
        line = self.host.stdout.readline()
        self.endpoint = json.loads(line)["result"]["endpoint_url"]

    def stop_host(self):
        if self.host:
            self.host.terminate()
            try:
                self.host.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.host.pid, signal.SIGKILL)
                self.host.wait(timeout=30)
        self.host = None


def summarize(rows, pages_http):
    """Summary numbers of one (binary, condition, mode) list of records."""
    walls = [r["wall_ms"] for r in rows]
    http_ok = [r for r in rows if (pages_http.get(r["page"]) or 0) >= 0.9]
    hist = {}
    for r in rows:
        for w in r.get("warnings") or []:
            hist[w] = hist.get(w, 0) + 1
    return {
        "pages": len(rows),
        "ok": sum(r["outcome"] == "ok" for r in rows),
        "median_ms": round(statistics.median(walls)) if walls else None,
        "p90_ms": cw.quantile(walls, 0.9),
        "max_ms": max(walls) if walls else None,
        "recall_ge_09": sum((r.get("recall") or 0) >= 0.9 for r in rows),
        "http_ge_09": len(http_ok),
        "both_ge_09": sum((r.get("recall") or 0) >= 0.9 for r in http_ok),
        "median_recall": statistics.median([r.get("recall") or 0 for r in rows]) if rows else None,
        "empty": sum(r.get("empty", False) for r in rows),
        "served_html": sum(r.get("text_source") == "served_html" for r in rows),
        "near_empty": sum(r.get("near_empty", False) for r in rows),
        "warnings": dict(sorted(hist.items(), key=lambda kv: -kv[1])),
    }


def measure(opts):
    pages = cw.load_pages(opts.corpus, opts.pages.split(",") if opts.pages else None)
    env = bench_env()
    world = netns_world.World()
    srv, base = cw.serve(pages)
    scratch = tempfile.mkdtemp(prefix="afhttp-bench-real-")
    env["TMPDIR"] = scratch
    binaries = [Binary("afhttp", opts.afhttp, env)]
    if opts.baseline_afhttp:
        binaries.append(Binary("baseline", opts.baseline_afhttp, env))
    n = [0]

    def out():
        n[0] += 1
        return os.path.join(scratch, str(n[0]))

    records = []
    load = {"start": os.getloadavg()}
    # The reference: the plain-HTTP path (no third party is fetched), once per binary.
    world.condition("stalled")
    http_recall, http_words = {}, {}
    for page in pages:
        for b in binaries:
            # The HTTP path's default --want is the body alone: ask for its text projection.
            rec = run_fetch([b.path, "fetch", f"{base}/{page.name}/", "--render", "none", "--want", "body,text",
                             "--out", out()],
                            b.env, opts.fetch_timeout_s)
            rec.pop("event", None)
            score(rec, page)
            rec.update(page=page.name, binary=b.label, condition="-", mode="http")
            records.append(rec)
            if b is binaries[0]:
                http_recall[page.name] = rec["recall"]
                http_words[page.name] = rec["words"]
    for condition in [c for c in opts.conditions.split(",") if c]:
        world.condition(condition)
        for mode in [m for m in opts.modes.split(",") if m]:
            runners = [b for b in binaries if b.label != "baseline" or mode in (opts.baseline_modes or opts.modes).split(",")]
            if mode == "host":
                for b in runners:
                    b.start_host()
                    # Warm: the host's browser, the binary, the page server. Not a corpus page:
                    # its third parties would be cut (and remembered by the host) before it
                    # is measured.
                    run_fetch([b.path, "fetch", f"{base}/", "--endpoint-url", b.endpoint,
                               "--render", "always", "--out", out()], b.env, opts.fetch_timeout_s)
            for i, page in enumerate(pages):
                order = runners if i % 2 == 0 else list(reversed(runners))
                for b in order:
                    argv = [b.path, "fetch", f"{base}/{page.name}/", "--render", "always", "--out", out(),
                            *opts.fetch_arg]
                    if mode == "host":
                        argv += ["--endpoint-url", b.endpoint]
                    rec = run_fetch(argv, b.env, opts.fetch_timeout_s)
                    event = rec.pop("event", None)
                    if opts.events and event is not None:
                        os.makedirs(opts.events, exist_ok=True)
                        stem = os.path.join(opts.events, f"{condition}-{mode}-{b.label}-{page.name}")
                        with open(stem + ".json", "w") as f:
                            json.dump(event, f)
                        net = (event.get("result") or {}).get("network_file")
                        if net and os.path.exists(net):
                            shutil.copy(net, stem + ".network.json")
                    score(rec, page, http_words.get(page.name))
                    rec.update(page=page.name, binary=b.label, condition=condition, mode=mode)
                    records.append(rec)
                    print(f"{condition:8} {mode:6} {b.label:8} {page.name:40} {rec['outcome']:20} "
                          f"{rec['wall_ms']:6} ms recall {rec.get('recall') if rec.get('recall') is None else round(rec['recall'], 3)}",
                          flush=True)
                    shutil.rmtree(argv[argv.index("--out") + 1], ignore_errors=True)
            for b in binaries:
                b.stop_host()
    srv.shutdown()
    shutil.rmtree(scratch, ignore_errors=True)
    load["end"] = os.getloadavg()
    return records, http_recall, load


def main():
    opts = args_of(sys.argv[1:])
    if opts.report:
        with open(opts.report) as f:
            write_outputs(json.load(f), opts, os.path.basename(opts.report).split("-")[0])
        return
    if not netns_world.inside():
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        result = os.path.join(ROOT, "bench", "runs", f"{stamp}-real-pages.json")
        os.makedirs(os.path.dirname(result), exist_ok=True)
        code = netns_world.enter([sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--result", result],
                                 deadline_s=4 * 3600)
        if code != 0:
            raise SystemExit(code)
        with open(result) as f:
            data = json.load(f)
        if not opts.no_doc:
            write_outputs(data, opts, stamp)
        return
    started = time.monotonic()
    records, http_recall, load = measure(opts)
    data = {"elapsed_s": round(time.monotonic() - started), "records": records, "http_recall": http_recall, "load": load, "binaries": {
        "afhttp": opts.afhttp, "baseline": opts.baseline_afhttp}, "budget_ms": opts.budget_ms,
        "reserve_ms": opts.reserve_ms, "fetch_args": opts.fetch_arg}
    with open(opts.result, "w") as f:
        json.dump(data, f, indent=1)


def fmt_min(seconds):
    return "?" if seconds is None else f"{seconds / 60:.0f} min"


def write_outputs(data, opts, stamp):
    records, http_recall = data["records"], data["http_recall"]
    limit = data["budget_ms"] + data["reserve_ms"]
    with open(os.path.join(ROOT, "bench", "real-pages.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["page", "binary", "condition", "mode", "outcome", "wall_ms", "recall", "http_recall", "words",
                    "text_bytes", "warnings", "ended_by", "text_source", "timings_ms"])
        for r in records:
            w.writerow([r["page"], r["binary"], r["condition"], r["mode"], r["outcome"], r["wall_ms"],
                        "" if r.get("recall") is None else f"{r['recall']:.3f}",
                        "" if http_recall.get(r["page"]) is None else f"{http_recall[r['page']]:.3f}",
                        r.get("words"), r.get("text_bytes"), " ".join(r.get("warnings") or []),
                        r.get("ended_by") or "", r.get("text_source") or "", json.dumps(r.get("timings_ms") or {})])
    groups = {}
    for r in records:
        groups.setdefault((r["binary"], r["condition"], r["mode"]), []).append(r)
    lines = []
    for (binary, condition, mode), rows in sorted(groups.items(), key=lambda kv: (kv[0][2] != "http", kv[0])):
        s = summarize(rows, http_recall)
        over = sum(r["wall_ms"] > limit for r in rows)
        lines.append(f"| {binary} | {condition} | {mode} | {s['ok']}/{s['pages']} | {s['median_ms']} | {s['p90_ms']} | "
                     f"{s['max_ms']} | {s['recall_ge_09']} | {s['both_ge_09']}/{s['http_ge_09']} | {over} | "
                     f"{s['empty']} / {s['near_empty']} | {s['served_html']} |")
    hist_lines, low_lines, target_lines = [], [], []
    for (binary, condition, mode), rows in sorted(groups.items()):
        if mode == "http":
            continue
        s = summarize(rows, http_recall)
        low = sorted(r["page"] for r in rows if (r.get("recall") or 0) < 0.9)
        low_lines.append(f"- {binary}, {condition}, {mode} ({len(low)}): {', '.join(low) or 'none'}")
        if mode == "host":
            over = sum(r["wall_ms"] > limit for r in rows)
            share = s["recall_ge_09"] / s["pages"]
            verdict = lambda ok: "met" if ok else "NOT met"  # noqa: E731
            target_lines.append(
                f"| {binary} | {condition} | {share * 100:.0f}% ({verdict(share >= 0.97)}) | "
                f"{s['both_ge_09']}/{s['http_ge_09']} ({verdict(s['both_ge_09'] == s['http_ge_09'])}) | "
                f"{s['median_ms']} ({verdict(s['median_ms'] <= 1000)}) | {s['p90_ms']} ({verdict(s['p90_ms'] <= 2000)}) | "
                f"{over} ({verdict(over == 0)}) |")
        hist = ", ".join(f"`{k}` {v}" for k, v in s["warnings"].items()) or "none"
        hist_lines.append(f"- {binary}, {condition}, {mode}: {hist}")
    ld = data["load"]
    bins = data["binaries"]
    pages_n = len(http_recall)
    summary = f"""## Real pages, third parties stalled or refused (issue 22)

Measured {stamp} on {platform.node()} ({os.cpu_count()} cores, shared with other sessions: 1-min load average
{ld['start'][0]:.1f} at the start, {ld['end'][0]:.1f} at the end -- wall times are inflated by that load).
`bench/real_pages.py` on the {pages_n} pages of `shared/corpus/pages`, served from 127.0.0.1; network: {netns_world.DESCRIBE}.
Each page with `--render always` (default `--want`{', plus ' + ' '.join(data['fetch_args']) if data['fetch_args'] else ''}) through a warm `afhttp host`
(`host`) and through the inline browser (`inline`, browser start included), and with `--render none --want body,text` (`http`, the reference;
no third party is fetched). Binary `afhttp` = `{bins['afhttp']}`{f"; `baseline` = `{bins['baseline']}`, " + (data.get('parallel_runs') or 'the same fetches alternating page by page') if bins.get('baseline') else ''}.
Recall: words of 4+ letters of `expected.html` found in `text.txt` (case-folded multiset, URLs removed; `bench/corpus_words.py`).
"Over" = wall time over the readiness budget + capture reserve ({data['budget_ms']} + {data['reserve_ms']} ms). Empty = no word in
`text.txt`; near-empty = fewer than max(20, 10% of the HTTP path's words).

| binary | condition | mode | results | median ms | p90 ms | max ms | recall ≥ 0.9 | ≥ 0.9 where HTTP ≥ 0.9 | over | empty / near-empty | text from served HTML |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
{chr(10).join(lines)}

Issue 22's targets on the warm host (recall ≥ 0.9 on ≥ 97% of pages and wherever the HTTP path reaches it; median ≤ 1,000 ms,
p90 ≤ 2,000 ms; no page over the budget + reserve):

| binary | condition | recall ≥ 0.9 | where HTTP ≥ 0.9 | median ms | p90 ms | over |
| --- | --- | --- | --- | --- | --- | --- |
{chr(10).join(target_lines)}

Pages below recall 0.9:
{chr(10).join(low_lines)}

Warnings (pages carrying each code):
{chr(10).join(hist_lines)}
{chr(10) + 'Note: ' + data['http_reference_rerun'] + '.' + chr(10) if data.get('http_reference_rerun') else ''}
Page by page: `bench/real-pages.csv` (outcome, wall, recall beside the HTTP path's, warnings, `trace.timings_ms`);
everything: `bench/runs/{stamp}-real-pages.json`.

Run it (root and iproute2, for the private namespace; not part of `make bench`: it took {fmt_min(data.get('elapsed_s'))}):
`python3 bench/real_pages.py ../shared/corpus [--baseline-afhttp OLD_BINARY]` (default binary `target/release/afhttp`);
`--conditions`, `--modes` and `--pages` narrow it, `--fetch-arg=--FLAG=VALUE` adds a flag to every browser fetch, and
`--report bench/runs/STAMP-real-pages.json` rewrites this section from a saved run.
"""
    with open(os.path.join(ROOT, "bench", "summary-real-pages.md"), "w") as f:
        f.write(summary)
    print(summary)
    import run as http_bench  # the docs/benchmarks.md writer
    http_bench.write_doc()


if __name__ == "__main__":
    main()
