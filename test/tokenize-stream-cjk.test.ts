/**
 * The open run: a streaming counter whose uncut tail ends in CJK ideographs, kana or Hangul and
 * grows by more of them counts the tail's last pre-token with the appendable BPE
 * (encoder/model/appendable-bpe.ts, tokenize/stream-run.ts) instead of re-encoding the tail.
 *
 * - the appendable BPE equals the model's BPE on every prefix of random words over random
 *   vocabularies whose merge lists come in any order (most of them out of rank order: a merge
 *   ranked below one making its part, as in tiktoken's ranks converted to merges);
 * - run characters are NFC/NFKC-stable and never a composition's second character;
 * - on the bundled byte-level tokenizers, the counter's count and ids after every append equal the
 *   whole encode of the text so far, for random CJK / kana / Hangul / mixed texts and random
 *   chunks (pinned seeds); the SentencePiece-style ones have their own file
 *   (tokenize-stream-cjk-sentencepiece.test.ts);
 * - Japanese prose (kana before 。、「」, combining and spacing dakuten, ゝゞ, half-width kana, jamo):
 *   count and ids after every append equal the whole encode on qwen3, deepseek_v3, llama3_1,
 *   gptoss, gpt4o and claude; with 。 after a kana every ~30 characters, no append encodes more
 *   than 64 characters (a kana before punctuation is a cut, rule 1);
 * - work: 12,000 unpunctuated ideographs in 2-character chunks cost under 2.5× the steps and
 *   characters of 6,000 (counted, not timed), on qwen3, deepseek_v3, llama3_1 and gptoss;
 * - a crafted Qwen-shaped vocabulary whose merges are out of rank order keeps its run open and exact.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Deltatok } from "../src/api/deltatok.js";
import { buildEncoder, type EncoderJson } from "../src/encoder/build.js";
import { AppendableBpe, AppendableIndex } from "../src/encoder/model/appendable-bpe.js";
import { spellBytes } from "../src/encoder/model/byte-alphabet.js";
import { BpeModel } from "../src/encoder/model/bpe.js";
import type { Pipeline } from "../src/encoder/pipeline.js";
import { scannerFor } from "../src/encoder/pretokenize/index.js";
import { checkTokenizerJson } from "../src/load/tokenizer-json.js";
import { TokenEncoder } from "../src/tokenize/encoder.js";
import { streamRuleFor, TextStream } from "../src/tokenize/stream.js";
import { modelsDir, rawTokenizer, type AnyTokenizerName } from "./helpers/tokenizers.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { KANA, ideographs, japaneseProse } from "./helpers/cjk-text.js";
import { assertLinearRun, streamChecked, streamWork } from "./helpers/stream-check.js";

const SEED = 20261202;
const utf8 = new TextEncoder();

/** A byte-level tokenizer.json over `vocab` (every byte included) and `merges`, one pre-token per text. */
function byteLevelJson(tokens: string[], merges: Array<[string, string]>): EncoderJson {
  const vocab: Record<string, number> = {};
  for (let b = 0; b < 256; b++) vocab[spellBytes([b])] = b;
  for (const t of tokens) if (!(t in vocab)) vocab[t] = Object.keys(vocab).length;
  const json = {
    version: "1.0",
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: merges.map(([a, b]) => [a, b]) },
  };
  return checkTokenizerJson(json, "<crafted>") as unknown as EncoderJson;
}

function pipelineOf(json: EncoderJson): Pipeline {
  const b = buildEncoder(json, { scannerFor });
  if (!b.ok) throw new Error(b.unsupported);
  return b.encoder as Pipeline;
}

/** A random vocabulary over "abc" built merge by merge, each joining two tokens made before it. */
const randomVocab = fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 40 }).map((picks) => {
  const tokens = ["a", "b", "c"];
  const merges: Array<[string, string]> = [];
  const seen = new Set<string>();
  for (const [i, j] of picks) {
    const l = tokens[i % tokens.length] as string;
    const r = tokens[j % tokens.length] as string;
    if (seen.has(l + " " + r) || (l + r).length > 8) continue;
    seen.add(l + " " + r);
    merges.push([l, r]);
    if (!tokens.includes(l + r)) tokens.push(l + r);
  }
  return { tokens, merges };
});

/**
 * The tokens some merge of `merges` (rank = position) makes *out of rank order*: at or below the
 * rank of a merge making one of its parts. The argument of appendable-bpe.ts does not need rank
 * order; these are the cases an argument that did would get wrong, so the test counts them.
 */
function outOfOrder(merges: ReadonlyArray<readonly [string, string]>): Set<string> {
  const made = new Map<string, number>();
  merges.forEach(([l, r], k) => made.set(l + r, Math.max(made.get(l + r) ?? -1, k)));
  const out = new Set<string>();
  merges.forEach(([l, r], k) => {
    if ((made.get(l) ?? -1) >= k || (made.get(r) ?? -1) >= k) out.add(l + r);
  });
  return out;
}

test("appendable BPE: every prefix's count and ids equal the model's BPE on random vocabularies, merges in any order", () => {
  let prefixes = 0;
  let unordered = 0;
  let metUnordered = 0;
  fc.assert(
    fc.property(randomVocab, fc.array(fc.nat()), fc.array(fc.constantFrom("a", "b", "c"), { minLength: 8, maxLength: 40 }).map((a) => a.join("")), ({ tokens, merges }, swaps, word) => {
      // the merge list as built (in rank order but where a token is made twice), then shuffled
      const order = merges.slice();
      for (let k = order.length - 1; k > 0 && swaps.length > 0; k--) {
        const q = (swaps[k % swaps.length] as number) % (k + 1);
        [order[k], order[q]] = [order[q] as [string, string], order[k] as [string, string]];
      }
      const late = outOfOrder(order);
      if (late.size > 0) unordered++;
      const pipe = pipelineOf(byteLevelJson(tokens, order));
      const w = new AppendableBpe(new AppendableIndex(pipe.model as BpeModel));
      const bytes = utf8.encode(word);
      for (let i = 0; i < bytes.length; i++) {
        assert.equal(w.push(bytes, i, i + 1), "ok");
        const want = pipe.encode(word.slice(0, i + 1));
        if (want.some((id) => late.has(pipe.idToToken(id) as string))) metUnordered++;
        const got: number[] = [];
        w.ids(got);
        assert.deepEqual(got, want, `prefix ${word.slice(0, i + 1)} of merges ${JSON.stringify(order)}`);
        assert.equal(w.count(), want.length);
        prefixes++;
      }
    }),
    { seed: SEED, numRuns: 400 },
  );
  assert.ok(prefixes > 4000 && unordered > 100 && metUnordered > 300, `${prefixes} prefixes, ${unordered} vocabularies out of rank order, ${metUnordered} prefixes whose BPE holds a token made out of order`);
});

test("appendable BPE: a merge ranked below the merge making its part (as tiktoken's converted ranks have) is followed exactly", () => {
  // "bc" is made at rank 1, after the merge (a, bc) of rank 0 that uses it: in "xabc" the crate
  // joins b c first, then a bc
  const pipe = pipelineOf(byteLevelJson(["abc", "bc"], [["a", "bc"], ["b", "c"]]));
  assert.deepEqual(outOfOrder([["a", "bc"], ["b", "c"]]), new Set(["abc"]));
  const w = new AppendableBpe(new AppendableIndex(pipe.model as BpeModel));
  const bytes = utf8.encode("xabcabc");
  for (let i = 0; i < bytes.length; i++) {
    assert.equal(w.push(bytes, i, i + 1), "ok");
    const got: number[] = [];
    w.ids(got);
    assert.deepEqual(got, pipe.encode("xabcabc".slice(0, i + 1)));
  }
  assert.deepEqual(pipe.encode("xabc"), [pipe.tokenToId("x"), pipe.tokenToId("abc")]);
});

test("run characters are NFC/NFKC-stable starters that no composition takes second (every code point checked)", () => {
  const runs: Array<[number, number]> = [[0x4e00, 0x9fa5], [0x3041, 0x3096], [0x30a1, 0x30fa], [0x30fc, 0x30fc], [0xac00, 0xd7a3]];
  // every character after the first in any code point's canonical decomposition: the
  // composition's possible second characters (and the combining marks)
  const second = new Set<number>();
  for (let c = 0; c < 0x110000; c++) {
    if (c >= 0xd800 && c < 0xe000) continue;
    const d = String.fromCodePoint(c).normalize("NFD");
    if (d.length === 1) continue;
    const cps = [...d];
    for (let i = 1; i < cps.length; i++) second.add(cps[i]!.codePointAt(0) as number);
  }
  assert.ok(second.has(0x3099) && second.has(0x11a8), "the dakuten and a Hangul final are second characters");
  for (const [a, b] of runs) {
    for (let c = a; c <= b; c++) {
      const ch = String.fromCharCode(c);
      assert.ok(ch.normalize("NFC") === ch && ch.normalize("NFKC") === ch, `U+${c.toString(16)} is not stable`);
      assert.ok(!second.has(c), `U+${c.toString(16)} can be a composition's second character`);
      // and joined after any other run character it stays as it is
      assert.equal(("가" + ch).normalize("NFC"), "가" + ch);
    }
  }
});

// ---- the counter on real tokenizers ----

const IDEOGRAPHS = "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生会自能码";
const HANGUL = "가나다라마바사아자차카타파하한국어의는을를이가에서고";
/** Not run characters, each next to run characters somewhere: punctuation, ASCII, spaces, newlines, a combining mark, a jamo, a compatibility ideograph, 々, ・, a digit. */
const OTHERS = ["。", "、", "，", "「", "」", " ", "\n", "a", "Z", "'", "1", "\u3099", "\u11a8", "\uf900", "々", "・", "😀"];

const runOf = (alphabet: string) => fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 90 }).map((a) => a.join(""));
const cjkText = fc
  .array(fc.oneof({ arbitrary: runOf(IDEOGRAPHS), weight: 4 }, { arbitrary: runOf(KANA + IDEOGRAPHS), weight: 3 }, { arbitrary: runOf(HANGUL), weight: 2 }, { arbitrary: runOf(IDEOGRAPHS + HANGUL + KANA), weight: 2 }, { arbitrary: fc.constantFrom(...OTHERS), weight: 3 }), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.join(""));
/** Cut points: chunk lengths of 1–6 units (a pair may be split: the counter holds its half back). */
const chunking = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 400 });

const SPECS: AnyTokenizerName[] = ["qwen3", "deepseek_v3", "claude", "gpt4o", "gpt35turbo", "llama3_1", "gptoss"];

for (const name of SPECS) {
  test(`${name}: count and ids after every append equal the whole encode (CJK, kana, Hangul, mixed; random chunks)`, async () => {
    const dt = await Deltatok.create({ tokenizer: modelsDir(name), renderer: TEST_RENDERER });
    let runAppends = 0;
    fc.assert(
      fc.property(cjkText, chunking, fc.boolean(), (text, sizes, ids) => {
        runAppends += streamChecked(dt, text, sizes, ids, name).runAppends;
      }),
      { seed: SEED, numRuns: 40 },
    );
    assert.ok(runAppends > 50, `${name}: ${runAppends} appends by the open run`);
  });
}

test("the byte-level tokenizers keep their runs open through 码 (made out of merge-rank order by Llama 3 / gpt-oss)", async () => {
  const text = IDEOGRAPHS.repeat(4);
  for (const name of ["qwen3", "deepseek_v3", "llama3_1", "gptoss"] as const) {
    const dt = await Deltatok.create({ tokenizer: modelsDir(name), renderer: TEST_RENDERER });
    const c = dt.textCounter();
    for (let i = 0; i < text.length; i += 2) c.append(text.slice(i, i + 2));
    const s = c.stats();
    assert.equal(c.finish(), dt.countText(text));
    // Llama 3 / gpt-oss: tiktoken's ranks converted to merges, 码 made out of rank order (an
    // earlier version gave the run up there)
    assert.equal(s.appendableReason, "");
    assert.ok(s.runAppends >= text.length / 2 - 20, `${name}: ${s.runAppends} appends by the run`);
    assert.equal(s.runMismatches, 0);
  }
});

// ---- Japanese prose: kana letters before punctuation are cuts (rule 1) ----

/** Japanese prose pieces: kana and ideograph runs, CJK punctuation, and what must not cut after a kana: combining and spacing (semi-)voiced marks, ゝゞ, half-width katakana with ﾞ ﾟ, jamo. */
const JP_MARKS = ["。", "、", "「", "」", "！", "？", "（", "）", "・", "ー", "\u3099", "\u309a", "゛", "゜", "ゝ", "ゞ", "ｶﾞ", "ﾊﾟ", "ﾟ", "\u1161", "\u11a8", "가。", "\n", " ", "a", "1"];
const japaneseText = fc
  .array(fc.oneof({ arbitrary: runOf(KANA).map((r) => r.slice(0, 30)), weight: 5 }, { arbitrary: runOf(KANA + IDEOGRAPHS).map((r) => r.slice(0, 30)), weight: 3 }, { arbitrary: fc.constantFrom(...JP_MARKS), weight: 6 }), { minLength: 1, maxLength: 30 })
  .map((parts) => parts.join(""));

for (const name of ["qwen3", "deepseek_v3", "llama3_1", "gptoss", "gpt4o", "claude"] as const) {
  test(`${name}: Japanese prose (kana before punctuation, dakuten marks): count and ids after every append equal the whole encode`, async () => {
    const dt = await Deltatok.create({ tokenizer: modelsDir(name), renderer: TEST_RENDERER });
    fc.assert(
      fc.property(japaneseText, chunking, fc.boolean(), (text, sizes, ids) => {
        streamChecked(dt, text, sizes, ids, name);
      }),
      { seed: SEED, numRuns: 30 },
    );
  });
}

for (const name of ["qwen3", "deepseek_v3"] as const) {
  test(`${name}: Japanese prose with 。 after a kana every ~30 characters, 2 characters per append: bounded work per append, counts exact`, async () => {
    const dt = await Deltatok.create({ tokenizer: modelsDir(name), renderer: TEST_RENDERER });
    const work = (n: number): { chars: number; max: number } => {
      const s = streamWork(dt, japaneseProse(n, SEED, IDEOGRAPHS), 500);
      assert.ok(s.tailChars < 60, `the tail since the last 。 is ${s.tailChars} characters`);
      return { chars: s.charsEncoded, max: s.maxCharsEncoded };
    };
    const a = work(6000);
    const b = work(12000);
    // without the kana cut every 。 re-encoded the whole text so far (max ≈ n, total ≈ n²/60)
    assert.ok(a.max < 64 && b.max < 64, `most characters encoded by one append: ${a.max}, ${b.max}`);
    assert.ok(b.chars < 2.5 * a.chars, `characters encoded ${b.chars} for 12k, ${a.chars} for 6k`);
    assert.ok(a.chars < 40 * 6000, `characters encoded ${a.chars} for 6k`);
  });
}

// ---- work ----

for (const name of ["qwen3", "deepseek_v3", "llama3_1", "gptoss"] as const) {
  test(`${name}: unpunctuated ideographs in 2-character chunks: work grows linearly (12k under 2.5× of 6k), counts exact`, async () => {
    const dt = await Deltatok.create({ tokenizer: modelsDir(name), renderer: TEST_RENDERER });
    assertLinearRun(dt, (n) => ideographs(n, SEED, IDEOGRAPHS));
  });
}

// ---- a crafted vocabulary out of rank order ----

test("a Qwen-shaped tokenizer whose merges are out of rank order: the run stays open through them, every count and id exact", () => {
  const qwen = rawTokenizer("qwen3").tokenizerJson as unknown as Record<string, unknown>;
  const spell = (s: string): string => spellBytes(utf8.encode(s));
  // 中 is e4 b8 ad: (e4, b8ad) at rank 0 uses b8ad, which (b8, ad) makes only at rank 1; 国 in order
  const [zh0, zh1, zh2] = [...utf8.encode("中")].map((b) => spellBytes([b])) as [string, string, string];
  const [g0, g1, g2] = [...utf8.encode("国")].map((b) => spellBytes([b])) as [string, string, string];
  const bad = byteLevelJson([zh1 + zh2, spell("中"), g0 + g1, spell("国"), spell("中国")], [
    [zh0, zh1 + zh2],
    [zh1, zh2],
    [g0, g1],
    [g0 + g1, g2],
    [spell("中"), spell("国")],
  ]);
  const json = { ...qwen, model: bad.model } as unknown as EncoderJson;
  const pipe = pipelineOf(checkTokenizerJson(json, "<crafted>") as unknown as EncoderJson);
  const source = { tokenizer: pipe, tokenizerJson: json as unknown as { added_tokens: [] } };
  const rule = streamRuleFor(source);
  assert.equal(rule.mode, "regex");
  assert.equal(rule.appendableReason, "");
  const enc = new TokenEncoder(source);
  const count = (s: string) => pipe.encode(s).length;
  // a run of 国, then 中 (made out of rank order) arrives: the run answers both
  const s = new TextStream(enc, rule, { maxChars: 100_000, maxLookBack: 100_000, ids: true });
  let text = "";
  let before = 0;
  for (const chunk of [..."国国国国国国国国国国国国国国国国国国国国国国国国国国国国国国".match(/.{1,2}/gu)!, "国中", "中国", "国国", "国国"]) {
    if (chunk === "国中") before = s.stats().runAppends;
    text += chunk;
    assert.equal(s.append(chunk), count(text), text);
    assert.deepEqual(Array.from(s.ids()), pipe.encode(text));
  }
  const st = s.stats();
  assert.ok(before > 0, "the run of 国 was open");
  assert.equal(st.runAppends - before, 4, "the run answered every append from 中 on");
  assert.equal(st.runMismatches, 0);
});
