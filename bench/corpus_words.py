"""Shared by the corpus benches (bench/real_pages.py, bench/mcp_peers.py): the pages of a
corpus directory, a loopback server for them, and main-content word recall.

Recall, as issues 22 and 24 define it: the words of `expected.html` (Mozilla Readability's
extraction of the page's main content) -- runs of 4+ letters, case-folded, URLs removed, as a
multiset -- and the share of them found in a text (each word counted at most as often as it
occurs in the text). Markup is not text: tags, attributes, scripts and styles are dropped from
expected.html first.
"""
import collections
import html.parser
import math
import http.server
import os
import re
import threading

# URLs are not words: schemes with their rest, protocol-relative and www. forms, then bare
# host/path runs (example.com/a/b) that a projection may print without a scheme.
URL_RE = re.compile(r"(?:\b[a-z][a-z0-9+.-]*:(?://)?|//|\bwww\.)[^\s<>()\[\]\"'`]+", re.I)
PATHLIKE_RE = re.compile(r"\b[\w.-]+\.[a-z]{2,}(?:/[^\s<>()\[\]\"'`]*)+", re.I)
WORD_RE = re.compile(r"[^\W\d_]{4,}")


def words(text):
    """The multiset (Counter) of the words of `text`: runs of 4+ letters, case-folded,
    after removing URLs."""
    text = URL_RE.sub(" ", text)
    text = PATHLIKE_RE.sub(" ", text)
    return collections.Counter(w.casefold() for w in WORD_RE.findall(text))


class _TextOf(html.parser.HTMLParser):
    SKIP = {"script", "style", "noscript", "template", "svg", "math"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skip += 1
        self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.skip:
            self.skip -= 1
        self.parts.append(" ")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def html_text(markup):
    """The text of an HTML fragment (tags and attributes dropped, entities decoded)."""
    p = _TextOf()
    p.feed(markup)
    p.close()
    return "".join(p.parts)


def recall(expected, got):
    """Share of the multiset `expected` found in the multiset `got` (None when `expected` is
    empty)."""
    total = sum(expected.values())
    if not total:
        return None
    return sum(min(n, got.get(w, 0)) for w, n in expected.items()) / total


def read_text(path):
    """A file's text as UTF-8 (bad bytes replaced); '' when it is missing."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


class Page:
    """One corpus page: `name`, `source` (path), and the words of its expected.html."""

    def __init__(self, root, name):
        self.name = name
        self.source = os.path.join(root, name, "source.html")
        self.expected = words(html_text(read_text(os.path.join(root, name, "expected.html"))))

    def recall(self, text):
        """Main-content recall of `text` (str) against this page's expected.html."""
        return recall(self.expected, words(text))


def load_pages(corpus, only=None):
    """The pages of `corpus` (a corpus root holding pages/, or pages/ itself), sorted by name;
    `only`: a list of names to keep."""
    root = os.path.join(corpus, "pages") if os.path.isdir(os.path.join(corpus, "pages")) else corpus
    names = sorted(n for n in os.listdir(root)
                   if os.path.isfile(os.path.join(root, n, "source.html"))
                   and os.path.isfile(os.path.join(root, n, "expected.html")))
    if only:
        names = [n for n in names if n in set(only)]
    if not names:
        raise SystemExit(f"no pages (NAME/source.html + NAME/expected.html) under {root}")
    return [Page(root, n) for n in names]


def serve(pages, host="127.0.0.1"):
    """Serve each page's source.html at /NAME/ (bytes as saved) from a threaded server on
    `host`; anything else is a 404. Returns (server, base URL).

    The header says `charset=utf-8`, which is what the saved files are (every one decodes as
    UTF-8), as a server that knows its bytes would: a saved page's meta may still name its
    original encoding (qq's says gb2312), and the header wins over it, in browsers and in
    afhttp alike."""
    bodies = {}
    for p in pages:
        with open(p.source, "rb") as f:
            bodies[f"/{p.name}/"] = f.read()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            body = bodies.get(self.path.split("?")[0])
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8" if body is not None else "text/plain")
            body = body if body is not None else b"not found"
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_HEAD(self):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    srv = http.server.ThreadingHTTPServer((host, 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://{host}:{srv.server_address[1]}"


def quantile(values, q):
    """The q-quantile (nearest rank) of a non-empty list; None when empty."""
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    return v[max(0, math.ceil(q * len(v)) - 1)]
