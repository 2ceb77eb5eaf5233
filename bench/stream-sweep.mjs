// Issue 17: an exactness sweep of the streaming text counter on real text. Every 7th assistant
// content / reasoning text of the shared corpora (first 3,000 characters each), streamed in
// seeded random chunks of 1–90 UTF-16 units on each of the 11 tokenizers, half the counters
// keeping ids: every final count is compared with countText, 5% of the intermediate counts too,
// and the ids with encodeText. Prints one line per tokenizer with the number of differences
// (expected 0) and the pieces the piece memo answered.
//
//   npm run build && node bench/stream-sweep.mjs [TRAJECTORIES_DIR]
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Deltatok } from "../dist/src/api/deltatok.js";
import { modelsDir } from "../dist/test/helpers/tokenizers.js";

const dir = process.argv[2] ?? fileURLToPath(new URL("../../shared/corpus/trajectories/", import.meta.url));
const texts = [];
for (const f of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
  for (const line of readFileSync(dir + "/" + f, "utf8").split("\n")) {
    if (!line.trim()) continue;
    let r;
    try {
      r = JSON.parse(line);
    } catch {
      continue;
    }
    for (const m of r.messages ?? []) {
      for (const k of ["content", "reasoning_content"]) if (typeof m[k] === "string" && m[k].trim() && m[k].isWellFormed()) texts.push(m[k]);
    }
  }
}
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const BUNDLED = ["qwen3", "deepseek_v3", "llama3_1", "gemma3", "gptoss"];
let failed = 0;
for (const name of [...BUNDLED, "llama2", "llama3", "gpt4o", "gpt35turbo", "gemini", "claude"]) {
  const dt = await Deltatok.create({ tokenizer: BUNDLED.includes(name) ? name : modelsDir(name) });
  let n = 0;
  let bad = 0;
  let memo = 0;
  let chars = 0;
  for (let t = 0; t < texts.length; t += 7) {
    const s = texts[t].slice(0, 3000);
    const ids = rnd() < 0.5;
    const c = dt.textCounter({ ids });
    for (let i = 0; i < s.length; ) {
      const k = 1 + Math.floor(rnd() * 90);
      const got = c.append(s.slice(i, i + k));
      i += k;
      if (rnd() < 0.05 && got !== dt.countText(s.slice(0, i).replace(/[\ud800-\udbff]$/, ""))) bad++;
    }
    if (c.finish() !== dt.countText(s)) bad++;
    if (ids && Array.from(c.ids()).join() !== Array.from(dt.encodeText(s)).join()) bad++;
    n++;
    memo += c.stats().memoPieces;
    chars += s.length;
  }
  failed += bad;
  console.log(`${name}: ${n} texts, ${chars} characters, ${bad} differences, ${memo} pieces from the memo`);
}
process.exitCode = failed === 0 ? 0 : 1;
