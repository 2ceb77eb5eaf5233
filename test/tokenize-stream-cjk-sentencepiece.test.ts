/**
 * The open run on SentencePiece-style BPE (Gemma 3, Llama 2, Gemini: spaces as "▁", a whole
 * section one BPE word over characters, byte_fallback): an uncut tail ending in CJK, kana or
 * Hangul that grows by more of them is counted by the appendable BPE over characters
 * (encoder/model/appendable-bpe.ts, "Initial symbols").
 *
 * - the character-level appendable BPE equals the model's BPE on every character prefix of
 *   random words over random vocabularies (shuffled merge lists), with characters the vocabulary
 *   lacks as byte-fallback pieces or, where a piece is missing, the unknown token (fused or not);
 * - models it cannot follow are refused with a reason (a merge naming a byte-fallback piece);
 * - on gemma3, llama2 and gemini the counter's count and ids after every append equal the whole
 *   encode for random CJK / kana / Hangul / mixed texts with spaces and random chunks (pinned
 *   seeds); so on the synthetic Metaspace tokenizer (dummy prefix `first`, no byte_fallback: every
 *   run character is the unknown token, consecutive ones fused);
 * - work on gemma3: 12,000 unpunctuated ideographs in 2-character chunks cost under 2.5× the
 *   steps and characters of 6,000 (counted, not timed).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Deltatok } from "../src/api/deltatok.js";
import { buildEncoder, type EncoderJson } from "../src/encoder/build.js";
import { AppendableBpe, AppendableIndex, appendableReason } from "../src/encoder/model/appendable-bpe.js";
import { BpeModel } from "../src/encoder/model/bpe.js";
import type { Pipeline } from "../src/encoder/pipeline.js";
import { scannerFor } from "../src/encoder/pretokenize/index.js";
import { checkTokenizerJson } from "../src/load/tokenizer-json.js";
import { modelsDir, syntheticDir, type AnyTokenizerName } from "./helpers/tokenizers.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { KANA, ideographs } from "./helpers/cjk-text.js";
import { assertLinearRun, streamChecked } from "./helpers/stream-check.js";

const SEED = 20261202;
const utf8 = new TextEncoder();
const hex = (b: number): string => `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`;

/** A SentencePiece-shaped tokenizer.json (Replace " " → "▁", no pre-tokenizer) over `tokens` and `merges`. */
function sentencePieceJson(tokens: string[], merges: Array<[string, string]>, pieces: readonly number[], fuseUnk: boolean, byteFallback = true): EncoderJson {
  const vocab: Record<string, number> = { "<unk>": 0 };
  for (const b of pieces) vocab[hex(b)] = Object.keys(vocab).length;
  for (const t of tokens) if (!(t in vocab)) vocab[t] = Object.keys(vocab).length;
  const json = {
    version: "1.0",
    added_tokens: [{ id: 0, content: "<unk>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: { type: "Replace", pattern: { String: " " }, content: "▁" },
    pre_tokenizer: null,
    post_processor: null,
    decoder: null,
    model: { type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: fuseUnk, byte_fallback: byteFallback, ignore_merges: false, vocab, merges: merges.map(([a, b]) => [a, b]) },
  };
  return checkTokenizerJson(json, "<crafted>") as unknown as EncoderJson;
}

function pipelineOf(json: EncoderJson): Pipeline {
  const b = buildEncoder(json, { scannerFor });
  if (!b.ok) throw new Error(b.unsupported);
  return b.encoder as Pipeline;
}

/** Characters of the random words: in the vocabulary (a, b, c, 中, 한), and not (国: pieces or unk, x: unk, é: 2-byte pieces). */
const CHARS = ["a", "b", "c", "中", "한", "国", "x", "é"];

/** A random vocabulary over a, b, c, 中, 한 built merge by merge, each joining two tokens made before it, the merge list shuffled. */
const randomVocab = fc.tuple(fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 40 }), fc.array(fc.nat()), fc.boolean(), fc.boolean()).map(([picks, swaps, guoPieces, fuseUnk]) => {
  const tokens = ["a", "b", "c", "中", "한"];
  const merges: Array<[string, string]> = [];
  const seen = new Set<string>();
  for (const [i, j] of picks) {
    const l = tokens[i % tokens.length] as string;
    const r = tokens[j % tokens.length] as string;
    if (seen.has(l + " " + r) || [...(l + r)].length > 6) continue;
    seen.add(l + " " + r);
    merges.push([l, r]);
    if (!tokens.includes(l + r)) tokens.push(l + r);
  }
  for (let k = merges.length - 1; k > 0 && swaps.length > 0; k--) {
    const q = (swaps[k % swaps.length] as number) % (k + 1);
    [merges[k], merges[q]] = [merges[q] as [string, string], merges[k] as [string, string]];
  }
  // byte-fallback pieces: every byte but x's (0x78), and without one of 国's when guoPieces is false
  const pieces: number[] = [];
  for (let b = 0; b < 256; b++) if (b !== 0x78 && (guoPieces || b !== 0xbd)) pieces.push(b);
  return { tokens, merges, pieces, fuseUnk };
});

test("character-level appendable BPE: every character prefix's count and ids equal the model's BPE (byte fallback, unk, fused or not, merges in any order)", () => {
  let prefixes = 0;
  let fallbackWords = 0;
  let unkWords = 0;
  fc.assert(
    fc.property(randomVocab, fc.array(fc.constantFrom(...CHARS), { minLength: 4, maxLength: 30 }), ({ tokens, merges, pieces, fuseUnk }, chars) => {
      const pipe = pipelineOf(sentencePieceJson(tokens, merges, pieces, fuseUnk));
      const model = pipe.model as BpeModel;
      assert.equal(appendableReason(model), "");
      const w = new AppendableBpe(new AppendableIndex(model));
      let word = "";
      for (const ch of chars) {
        const b = utf8.encode(ch);
        assert.equal(w.push(b, 0, b.length), "ok");
        word += ch;
        const want = pipe.encode(word);
        const got: number[] = [];
        w.ids(got);
        assert.deepEqual(got, want, `prefix ${word} of merges ${JSON.stringify(merges)}`);
        assert.equal(w.count(), want.length);
        prefixes++;
      }
      const ids = pipe.encode(word);
      if (ids.some((id) => (pipe.idToToken(id) as string).startsWith("<0x"))) fallbackWords++;
      if (ids.includes(0)) unkWords++;
    }),
    { seed: SEED, numRuns: 200 },
  );
  assert.ok(prefixes > 2000 && fallbackWords > 50 && unkWords > 50, `${prefixes} prefixes, ${fallbackWords} words with byte-fallback pieces, ${unkWords} with the unknown token`);
});

test("a character-level model the argument does not cover is refused with a reason", () => {
  const all = Array.from({ length: 256 }, (_, b) => b);
  // a merge naming a byte-fallback piece: its symbols would no longer split the word
  const merged = pipelineOf(sentencePieceJson(["a", hex(0xe4) + "a"], [[hex(0xe4), "a"]], all, true));
  assert.match(appendableReason(merged.model as BpeModel), /byte-fallback piece or the unknown token/);
  // no byte_fallback and no unk in the vocabulary would drop characters: the crafted one has <unk>, so it is covered
  const noFallback = pipelineOf(sentencePieceJson(["a", "b", "ab"], [["a", "b"]], [], true, false));
  assert.equal(appendableReason(noFallback.model as BpeModel), "");
});

// ---- the counter on the bundled SentencePiece-style tokenizers ----

const IDEOGRAPHS = "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生会自能码";
const HANGUL = "가나다라마바사아자차카타파하한국어의는을를이가에서고";
/** Not run characters, next to run characters somewhere: spaces (the cuts), "▁", punctuation, ASCII, a combining mark, an emoji. */
const OTHERS = [" ", "  ", "▁", "。", "、", "\n", "a", "Z", "1", "\u3099", "😀", " a"];

const runOf = (alphabet: string) => fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 90 }).map((a) => a.join(""));
const cjkText = fc
  .array(fc.oneof({ arbitrary: runOf(IDEOGRAPHS), weight: 4 }, { arbitrary: runOf(KANA + IDEOGRAPHS), weight: 3 }, { arbitrary: runOf(HANGUL), weight: 2 }, { arbitrary: runOf(IDEOGRAPHS + HANGUL + KANA), weight: 2 }, { arbitrary: fc.constantFrom(...OTHERS), weight: 4 }), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.join(""));
const chunking = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 400 });

for (const name of ["gemma3", "llama2", "gemini"] as const satisfies readonly AnyTokenizerName[]) {
  test(`${name}: count and ids after every append equal the whole encode (CJK, kana, Hangul, mixed, spaces; random chunks), the open run serving`, async () => {
    const dt = await Deltatok.create({ tokenizer: modelsDir(name), renderer: TEST_RENDERER });
    let runAppends = 0;
    fc.assert(
      fc.property(cjkText, chunking, fc.boolean(), (text, sizes, ids) => {
        const s = streamChecked(dt, text, sizes, ids, name);
        assert.equal(s.appendableReason, "");
        runAppends += s.runAppends;
      }),
      { seed: SEED, numRuns: 20 },
    );
    // texts of at most 12 parts, spaces among them: fewer uncut tails of 24+ characters than the byte-level test's
    assert.ok(runAppends > 30, `${name}: ${runAppends} appends by the open run`);
  });
}

test("metaspace-first (Metaspace pre-tokenizer, no byte_fallback): count and ids after every append equal the whole encode, fused unknown characters in the open run", async () => {
  const dt = await Deltatok.create({ tokenizer: syntheticDir("metaspace-first"), renderer: TEST_RENDERER });
  let runAppends = 0;
  fc.assert(
    fc.property(cjkText, chunking, (text, sizes) => {
      runAppends += streamChecked(dt, text, sizes, true, "metaspace-first").runAppends;
    }),
    { seed: SEED, numRuns: 20 },
  );
  assert.ok(runAppends > 30, `${runAppends} appends by the open run`);
});

test("gemma3: unpunctuated ideographs in 2-character chunks: work grows linearly (12k under 2.5× of 6k), counts exact", async () => {
  const dt = await Deltatok.create({ tokenizer: modelsDir("gemma3"), renderer: TEST_RENDERER });
  assertLinearRun(dt, (n) => ideographs(n, SEED, IDEOGRAPHS));
});
