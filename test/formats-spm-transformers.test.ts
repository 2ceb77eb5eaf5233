import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";

import { encodeStringUnicode } from "../src/json/dumps.js";
import { floatRepr } from "../src/json/floatrepr.js";
import { readSentencePieceModel } from "../src/load/formats/sentencepiece-model.js";
import { sentencePieceToTokenizerJson, type ConvertedTokenizerJson, type SpmConversionTarget } from "../src/load/formats/spm-to-tokenizer-json.js";
import { compareExpectations, formatFixturePath, formatTexts, shortHash, type Answer, type Expectations } from "./helpers/format-fixtures.js";
import type { RustTokenizer } from "./helpers/rust.js";

const { Tokenizer } = createRequire(import.meta.url)("tokenizers") as { Tokenizer: { fromString(s: string): RustTokenizer } };

interface TransformersExpect {
  config: { tokenizer_class?: string; legacy?: boolean };
  tokenizer_json: {
    added_tokens: unknown[];
    normalizer: unknown;
    pre_tokenizer: unknown;
    decoder: unknown;
    model: Record<string, unknown>;
    vocab_sha: string;
    merges_sha: string | null;
  };
  encode: Expectations;
}

const FILES = readdirSync(formatFixturePath("sentencepiece")).filter((f) => f.endsWith(".transformers.json"));

function targetOf(config: TransformersExpect["config"]): SpmConversionTarget {
  return config.tokenizer_class === "LlamaTokenizer" ? { kind: "llama", legacy: config.legacy === true } : { kind: "generic" };
}

/** Python's json.dumps(..., ensure_ascii=False, separators=(",", ":")) of the model's vocab / merges. */
function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(",")}]`;
  if (typeof value === "string") return encodeStringUnicode(value);
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value as Record<string, number>).sort((a, b) => a[1] - b[1]).map(([k, v]) => `${encodeStringUnicode(k)}:${v}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function withoutCharsmaps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCharsmaps);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === "precompiled_charsmap" ? `sha:${shortHash(v as string)}` : withoutCharsmaps(v)]));
  }
  return value;
}

for (const file of FILES) {
  const [name, label] = file.split(".") as [string, string];
  test(`transformers' conversion of ${name} (${label}): deltatok builds the same tokenizer.json, and it encodes and decodes as transformers does`, async () => {
    const expect = JSON.parse(readFileSync(formatFixturePath("sentencepiece", file), "utf8")) as TransformersExpect;
    const path = formatFixturePath("sentencepiece", `${name}.model`);
    const json: ConvertedTokenizerJson = sentencePieceToTokenizerJson(readSentencePieceModel(readFileSync(path), path), targetOf(expect.config));
    const want = expect.tokenizer_json;
    assert.deepEqual(json.added_tokens, want.added_tokens);
    assert.deepEqual(withoutCharsmaps(json.normalizer), want.normalizer);
    assert.deepEqual(json.pre_tokenizer, want.pre_tokenizer);
    assert.deepEqual(json.decoder, want.decoder);
    const { vocab, merges, ...scalars } = json.model;
    assert.deepEqual(scalars, want.model);
    const vocabJson = Array.isArray(vocab)
      ? `[${(vocab as Array<[string, number]>).map(([p, score]) => `[${encodeStringUnicode(p)},${floatRepr(Math.fround(score))}]`).join(",")}]`
      : pythonJson(vocab);
    assert.equal(shortHash(vocabJson), want.vocab_sha, "vocab (Unigram scores compared as float32)");
    if (want.merges_sha !== null) assert.equal(shortHash(pythonJson(merges)), want.merges_sha, "merges (generate_merges order)");

    const tokenizer = Tokenizer.fromString(JSON.stringify(json));
    // Through the Rust tokenizers binding (what transformers runs), not @huggingface/tokenizers: the
    // JS library's Unigram + Precompiled disagree with Rust on half the corpus texts, and its
    // ByteFallback decode drops a U+FEFF that Rust keeps.
    const texts = formatTexts();
    const answers = new Map<string, Answer>();
    for (const text of [...texts.corpus, ...texts.hostile]) {
      if (answers.has(text)) continue;
      const ids = (await tokenizer.encode(text, null, { addSpecialTokens: false })).getIds();
      answers.set(text, { ids, decoded: await tokenizer.decode(ids, false) });
    }
    const problems = compareExpectations(texts, expect.encode, (text) => answers.get(text) as Answer, { decoded: true });
    assert.deepEqual(problems.slice(0, 10), [], `${problems.length} mismatches`);
  });
}
