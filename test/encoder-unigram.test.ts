/**
 * tokenizer.json Unigram models on deltatok's encoder (src/encoder/model/unigram-json.ts) against
 * the Rust binding (npm `tokenizers`): the SentencePiece Unigram fixtures as transformers 5
 * converts them (Precompiled normalizer included) on the corpora and hostile texts, small
 * vocabularies built for ties, unknown runs and partial byte fallback, scores that serde_json
 * reads one ULP off, the shared tables a worker rebuilds from, and a Unigram tokenizer.json as
 * transformers saves it, loaded as a directory, against transformers' ids for that directory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

import { buildEncoder, encoderFromShared, type EncoderJson } from "../src/encoder/build.js";
import { serdeJsonF64 } from "../src/encoder/model/serde-float.js";
import { readSentencePieceModel } from "../src/load/formats/sentencepiece-model.js";
import { sentencePieceToTokenizerJson } from "../src/load/formats/spm-to-tokenizer-json.js";
import { loadTokenizer, shareTokenizer } from "../src/load/index.js";
import { coreFromShared } from "../src/load/shared-core.js";
import { compareExpectations, formatFixturePath, formatTexts, readFormatJson, type Expectations } from "./helpers/format-fixtures.js";
import type { RustTokenizer } from "./helpers/rust.js";

const { Tokenizer } = createRequire(import.meta.url)("tokenizers") as { Tokenizer: { fromString(s: string): RustTokenizer } };

const MODELS = ["unigram-nfkc-bf", "unigram-cf-noprefix", "unigram-identity", "unigram-identity-unused"];

function converted(name: string): EncoderJson {
  const path = formatFixturePath("sentencepiece", `${name}.model`);
  return sentencePieceToTokenizerJson(readSentencePieceModel(readFileSync(path), path), { kind: "generic" }) as unknown as EncoderJson;
}

function build(json: EncoderJson) {
  const b = buildEncoder(json);
  assert.ok(b.ok, b.ok ? "" : b.unsupported);
  return b;
}

for (const name of MODELS) {
  test(`Unigram tokenizer.json (${name}, transformers' conversion): ids and decode equal the Rust binding's on the corpora and hostile texts; a worker's rebuild agrees`, async () => {
    const json = converted(name);
    const b = build(json);
    assert.equal(b.encoder.engine, "deltatok");
    assert.equal(b.encoder.exact, true);
    const rust = Tokenizer.fromString(JSON.stringify(json));
    const worker = encoderFromShared(structuredClone(b.shared));
    const texts = formatTexts();
    let differ = 0;
    const first: string[] = [];
    let i = 0;
    for (const text of [...texts.corpus, ...texts.hostile]) {
      const want = (await rust.encode(text, null, { addSpecialTokens: false })).getIds();
      const got = b.encoder.encode(text);
      const same = JSON.stringify(want) === JSON.stringify(got) && (await rust.decode(want, false)) === b.encoder.decode(got);
      if (!same) {
        differ++;
        if (first.length < 3) first.push(JSON.stringify(text.slice(0, 60)));
      }
      if (i++ % 7 === 0) assert.deepEqual(worker.encode(text), got);
    }
    assert.equal(differ, 0, `${differ} texts differ, e.g. ${first.join(", ")}`);
  });
}

test("a Unigram tokenizer.json as transformers 5 saves it (unigram-json/): loads on deltatok's encoder; ids and decode equal transformers' AutoTokenizer over that directory", async () => {
  const loaded = await loadTokenizer(formatFixturePath("unigram-json"));
  const enc = loaded.tokenizer;
  assert.equal(enc.engine, "deltatok");
  const expect = readFormatJson<{ encode: Expectations }>("unigram-json", "expect.json");
  const problems = compareExpectations(formatTexts(), expect.encode, (text) => {
    const ids = enc.encode(text);
    return { ids, decoded: enc.decode(ids) };
  }, { decoded: true });
  assert.deepEqual(problems.slice(0, 10), [], `${problems.length} mismatches`);
  const vocab = loaded.tokenizerJson.model["vocab"] as Array<[string, number]>;
  const file = JSON.parse(readFileSync(formatFixturePath("unigram-json", "tokenizer.json"), "utf8")) as { model: { vocab: Array<[string, number]> } };
  assert.deepEqual(vocab, file.model.vocab, "model.vocab as listed");
  // a worker's core: the vocabulary made from the shared tables, scores as listed
  const core = coreFromShared(await shareTokenizer(formatFixturePath("unigram-json")));
  assert.deepEqual(core.tokenizerJson.model["vocab"], file.model.vocab);
  assert.deepEqual(core.tokenizer.encode(formatTexts().corpus[0] as string), enc.encode(formatTexts().corpus[0] as string));
});

/** mulberry32: a fixed-seed generator. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function unigramJson(vocab: Array<[string, number]>, unkId: number | null, byteFallback: boolean): EncoderJson {
  return {
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: null,
    decoder: null,
    model: { type: "Unigram", unk_id: unkId, vocab, byte_fallback: byteFallback },
  } as unknown as EncoderJson;
}

test("small Unigram vocabularies built for ties, unknown runs, the unknown piece spelled in text and partial byte fallback: ids equal the Rust binding's (seeded)", async () => {
  const next = rng(0x25_0b1);
  const letters = ["a", "b", "c", "é", "日", "😀", "▁"];
  const unknown = ["x", "ÿ", "本", "🙂"];
  const scoreSet = [-1, -2, -3, -1.5, -0.5, 0, -4.25];
  let compared = 0;
  for (let v = 0; v < 40; v++) {
    const vocab: Array<[string, number]> = [["<unk>", 0]];
    const seen = new Set(["<unk>"]);
    const add = (p: string, s: number) => {
      if (!seen.has(p)) {
        seen.add(p);
        vocab.push([p, s]);
      }
    };
    for (const l of letters) if (next() < 0.85) add(l, scoreSet[Math.floor(next() * scoreSet.length)] as number);
    for (let k = 0; k < 30; k++) {
      let p = "";
      const n = 2 + Math.floor(next() * 3);
      for (let j = 0; j < n; j++) p += letters[Math.floor(next() * letters.length)];
      add(p, scoreSet[Math.floor(next() * scoreSet.length)] as number);
    }
    // some byte pieces: fallback works for some unknown characters, not for others
    for (const b of [0x78, 0xc3, 0xbf, 0xe6, 0x9c, 0xac, 0xf0, 0x9f]) if (next() < 0.8) add(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`, -10);
    const byteFallback = next() < 0.6;
    const json = unigramJson(vocab, 0, byteFallback);
    const b = build(json);
    const rust = Tokenizer.fromString(JSON.stringify(json));
    const alphabet = [...letters, ...unknown, "<unk>", "<0x78>"];
    for (let t = 0; t < 40; t++) {
      let text = "";
      const n = 1 + Math.floor(next() * 14);
      for (let j = 0; j < n; j++) text += alphabet[Math.floor(next() * alphabet.length)];
      const want = (await rust.encode(text, null, { addSpecialTokens: false })).getIds();
      assert.deepEqual(b.encoder.encode(text), want, `vocabulary ${v}, text ${JSON.stringify(text)}`);
      compared++;
    }
  }
  assert.equal(compared, 1600);
});

test("Unigram without unk_id: a character no piece covers is DT_TOKENIZE_FAILED (the crate's MissingUnkId), the process alive; covered text encodes", async () => {
  const json = unigramJson([["a", -1], ["b", -2], ["ab", -2.5]], null, false);
  const b = build(json);
  const rust = Tokenizer.fromString(JSON.stringify(json));
  await assert.rejects(rust.encode("axb", null, { addSpecialTokens: false }));
  assert.throws(() => b.encoder.encode("axb"), { code: "DT_TOKENIZE_FAILED" });
  assert.deepEqual(b.encoder.encode("abab"), (await rust.encode("abab", null, { addSpecialTokens: false })).getIds());
});

test("Unigram scores are read as serde_json reads them: a tie that exists only under its rounding decides as the crate decides", async () => {
  // find float32 scores a, b, ab where the nearest f64 values and serde_json's disagree on
  // whether "a" + "b" beats "ab" (seeded search)
  const next = rng(7);
  const f32 = new Float32Array(1);
  const score = () => {
    f32[0] = -(0.5 + next() * 12);
    return f32[0] as number;
  };
  let found: [number, number, number] | null = null;
  for (let k = 0; k < 200_000 && found === null; k++) {
    const a = score();
    const c = score();
    const ab = a + c; // a tie under the nearest values
    const serdeSplit = serdeJsonF64(a) + serdeJsonF64(c);
    if (serdeSplit !== serdeJsonF64(ab)) found = [a, c, ab];
  }
  assert.ok(found !== null, "no such scores found");
  const [a, c, ab] = found;
  const json = unigramJson([["<unk>", -20], ["a", a], ["b", c], ["ab", ab]], 0, false);
  const rust = Tokenizer.fromString(JSON.stringify(json));
  const want = (await rust.encode("ab", null, { addSpecialTokens: false })).getIds();
  assert.deepEqual(build(json).encoder.encode("ab"), want);
  // the same model with the scores taken as given answers the other way: the rounding decides
  const exact = buildEncoder({ ...json, extensions: { unigramScores: "exact" } });
  assert.ok(exact.ok);
  assert.notDeepEqual(exact.encoder.encode("ab"), want);
});

test("Unigram refusals: unk_id past the vocabulary is DT_TOKENIZER_INVALID at load (the crate refuses it); a piece listed twice runs on the library, named", () => {
  assert.throws(() => buildEncoder(unigramJson([["a", -1]], 3, false)), { name: "EncoderBuildError" });
  const twice = buildEncoder(unigramJson([["<unk>", 0], ["a", -1], ["a", -2]], 0, false));
  assert.equal(twice.ok, false);
});
