/**
 * Token ids equal the Rust tokenizers' on text built from every code point class whose meaning
 * differs between Oniguruma and JavaScript (or between Unicode versions), for the five bundled
 * tokenizers and six more (ByteLevel with its built-in pattern, Split patterns, Replace
 * normalizers): loaded as deltatok loads them, through the segmented encoder and the encoder
 * itself.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import { clearTokenizerCache, loadTokenizer } from "../src/load/index.js";
import { TokenEncoder } from "../src/tokenize/encoder.js";
import { EXTRA_TOKENIZER_NAMES, TOKENIZER_NAMES, modelsDir, type AnyTokenizerName } from "./helpers/tokenizers.js";
import { rustIds, rustTokenizerFile } from "./helpers/rust.js";
import { classText } from "./helpers/texts.js";

const SEED = 20261130;

/** Texts on which, before this fix, deltatok and Rust disagreed (on some tokenizer or Node). */
const EXPLICIT = [
  "a \u0085b", // JavaScript's \s misses U+0085
  "x\ufeff'll", // and takes U+FEFF
  "I'ſ K'K", // Oniguruma folds ſ to s and K to k in (?i:'s|...)
  "\ua7ce's \u{10d4a}'d \u{323b0}'ll ʕ's", // letters of Unicode 16/17, a letter whose category changed in 17
  "٣३𝟘 1234567 ²¼", // digits of other scripts
  "\u2028\u2029\u3000\u00a0\u1680\u2000\u202f\u205f\u000b\u000c\u001c\u001f\u180e\u200b",
  "    \n\n\n\t\t  x  \r\n\r\n   ",
];

for (const name of [...TOKENIZER_NAMES, ...EXTRA_TOKENIZER_NAMES] as AnyTokenizerName[]) {
  test(`${name}: ids equal the Rust tokenizers on hostile text`, async () => {
    const dir = modelsDir(name);
    const loaded = await loadTokenizer(dir);
    assert.equal(loaded.patterns.exact, true, loaded.patterns.notes.join("\n"));
    assert.equal(loaded.tokenizer.engine, "deltatok");
    const segmented = new TokenEncoder(loaded);
    const rust = rustTokenizerFile(join(dir, "tokenizer.json"));
    const texts = [...EXPLICIT, ...fc.sample(classText(16), { numRuns: name === "gemma3" || name === "gemini" ? 120 : 250, seed: SEED })];
    const want: number[][] = [];
    for (const t of texts) want.push(await rustIds(rust, t));
    for (let i = 0; i < texts.length; i++) {
      assert.deepEqual(segmented.encodeWhole(texts[i] as string), want[i], `segmented, ${JSON.stringify(texts[i])}`);
    }
    // a second pass is answered from the piece memo
    for (let i = 0; i < texts.length; i += 3) {
      assert.deepEqual(loaded.tokenizer.encode(texts[i] as string), want[i], `memo, ${JSON.stringify(texts[i])}`);
    }
    clearTokenizerCache();
  });
}

test("claude: the issue's two strings", async () => {
  const dir = modelsDir("claude");
  const loaded = await loadTokenizer(dir);
  const enc = new TokenEncoder(loaded);
  const rust = rustTokenizerFile(join(dir, "tokenizer.json"));
  const a = enc.encodeWhole("a \u0085b");
  assert.deepEqual(a, await rustIds(rust, "a \u0085b"));
  assert.deepEqual(a.map((id) => loaded.tokenizer.idToToken(id)), ["a", "Ġ", "Â", "ħ", "b"]);
  const b = enc.encodeWhole("x\ufeff'll");
  assert.deepEqual(b, await rustIds(rust, "x\ufeff'll"));
  assert.equal(b.length, 4);
  clearTokenizerCache();
});
