#!/usr/bin/env python3
"""PDF corpus benchmark: afhttp's PDF text against Debian's `pdftotext` (poppler-utils).

Usage:
  bench/pdf_corpus.py PDF_DIR [--afhttp BIN] [--baseline-afhttp BIN] [--reader-cmd CMD ...]
                      [--label L] [--out RESULTS.jsonl] [--limit N] [--only SUBSTR]

`--baseline-afhttp BIN` runs a second afhttp build on every file in the same run, right
before the first one and pdftotext, so that both face the same machine load; its record is
the row's `base` and the summary compares the two (RSS and time ratios, files over 3x, F1).

For each `*.pdf` in PDF_DIR, one at a time:
- afhttp mode (default): serve the file from a loopback HTTP server and run
  `afhttp fetch URL --render none --want text,content_json --out DIR`;
- reader mode (`--reader-cmd`): run `CMD FILE MAX_PAGES AS_BYTES CPU_SECONDS` directly, the
  protocol of afhttp's reader child `afhttp-pdf-reader` (one JSON report on stdout:
  `pages[].text`, `page_count`, `needs_password`, `error`, optional `warnings[]`), under the
  same limits afhttp puts on its reader (RLIMIT_AS 512 MiB + 3x the file, RLIMIT_CPU 20 s,
  25 s wall). This is how candidate readers are compared without integrating them;
- `pdftotext -enc UTF-8 FILE OUT` on the same file (the reference).

What is measured:
- words: NFKC-normalised, case-folded `\\w+` runs; a run of CJK/kana/hangul characters
  counts each character as a word (tools disagree on spaces between them);
- word F1: multiset overlap of afhttp's words against pdftotext's;
- wall time of each command;
- peak RSS, each command run under GNU time (`%M`, wait4's ru_maxrss: a process's
  high-water mark, or the max of it and its reaped children, never their sum). pdftotext
  and reader mode: that figure. afhttp: parent + reader child, each its own high-water mark,
  summed (an upper bound on their simultaneous RSS). The child's is the reader's own VmHWM
  (trace.document.peak_rss_kib) or, when it died, the last VmHWM polled from /proc; the
  parent's is its VmHWM polled every 2 ms, raised to GNU time's figure when that exceeds the
  child's. (A spawned child's ru_maxrss also carries its parent's pages across exec, so
  ru_maxrss is never summed; and a child is polled only once it has exec'd, i.e. once its
  command line differs from its parent's: before that, posix_spawn's vfork child shows the
  parent's own VmHWM, which the 2026-12-04 runs counted twice for encrypted files.)

Before the first file, the afhttp executables measured are dropped from the page cache
(`evict`), so both builds of a comparison are paged in the same way.

Writes one JSON line per file to --out (default bench/runs/pdf_corpus-LABEL.jsonl) and
prints a markdown summary.
"""
import argparse
import http.server
import json
import os
import re
import resource
import shutil
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from pathlib import Path

MEMORY_BASE = 512 << 20
CPU_SECONDS = 20
WALL = 25
MAX_PAGES = 500
MIN_WORDS = 20

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def words(text):
    out = []
    for w in re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold()):
        if CJK.search(w):
            out.extend(c for c in w)
        else:
            out.append(w)
    return out


def f1(ours, ref):
    if not ref and not ours:
        return 1.0
    if not ref or not ours:
        return 0.0
    from collections import Counter

    a, b = Counter(ours), Counter(ref)
    common = sum((a & b).values())
    if common == 0:
        return 0.0
    p, r = common / sum(a.values()), common / sum(b.values())
    return 2 * p * r / (p + r)


def hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def evict(binaries):
    """Drop the executables (and the reader beside each) from the page cache, so that every
    build's pages come back by page faults, as an installed binary's do. A file just written
    (a fresh build, a copy) sits in the cache in large folios, and a fault then maps far more
    than the faulting page: `afhttp --version` measured 10.2 MiB freshly copied, 8.3 MiB once
    evicted. Without this, comparing two builds compares how each was last written."""
    for b in binaries:
        for p in (Path(b), Path(b).with_name("afhttp-pdf-reader")):
            if not p.is_file():
                continue
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return None


def children(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def run_measured(argv, limits=None, timeout=WALL + 35):
    """Run argv under GNU time; return (rc, stdout, stderr, wall_s, maxrss_kib, polled, pid).

    GNU time's %M is wait4's ru_maxrss of argv's process: the max of it and its reaped
    children. It is not taken from this Python process's own fork, whose ru_maxrss would
    carry Python's pages across exec. `polled` maps each descendant's pid to the last
    VmHWM read from /proc (a per-process high-water mark, reset at exec); `pid` is argv's.
    """
    def preexec():
        if limits:
            mem, cpu = limits
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    tf = tempfile.NamedTemporaryFile(delete=False)
    tf.close()
    t0 = time.monotonic()
    out_f, err_f = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", tf.name] + argv, stdout=out_f,
                         stderr=err_f, stdin=subprocess.DEVNULL, preexec_fn=preexec,
                         start_new_session=True)
    polled = {}
    first = []
    done = threading.Event()

    def poll():
        while not done.is_set():
            kids = children(p.pid)
            if kids and not first:
                first.append(kids[0])
            for parent in [p.pid] + kids:
                pcmd = cmdline(parent)
                for pid in children(parent):
                    # Until it execs, a spawned child's /proc shows its parent's memory
                    # (posix_spawn's vfork shares it): such a reading is the parent's.
                    if cmdline(pid) in (None, pcmd):
                        continue
                    h = hwm_kib(pid)
                    if h:
                        polled[pid] = max(polled.get(pid, 0), h)
            time.sleep(0.002)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    timed_out = False
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(p.pid, 9)
        p.wait()
    wall = time.monotonic() - t0
    done.set()
    th.join()
    maxrss = 0
    try:
        last = open(tf.name).read().strip().splitlines()
        maxrss = int(last[-1]) if last and last[-1].isdigit() else 0
        if last and last[0].startswith("Command"):
            # "Command terminated by signal N" / "Command exited with non-zero status N"
            rc_word = last[0].split()[-1]
            rc = f"signal {rc_word}" if "signal" in last[0] else int(rc_word)
        else:
            rc = 0 if p.returncode == 0 else p.returncode
    finally:
        os.unlink(tf.name)
    if timed_out:
        rc = "timeout"
    out_f.seek(0)
    err_f.seek(0)
    return rc, out_f.read(), err_f.read(), wall, maxrss, polled, (first[0] if first else None)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def guess_type(self, path):
        return "application/pdf"


def serve(directory):
    handler = lambda *a, **k: Quiet(*a, directory=str(directory), **k)  # noqa: E731
    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def run_afhttp(binary, port, pdf, work):
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    url = f"http://127.0.0.1:{port}/{pdf.name}"
    rc, stdout, stderr, wall, maxrss, polled, pid = run_measured(
        [binary, "fetch", url, "--render", "none", "--want", "text,content_json", "--out", str(out)])
    rec = {"rc": rc, "wall_s": round(wall, 4)}
    event = {}
    for line in stdout.decode("utf-8", "replace").split("\n"):
        try:
            event = json.loads(line)
        except ValueError:
            continue
    res = event.get("result") or {}
    err = event.get("error") or {}
    doc = (event.get("trace") or {}).get("document") or {}
    rec["outcome"] = err.get("code") or ("ok" if res else "no_event")
    rec["warnings"] = [w.get("code") for w in res.get("warnings", [])]
    rec["warning_messages"] = [w.get("message", "")[:200] for w in res.get("warnings", [])]
    text = ""
    tf = out / "text.txt"
    if tf.exists():
        text = tf.read_text("utf-8", "replace")
    cj = out / "content.json"
    if cj.exists():
        try:
            c = json.loads(cj.read_text())
            rec["pages"] = c.get("page_count")
        except ValueError:
            pass
    child_peak = doc.get("peak_rss_kib")
    child_pids = [p for p in polled if p != pid]
    if child_peak is None:
        child_peak = max((polled[p] for p in child_pids), default=0)
    parent = polled.get(pid, 0)
    if maxrss > child_peak:
        parent = max(parent, maxrss)
    rec["parent_rss_kib"] = parent
    rec["reader_rss_kib"] = child_peak
    rec["rss_kib"] = parent + child_peak
    return rec, text


def run_reader(cmd, pdf):
    size = pdf.stat().st_size
    mem = MEMORY_BASE + 3 * size
    rc, stdout, stderr, wall, maxrss, polled, pid = run_measured(
        cmd + [str(pdf), str(MAX_PAGES), str(mem), str(CPU_SECONDS)],
        limits=(mem, CPU_SECONDS), timeout=WALL)
    rec = {"rc": rc, "wall_s": round(wall, 4), "rss_kib": maxrss}
    text, rep = "", {}
    try:
        rep = json.loads(stdout.decode("utf-8", "replace").strip().split("\n")[-1])
    except (ValueError, IndexError):
        pass
    if rc == "timeout":
        rec["outcome"] = "timeout"
    elif rc != 0:
        rec["outcome"] = f"died({rc})"
        rec["stderr"] = stderr.decode("utf-8", "replace")[:200]
    elif rep.get("error"):
        rec["outcome"] = "error"
        rec["error"] = str(rep["error"])[:200]
    elif rep.get("needs_password"):
        rec["outcome"] = "needs_password"
    else:
        rec["outcome"] = "ok"
    rec["warnings"] = [w.get("code") if isinstance(w, dict) else w for w in rep.get("warnings", [])]
    rec["pages"] = rep.get("page_count")
    text = "\f".join(p.get("text", "") for p in rep.get("pages", []))
    return rec, text


def run_pdftotext(pdf, work):
    out = work / "ref.txt"
    if out.exists():
        out.unlink()
    rc, _, stderr, wall, maxrss, _, _ = run_measured(
        ["pdftotext", "-enc", "UTF-8", str(pdf), str(out)], timeout=120)
    text = out.read_text("utf-8", "replace") if out.exists() else ""
    return {"rc": rc, "wall_s": round(wall, 4), "rss_kib": maxrss,
            "pages": text.count("\f"), "stderr": stderr.decode("utf-8", "replace")[:200]}, text


def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def summarize(rows, label):
    scored = [r for r in rows if r["ref_words"] >= MIN_WORDS]
    f1s = [r["f1"] for r in scored]
    ok90 = sum(1 for x in f1s if x >= 0.9)
    zeros = [r for r in scored if r["f1"] == 0.0]
    flagged = [r for r in rows if "text_unreliable" in r["ours"].get("warnings", [])]
    flagged_ref_unreadable = [r for r in flagged if r["ref_words"] < MIN_WORDS]
    ratios = [r["ours"]["rss_kib"] / max(r["ref"]["rss_kib"], 1) for r in rows]
    tratios = [r["ours"]["wall_s"] / max(r["ref"]["wall_s"], 1e-3) for r in rows]
    big = [r for r in rows if r["size"] < 10 << 20 and r["ours"]["rss_kib"] > 128 << 10]
    crashes = [r for r in rows if str(r["ours"]["outcome"]).startswith(("died", "timeout", "no_event"))
               or r["ours"]["rc"] == "timeout"]
    bad_silent = [r for r in zeros if not r["ours"].get("warnings")]
    worst = max(rows, key=lambda r: r["ours"]["rss_kib"] / max(r["ref"]["rss_kib"], 1))
    load = open("/proc/loadavg").read().split()[:3]
    lines = [
        f"### {label}: {len(rows)} PDFs (load average {' '.join(load)} at the end)",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| files where pdftotext finds >= {MIN_WORDS} words | {len(scored)} |",
        f"| word F1 >= 0.9 | {ok90} of {len(scored)} ({100 * ok90 / max(len(scored), 1):.0f}%) |",
        f"| median word F1 | {statistics.median(f1s) if f1s else float('nan'):.3f} |",
        f"| F1 p10 / p25 | {pct(f1s, 0.10):.3f} / {pct(f1s, 0.25):.3f} |",
        f"| F1 = 0 | {len(zeros)} ({len(bad_silent)} without any warning) |",
        f"| flagged `text_unreliable` | {len(flagged)} ({len(flagged_ref_unreadable)} of them pdftotext also reads < {MIN_WORDS} words) |",
        f"| peak RSS / pdftotext's: median, worst | {statistics.median(ratios):.2f}x, {max(ratios):.2f}x ({worst['file']}: {worst['ours']['rss_kib'] >> 10} MiB vs {worst['ref']['rss_kib'] >> 10} MiB) |",
        f"| peak RSS max | {max(r['ours']['rss_kib'] for r in rows) >> 10} MiB |",
        f"| files < 10 MB above 128 MiB | {len(big)} |",
        f"| median wall time / pdftotext's | {statistics.median(tratios):.2f}x (medians {statistics.median(r['ours']['wall_s'] for r in rows):.3f} s vs {statistics.median(r['ref']['wall_s'] for r in rows):.3f} s) |",
        f"| total wall time | {sum(r['ours']['wall_s'] for r in rows):.1f} s vs {sum(r['ref']['wall_s'] for r in rows):.1f} s |",
        f"| crashes / hangs (reader died, timeout, no event) | {len(crashes)} |",
    ]
    outcomes = {}
    for r in rows:
        outcomes[r["ours"]["outcome"]] = outcomes.get(r["ours"]["outcome"], 0) + 1
    warns = {}
    for r in rows:
        for w in set(r["ours"].get("warnings", [])):
            warns[w] = warns.get(w, 0) + 1
    lines.append(f"| outcomes | {', '.join(f'{k}: {v}' for k, v in sorted(outcomes.items()))} |")
    lines.append(f"| files with warning | {', '.join(f'{k}: {v}' for k, v in sorted(warns.items()))} |")
    return "\n".join(lines)


def compare(rows, base_bin):
    """The baseline build against this one, file by file, in the same run."""
    def ratio(rec, r, key):
        return rec[key] / max(r["ref"][key], 1e-3 if key == "wall_s" else 1)

    def col(name):
        recs = [(r[name] if name == "base" else r["ours"], r) for r in rows]
        rss = [ratio(o, r, "rss_kib") for o, r in recs]
        worst = max(recs, key=lambda x: ratio(x[0], x[1], "rss_kib"))
        scored = [(o.get("f1", r["f1"]) if name == "base" else r["f1"]) for o, r in recs
                  if r["ref_words"] >= MIN_WORDS]
        return [
            f"{statistics.median(o['parent_rss_kib'] for o, _ in recs) / 1024:.1f} / "
            f"{max(o['parent_rss_kib'] for o, _ in recs) / 1024:.1f} MiB",
            f"{statistics.median(o['reader_rss_kib'] for o, _ in recs) / 1024:.1f} / "
            f"{max(o['reader_rss_kib'] for o, _ in recs) / 1024:.1f} MiB",
            f"{statistics.median(o['rss_kib'] for o, _ in recs) / 1024:.1f} / "
            f"{max(o['rss_kib'] for o, _ in recs) / 1024:.1f} MiB",
            f"{statistics.median(rss):.2f}x, {max(rss):.2f}x ({worst[1]['file']})",
            f"{sum(1 for x in rss if x > 3)}",
            f"{sum(1 for o, r in recs if r['size'] < 10 << 20 and o['rss_kib'] > 128 << 10)}",
            f"{statistics.median(ratio(o, r, 'wall_s') for o, r in recs):.2f}x",
            f"{sum(1 for x in scored if x >= 0.9)} of {len(scored)}",
            f"{sum(1 for o, _ in recs if str(o['outcome']).startswith(('died', 'timeout', 'no_event')))}",
        ]
    names = ["fetch process peak RSS, median / max", "reader child peak RSS, median / max",
             "parent + child, median / max", "parent + child / pdftotext's: median, worst",
             "files over 3x pdftotext", "files < 10 MB above 128 MiB",
             "median wall time / pdftotext's", "F1 >= 0.9", "crashes / hangs"]
    load = open("/proc/loadavg").read().split()[:3]
    lines = [f"### Same run: baseline `{base_bin}` against this build "
             f"(load average {' '.join(load)} at the end)", "",
             "| measure | baseline | this build |", "| --- | --- | --- |"]
    for n, b, o in zip(names, col("base"), col("ours")):
        lines.append(f"| {n} | {b} | {o} |")
    changed = [r for r in rows if abs(r["base"]["f1"] - r["f1"]) > 1e-9]
    lines.append(f"| files whose F1 changed | {len(changed)}: "
                 + ", ".join(f"{r['file']} {r['base']['f1']:.2f}->{r['f1']:.2f}" for r in changed[:10])
                 + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pdf_dir")
    ap.add_argument("--afhttp", default="target/release/afhttp")
    ap.add_argument("--baseline-afhttp", default=None,
                    help="another afhttp build run on every file in the same run (row's `base`)")
    ap.add_argument("--reader-cmd", nargs="+", help="a reader child speaking afhttp-pdf-reader's protocol")
    ap.add_argument("--label", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    label = args.label or ("reader " + Path(args.reader_cmd[0]).name if args.reader_cmd else "afhttp")
    pdfs = sorted(p for p in Path(args.pdf_dir).iterdir() if p.suffix.lower() == ".pdf" and args.only in p.name)
    if args.limit:
        pdfs = pdfs[: args.limit]
    out_path = Path(args.out or f"bench/runs/pdf_corpus-{re.sub(r'[^A-Za-z0-9_.-]', '_', label)}.jsonl")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    if not args.reader_cmd:
        evict([args.afhttp] + ([args.baseline_afhttp] if args.baseline_afhttp else []))
    work = Path(tempfile.mkdtemp(prefix="pdf_corpus."))
    srv = None if args.reader_cmd else serve(Path(args.pdf_dir))
    rows = []
    try:
        with open(out_path, "w") as sink:
            for i, pdf in enumerate(pdfs):
                base = base_text = None
                if args.baseline_afhttp and not args.reader_cmd:
                    base, base_text = run_afhttp(os.path.abspath(args.baseline_afhttp),
                                                 srv.server_address[1], pdf, work)
                if args.reader_cmd:
                    ours, text = run_reader(args.reader_cmd, pdf)
                else:
                    ours, text = run_afhttp(os.path.abspath(args.afhttp), srv.server_address[1], pdf, work)
                ref, ref_text = run_pdftotext(pdf, work)
                ow, rw = words(text), words(ref_text)
                row = {"file": pdf.name, "size": pdf.stat().st_size, "ours": ours, "ref": ref,
                       "words": len(ow), "ref_words": len(rw), "f1": round(f1(ow, rw), 4)}
                if base is not None:
                    base["f1"] = round(f1(words(base_text), rw), 4)
                    row["base"] = base
                rows.append(row)
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                print(f"[{i + 1}/{len(pdfs)}] {pdf.name}: {ours['outcome']} f1={row['f1']} "
                      f"words={len(ow)}/{len(rw)} rss={ours['rss_kib'] >> 10}/{ref['rss_kib'] >> 10}MiB "
                      f"t={ours['wall_s']:.2f}/{ref['wall_s']:.2f}s {ours.get('warnings')}", file=sys.stderr)
    finally:
        if srv:
            srv.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    print(summarize(rows, label))
    if args.baseline_afhttp and rows and "base" in rows[0]:
        print()
        print(compare(rows, args.baseline_afhttp))


if __name__ == "__main__":
    main()
