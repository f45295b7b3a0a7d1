// o200k_base token counts for the benches: one JSON line in ({"text": ...}), one line out
// ({"tokens": N}). The ranks ship inside js-tiktoken (package-lock.json pins it): no download.
import { Tiktoken } from "js-tiktoken/lite";
import o200k_base from "js-tiktoken/ranks/o200k_base";
import readline from "node:readline";

const enc = new Tiktoken(o200k_base);
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  const { text } = JSON.parse(line);
  process.stdout.write(JSON.stringify({ tokens: enc.encode(text, [], []).length }) + "\n");
});
