"""o200k_base token counts for the benches, from js-tiktoken's bundled ranks
(bench/tokenizer: `npm ci --prefix bench/tokenizer`, pinned by its package-lock.json). One
long-lived node process; nothing is downloaded at run time."""
import json
import os
import subprocess

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizer", "count.mjs")


class Tokenizer:
    """`count(text)` -> number of o200k_base tokens (special-token strings count as text)."""

    def __init__(self):
        if not os.path.isdir(os.path.join(os.path.dirname(HELPER), "node_modules", "js-tiktoken")):
            raise SystemExit("bench/tokenizer is not installed: run bench/peers_setup.sh "
                             "(or npm ci --prefix bench/tokenizer)")
        self.proc = subprocess.Popen(["node", HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     encoding="utf-8")
        self.cache = {}

    def count(self, text):
        if text in self.cache:
            return self.cache[text]
        self.proc.stdin.write(json.dumps({"text": text}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("the tokenizer helper ended")
        n = json.loads(line)["tokens"]
        if len(self.cache) < 2000:
            self.cache[text] = n
        return n

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
