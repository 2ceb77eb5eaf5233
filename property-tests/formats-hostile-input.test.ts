/**
 * Tokenizer-format readers and SentencePiece models on hostile input, with fixed seeds:
 * (a) SentencePiece models encode any string without throwing, to ids of the model, and on the
 *     byte-fallback models with identity rules decode(encode(x)) gives x back ("▁" read as " ");
 * (b) the model, rank-file and tekken readers given damaged files return a model or throw a coded
 *     DeltatokError — nothing else; a damaged model that still loads encodes without crashing;
 * (c) the pat_str finder reads any text without throwing anything but a coded error.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";

import { DeltatokError } from "../src/errors.js";
import { SentencePieceProcessor } from "../src/encoder/model/sentencepiece.js";
import { findPatternLiterals } from "../src/load/formats/python-literal.js";
import { readSentencePieceModel } from "../src/load/formats/sentencepiece-model.js";
import { readTekken } from "../src/load/formats/tekken.js";
import { readTiktokenRanks } from "../src/load/formats/tiktoken-ranks.js";
import { formatFixturePath } from "../test/helpers/format-fixtures.js";
import { FORMAT_SPELLINGS } from "../test/helpers/format-texts.js";
import { classText, hostileText } from "../test/helpers/texts.js";

const RUNS = Number(process.env.DELTATOK_PROPERTY_RUNS ?? 50);
const SEED = 20261202;

const text = fc.oneof(hostileText(FORMAT_SPELLINGS, 24), classText(16), fc.string({ unit: "binary", maxLength: 40 }), fc.string({ maxLength: 40 }));

function load(name: string): SentencePieceProcessor {
  const file = formatFixturePath("sentencepiece", `${name}.model`);
  return new SentencePieceProcessor(readSentencePieceModel(readFileSync(file), file));
}

/** Accepts a coded DeltatokError, rethrows anything else. */
function codedOrNothing(f: () => void): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof DeltatokError)) throw e;
  }
}

test("SentencePiece models encode any string to ids of the model; byte-fallback identity models round-trip", () => {
  const names = ["unigram-nfkc-bf", "unigram-cf-noprefix", "bpe-identity-bf", "bpe-identity-suffix", "unigram-identity-unused", "mistral-v3"];
  const models = names.map((n) => [n, load(n)] as const);
  fc.assert(
    fc.property(text, (s) => {
      for (const [name, sp] of models) {
        const ids = sp.encode(s);
        for (const id of ids) assert.ok(id < sp.model.pieces.length, `${name}: id ${id}`);
        const decoded = sp.decode(ids);
        if ((name === "bpe-identity-bf" || name === "mistral-v3") && s.isWellFormed()) {
          assert.equal(decoded, s.replaceAll("\u2581", " "), name);
        }
      }
    }),
    { numRuns: RUNS, seed: SEED },
  );
});

test("a damaged SentencePiece model is refused with a code, or loads and encodes", () => {
  const good = readFileSync(formatFixturePath("sentencepiece", "unigram-identity.model"));
  const damage = fc.array(fc.tuple(fc.nat({ max: good.length - 1 }), fc.nat({ max: 255 })), { minLength: 1, maxLength: 6 });
  fc.assert(
    fc.property(damage, fc.nat({ max: good.length }), (edits, cut) => {
      const bytes = Uint8Array.from(good.subarray(0, Math.max(cut, 1)));
      for (const [at, value] of edits) if (at < bytes.length) bytes[at] = value;
      codedOrNothing(() => {
        const sp = new SentencePieceProcessor(readSentencePieceModel(bytes, "m"));
        sp.decode(sp.encode("hello  wörld <s> 😀"));
      });
    }),
    { numRuns: RUNS * 4, seed: SEED },
  );
});

test("damaged rank files and tekken.json are refused with a code or read", () => {
  const ranks = readFileSync(formatFixturePath("glm4", "tokenizer.model")).subarray(0, 8000);
  const tekken = readFileSync(formatFixturePath("tekken", "tekken-v3.json"));
  const damage = (n: number): fc.Arbitrary<Array<[number, number]>> =>
    fc.array(fc.tuple(fc.nat({ max: n - 1 }), fc.nat({ max: 255 })), { minLength: 1, maxLength: 4 });
  fc.assert(
    fc.property(damage(ranks.length), damage(tekken.length), (e1, e2) => {
      const r = Uint8Array.from(ranks);
      for (const [at, v] of e1) r[at] = v;
      codedOrNothing(() => readTiktokenRanks(r, "r"));
      const t = Uint8Array.from(tekken);
      for (const [at, v] of e2) t[at] = v;
      codedOrNothing(() => readTekken(t, "t"));
    }),
    { numRuns: RUNS * 2, seed: SEED },
  );
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      codedOrNothing(() => readTiktokenRanks(bytes, "r"));
      codedOrNothing(() => readSentencePieceModel(bytes, "m"));
    }),
    { numRuns: RUNS * 2, seed: SEED },
  );
});

test("the pat_str finder reads any text", () => {
  const source = fc.array(
    fc.oneof(
      fc.constantFrom("pat_str = ", "self.pat_str = ", "PAT_STR=", '"|".join([', "])", "(", ")", '"', "'", '"""', "r'", "f\"", "\\", "\\N{DASH}", "\n", "    ", "#", ",", "x"),
      fc.string({ maxLength: 6 }),
    ),
    { maxLength: 30 },
  );
  fc.assert(
    fc.property(source.map((xs) => xs.join("")), (src) => {
      codedOrNothing(() => {
        for (const found of findPatternLiterals(src, "t.py")) assert.equal(typeof found.value, "string");
      });
    }),
    { numRuns: RUNS * 4, seed: SEED },
  );
});
