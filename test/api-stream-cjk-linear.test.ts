/**
 * Streaming CJK text costs what it appends: 6,000 characters of Chinese prose (ideographs with
 * 、。，；：！？「」 punctuation, pinned seed) appended two characters at a time re-encode at most
 * a fixed multiple of the text in total and never more than one sentence per append — counted
 * in characters handed to the tokenizer, not in time — and every count is exact, for the
 * pattern families that have a cut rule (Qwen, cl100k, o200k, DeepSeek-V3). Before CJK and
 * full-width punctuation were cuts, the whole 6,000 characters were one uncut tail (18 M
 * characters encoded).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { modelsDir } from "./helpers/tokenizers.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const IDEOGRAPHS = "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生会自能";
const PUNCT = "，。、；：！？「」";

/** Chinese-looking prose: sentences of 6–20 ideographs, each ended by a punctuation mark. */
function prose(length: number, seed: number): string {
  let x = seed;
  const rnd = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % n;
  };
  let s = "";
  while (s.length < length) {
    const n = 6 + rnd(15);
    for (let i = 0; i < n; i++) s += IDEOGRAPHS[rnd(IDEOGRAPHS.length)];
    s += PUNCT[rnd(PUNCT.length)];
  }
  return s.slice(0, length);
}

const TEXT = prose(6000, 20261202);

for (const spec of ["qwen3", "llama3_1", "gpt4o", "deepseek_v3"]) {
  test(`${spec}: 6k CJK characters in 2-character chunks encode O(n) characters, each count exact`, async () => {
    const dt = await Deltatok.create({ tokenizer: spec === "qwen3" ? spec : modelsDir(spec as never), renderer: TEST_RENDERER });
    const c = dt.textCounter();
    assert.equal(c.stats().mode, "regex");
    for (let i = 0; i < TEXT.length; i += 2) {
      const n = c.append(TEXT.slice(i, i + 2));
      if (i % 500 === 0) assert.equal(n, dt.countText(TEXT.slice(0, i + 2)), `${spec} at ${i}`);
      // the uncut tail is at most the current sentence (21 units) plus the chunk
      assert.ok(c.stats().tailChars <= 23, `${spec}: uncut tail ${c.stats().tailChars} at ${i}`);
    }
    const s = c.stats();
    assert.ok(s.charsEncoded <= TEXT.length * 8, `${spec}: ${s.charsEncoded} characters encoded for ${TEXT.length}`);
    assert.ok(s.maxLookBack <= 24, `${spec}: look-back ${s.maxLookBack}`);
    assert.equal(c.finish(), dt.countText(TEXT));
  });
}
