// Issue 17: an agent loop that calls trimToFit every turn, with new message objects each turn
// (structuredClone), on the longest conversation of the bundled tau-bench file (Qwen3 + its
// tools): per turn, the tokens the Deltatok encoded and the milliseconds, against the kept
// prompt's own size (what one encode of the kept messages costs, the least a trimmer without
// reuse pays per turn).
//
//   node bench/budget.mjs [DIR] [--limit 9000] [--corpus FILE]
//
// DIR: a checkout with a built dist/ (default: this one). Prints JSON.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const here = fileURLToPath(new URL(".", import.meta.url));
const dir = resolve(args[0] !== undefined && !args[0].startsWith("--") ? args[0] : resolve(here, ".."));
const corpus = opt("--corpus", resolve(dir, "data/tau-bench-airline-20.jsonl"));
const limit = Number(opt("--limit", 9000));
const { Deltatok } = await import(`${dir}/dist/src/index.js`);
const convs = readFileSync(corpus, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
const conv = convs.sort((a, b) => b.messages.length - a.messages.length)[0];
const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" });
const o = { tools: conv.tools };
const turns = [];
for (let k = 2; k <= conv.messages.length; k++) {
  const req = structuredClone(conv.messages.slice(0, k));
  const s0 = dt.stats().tokensEncoded;
  const t0 = performance.now();
  const r = dt.trimToFit(req, limit, o);
  const ms = performance.now() - t0;
  turns.push({ turn: k, kept: r.count, dropped: r.dropped.length, encoded: dt.stats().tokensEncoded - s0, ms: Math.round(ms * 100) / 100 });
}
const trimmed = turns.filter((t) => t.dropped > 0).slice(1); // after the first trim
const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  JSON.stringify(
    {
      limit,
      messages: conv.messages.length,
      first_trim: turns.find((t) => t.dropped > 0),
      trimmed_turns_after_the_first: trimmed.length,
      median_tokens_encoded_per_trimmed_turn: med(trimmed.map((t) => t.encoded)),
      median_kept_tokens: med(trimmed.map((t) => t.kept)),
      median_ms_per_trimmed_turn: med(trimmed.map((t) => t.ms)),
      turns,
    },
    null,
    0,
  ),
);
