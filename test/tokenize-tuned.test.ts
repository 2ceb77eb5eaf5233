/**
 * The tokenizer tuning (encoder.ts: a scratch-buffer text encoder in ByteLevel pre-tokenizers, a
 * two-generation BPE memo) changes how ids are computed, never which: a tuned tokenizer encodes
 * exactly as a pristine instance of the same tokenizer.json, on all five real tokenizers and the
 * synthetic ones, including pre-tokens too long for the scratch buffer and memo generations
 * rolling over.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { Tokenizer } from "@huggingface/tokenizers";
import { TokenEncoder, tuneTokenizer } from "../src/tokenize/encoder.js";
import { SYNTHETIC_NAMES, TOKENIZER_NAMES, modelsDir, syntheticDir, specialTexts } from "./helpers/tokenizers.js";
import { hostileText } from "./helpers/texts.js";

function fresh(dir: string): Tokenizer {
  const json = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")) as object;
  const config = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")) as object;
  return new Tokenizer(json, config);
}

const ids = (t: Tokenizer, s: string) => t.encode(s, { add_special_tokens: false }).ids;

for (const name of TOKENIZER_NAMES) {
  test(`${name}: the tuned tokenizer encodes exactly as a pristine one`, () => {
    const stock = fresh(modelsDir(name));
    const tuned = fresh(modelsDir(name));
    assert.equal(tuneTokenizer(tuned), true, "the stand-ins are installed on the bundled tokenizers");
    assert.equal(tuneTokenizer(tuned), true, "idempotent");
    const specials = specialTexts(name);
    fc.assert(
      fc.property(hostileText(specials, 40), (text) => {
        assert.deepEqual(ids(tuned, text), ids(stock, text));
        assert.deepEqual(ids(tuned, text), ids(stock, text), "again, from the memo");
      }),
      { numRuns: name === "gemma3" ? 80 : 200 },
    );
    // a pre-token longer than the scratch buffer holds, multi-byte, and one just inside it
    for (const long of ["é".repeat(30_000), "a".repeat(21_845), " x" + "\u4e2d".repeat(22_000) + "\n"]) {
      assert.deepEqual(ids(tuned, long), ids(stock, long));
    }
  });
}

test("qwen3: the BPE memo rolls over generations and stays exact", () => {
  const stock = fresh(modelsDir("qwen3"));
  const tuned = fresh(modelsDir("qwen3"));
  tuneTokenizer(tuned);
  // more distinct words than two generations hold, then the first ones again
  const words = Array.from({ length: 25_000 }, (_, i) => `w${i.toString(36)}q`);
  const text = words.join(" ");
  assert.deepEqual(ids(tuned, text), ids(stock, text));
  const head = words.slice(0, 500).join(" ");
  assert.deepEqual(ids(tuned, head), ids(stock, head));
});

for (const name of SYNTHETIC_NAMES) {
  test(`${name}: tuned or not, the encoder agrees with a pristine tokenizer`, () => {
    const stock = fresh(syntheticDir(name));
    const tuned = fresh(syntheticDir(name));
    tuneTokenizer(tuned);
    const specials = (JSON.parse(readFileSync(join(syntheticDir(name), "tokenizer.json"), "utf8")) as { added_tokens: Array<{ content: string }> }).added_tokens.map((t) => t.content);
    fc.assert(
      fc.property(hostileText(specials, 20), (text) => {
        assert.deepEqual(ids(tuned, text), ids(stock, text));
      }),
      { numRuns: 150 },
    );
  });
}

for (const name of ["gemma3", "llama2", "gemini"] as const) {
  test(`${name}: BPE split at the cuts no merge crosses encodes long sections exactly as the whole-word BPE`, () => {
    const stock = fresh(modelsDir(name));
    const tuned = fresh(modelsDir(name));
    assert.equal(tuneTokenizer(tuned), true);
    assert.equal(typeof Object.getOwnPropertyDescriptor((tuned as unknown as { model: object }).model, "bpe")?.value, "function", "the split stand-in is installed");
    // sections far longer than the 256 units the library memoizes a word up to: words, spaces
    // (runs, leading, trailing), "▁" itself, punctuation, digits, multi-byte text, byte fallback
    const word = fc.oneof(
      // ">" before "▁" is inside a Gemma 3 token (">▁</"): no cut there
      fc.constantFrom("the", "quick", "brown", "fox", "naïve", "Größe", "東京", "😀", "x", "a", "▁", "▁▁", ">", "->", "<", "<b>", "</", "</b>", "'s", "42", "\t", "\n"),
      fc.string({ unit: "grapheme", maxLength: 6 }),
      fc.string({ unit: "binary", maxLength: 3 }).filter((t) => t.isWellFormed()),
    );
    const sep = fc.constantFrom(" ", " ", " ", "  ", "", "\n", " ▁");
    const section = fc.array(fc.tuple(word, sep), { minLength: 20, maxLength: 160 }).map((ps) => ps.map(([w, g]) => w + g).join(""));
    // Gemma 3 encodes "1> </" as 1 | >▁</ : the one place a cut before "▁" after ">" would change the tokens
    const fixed = `${"word ".repeat(60)}<b> </b> a>▁b >  </ 1> </a\n> </ end`;
    assert.deepEqual(ids(tuned, fixed), ids(stock, fixed));
    fc.assert(
      fc.property(section, (text) => {
        assert.deepEqual(ids(tuned, text), ids(stock, text));
        assert.deepEqual(ids(tuned, " " + text + " "), ids(stock, " " + text + " "));
      }),
      { numRuns: name === "gemma3" ? 40 : 120 },
    );
  });
}

test("byte-level tokenizers get no BPE split (their words never carry \"▁\")", () => {
  const tuned = fresh(modelsDir("qwen3"));
  assert.equal(tuneTokenizer(tuned), true);
  assert.equal(Object.getOwnPropertyDescriptor((tuned as unknown as { model: object }).model, "bpe"), undefined);
});

test("an encoder can leave its tokenizer untouched", () => {
  const t = fresh(modelsDir("llama3_1"));
  const json = JSON.parse(readFileSync(join(modelsDir("llama3_1"), "tokenizer.json"), "utf8")) as { added_tokens: [] };
  const enc = new TokenEncoder({ tokenizer: t, tokenizerJson: json }, { tune: false });
  assert.equal(enc.tuned, false);
  const model = (t as unknown as { model: { cache: { constructor: { name: string } } } }).model;
  assert.notEqual(model.cache.constructor.name, "GenerationalMemo");
});
