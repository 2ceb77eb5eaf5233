/**
 * Directories without tokenizer.json, loaded as `--tokenizer DIR` loads them (loadTokenizer):
 * the ids and decode of each format's fixture equal its reference (the expectation files made by
 * scripts/make-format-fixtures.py) on the corpora and hostile texts — Kimi through transformers'
 * slow path (what apply_chat_template and add_special_tokens=False count), GLM-4 and the OpenAI
 * layout through tiktoken with special tokens allowed, tekken.json through mistral-common,
 * SentencePiece through transformers 5's conversion — and the pattern option and its refusals.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { clearTokenizerCache, loadTokenizer } from "../src/load/index.js";
import { compareExpectations, formatFixturePath, formatTexts, readFormatJson, shortHash, shortIdsHash, type Expectations, type FullRow, type HashRow } from "./helpers/format-fixtures.js";
import { longTexts } from "./helpers/format-texts.js";

/** Decoded-text mismatches: `decode(ids)` against the reference's decode of its own ids of the same text. */
function compareDecoded(expect: Expectations, decode: (text: string) => string, at: number): string[] {
  const texts = formatTexts();
  const problems: string[] = [];
  const check = (kind: string, i: number, text: string, row: FullRow | HashRow): void => {
    const got = decode(text);
    const want = Array.isArray(row) ? row[at] : row.decoded;
    const ok = Array.isArray(row) ? shortHash(got) === want : got === want;
    if (!ok) problems.push(`${kind}[${i}]: decoded ${JSON.stringify(got.slice(0, 60))}`);
  };
  texts.corpus.forEach((t, i) => check("corpus", i, t, expect.corpus[i] as HashRow));
  texts.hostile.forEach((t, i) => check("hostile", i, t, expect.hostile[i] as FullRow | HashRow));
  return problems;
}

interface KimiExpect {
  encode: Expectations;
  encode_slow: Expectations;
  long: Array<{ slow_count: number; slow_ids: string }>;
}

test("Kimi-shaped directory loads on deltatok's encoder: ids equal transformers' slow path (tokenization_kimi.py), decode equal, long texts cut as Kimi cuts", async () => {
  const loaded = await loadTokenizer(formatFixturePath("kimi"));
  const enc = loaded.tokenizer;
  assert.equal(enc.engine, "deltatok");
  assert.ok(loaded.patterns.notes.some((n) => /scanner kimi\/rust-regex/.test(n)), loaded.patterns.notes.join("; "));
  const expect = readFormatJson<KimiExpect>("kimi", "expect.json");
  const problems = compareExpectations(formatTexts(), expect.encode_slow, (text) => ({ ids: enc.encode(text) }));
  assert.deepEqual(problems.slice(0, 10), [], `${problems.length} mismatches`);
  const decoded = compareDecoded(expect.encode, (text) => enc.decode(enc.encode(text)), 2);
  assert.deepEqual(decoded.slice(0, 10), [], `${decoded.length} decode mismatches`);
  const long = longTexts();
  assert.equal(long.length, expect.long.length);
  long.forEach((text, i) => {
    const ids = enc.encode(text);
    assert.equal(ids.length, expect.long[i]?.slow_count, `long[${i}] count`);
    assert.equal(shortIdsHash(ids), expect.long[i]?.slow_ids, `long[${i}] ids`);
  });
  // reserved names are tiktoken specials, added_tokens_decoder names raw added tokens
  const json = loaded.tokenizerJson;
  assert.equal(json.added_tokens.length, 256);
  assert.equal(json.added_tokens.filter((t) => !t.normalized).length, 19);
  assert.equal(enc.tokenToId("<|im_end|>"), 20002);
});

test("GLM-4-shaped directory: ids equal tiktoken with its specials allowed", async () => {
  const loaded = await loadTokenizer(formatFixturePath("glm4"));
  assert.equal(loaded.tokenizer.engine, "deltatok");
  const expect = readFormatJson<{ encode_special: Expectations }>("glm4", "expect.json");
  const problems = compareExpectations(formatTexts(), expect.encode_special, (text) => ({ ids: loaded.tokenizer.encode(text) }));
  assert.deepEqual(problems.slice(0, 10), [], `${problems.length} mismatches`);
});

for (const [file, expectFile] of [["tekken.json", "tekken.expect.json"], ["tekken-v3.json", "tekken-v3.expect.json"]] as const) {
  test(`tekken directory (${file}): ids and decode equal mistral-common's, special slots decode but never match`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "deltatok-tekken-"));
    copyFileSync(formatFixturePath("tekken", file), join(dir, "tekken.json"));
    const loaded = await loadTokenizer(dir);
    const enc = loaded.tokenizer;
    assert.equal(enc.engine, "deltatok");
    const expect = readFormatJson<{ encode: Expectations; num_special_tokens: number; special_tokens: Array<[number, string]> }>("tekken", expectFile);
    const problems = compareExpectations(formatTexts(), expect.encode, (text) => {
      const ids = enc.encode(text);
      return { ids, decoded: enc.decode(ids) };
    }, { decoded: true });
    assert.deepEqual(problems.slice(0, 10), [], `${problems.length} mismatches`);
    assert.ok(enc.encode("<s>[INST]").every((id) => id >= expect.num_special_tokens), "special texts are text");
    const first = expect.special_tokens[1];
    if (first !== undefined) assert.equal(enc.idToToken(first[0]), first[1]);
    assert.equal(loaded.tokenizerJson.added_tokens.length, 0, "no boundary tokens: reuse needs none");
  });
}

const SPM_BPE = ["bpe-identity-bf.llama", "bpe-identity-bf.llama-legacy", "mistral-v3.llama", "mistral-v3.llama-legacy", "bpe-identity-suffix.generic"];
const SPM_UNIGRAM = ["unigram-cf-noprefix.generic", "unigram-nfkc-bf.generic"];

async function spmDirectory(name: string) {
  const model = name.slice(0, name.indexOf("."));
  const expect = readFormatJson<{ config: Record<string, unknown>; encode: Expectations }>("sentencepiece", `${name}.transformers.json`);
  const dir = mkdtempSync(join(tmpdir(), "deltatok-spm-"));
  copyFileSync(formatFixturePath("sentencepiece", `${model}.model`), join(dir, "tokenizer.model"));
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify(expect.config));
  return { loaded: await loadTokenizer(dir), expect };
}

for (const name of [...SPM_BPE, ...SPM_UNIGRAM]) {
  const kind = SPM_BPE.includes(name) ? "BPE" : "Unigram";
  test(`SentencePiece ${kind} directory ${name}: on deltatok's encoder, ids and decode equal transformers 5's AutoTokenizer`, async () => {
    const { loaded, expect } = await spmDirectory(name);
    const enc = loaded.tokenizer;
    assert.equal(enc.engine, "deltatok");
    const problems = compareExpectations(formatTexts(), expect.encode, (text) => {
      const ids = enc.encode(text);
      return { ids, decoded: enc.decode(ids) };
    }, { decoded: true });
    assert.deepEqual(problems.slice(0, 10), [], `${problems.length} mismatches`);
  });
}

test("the mistral-v3-chat fixture (a symlinked model, LlamaTokenizer legacy false) loads with its template and specials", async () => {
  const loaded = await loadTokenizer(formatFixturePath("mistral-v3-chat"));
  assert.equal(loaded.tokenizer.engine, "deltatok");
  assert.ok(loaded.templates.has("default"));
  assert.equal(loaded.specialTokens["bos_token"], "<s>");
  assert.deepEqual(loaded.tokenizer.encode("<s>[INST] hi[/INST]").slice(0, 2), [1, 3]);
});

test("pattern option: overrides a tiktoken directory's pattern (another identity), refused elsewhere", async () => {
  clearTokenizerCache();
  const own = await loadTokenizer(formatFixturePath("glm4"));
  const split = await loadTokenizer(formatFixturePath("glm4"), { pattern: String.raw`\S+|\s+` });
  assert.notEqual(own.id, split.id);
  assert.notDeepEqual(own.tokenizer.encode("Hello, world"), split.tokenizer.encode("Hello, world"));
  assert.equal(split.tokenizer.decode(split.tokenizer.encode("Hello, world")), "Hello, world");
  await assert.rejects(loadTokenizer(formatFixturePath("mistral-v3-chat"), { pattern: "x" }), { code: "DT_INVALID_OPTION" });
  await assert.rejects(loadTokenizer("qwen3", { pattern: "x" }), { code: "DT_INVALID_OPTION" });
  await assert.rejects(loadTokenizer(formatFixturePath("glm4"), { pattern: "" }), { code: "DT_INVALID_OPTION" });
});

test("a tiktoken directory of no known family and no pattern: DT_TOKENIZER_PATTERN_MISSING naming --pattern; with one it loads", async () => {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-nofamily-"));
  copyFileSync(formatFixturePath("glm4", "tokenizer.model"), join(dir, "tokenizer.model"));
  await assert.rejects(loadTokenizer(dir), (e: unknown) => {
    assert.equal((e as { code?: string }).code, "DT_TOKENIZER_PATTERN_MISSING");
    assert.match((e as Error).message, /pattern/);
    return true;
  });
  const loaded = await loadTokenizer(dir, { pattern: readFormatJson<{ pat_str: string }>("glm4", "expect.json").pat_str });
  assert.equal(loaded.tokenizer.encode("<|endoftext|>").length > 1, true, "no family, no added_tokens_decoder: no specials");
  const text = readFileSync(formatFixturePath("glm4", "tokenization_chatglm.py"), "utf8");
  assert.equal(loaded.tokenizer.decode(loaded.tokenizer.encode(text)), text);
});

test("OpenAI encodings by name: found in the npm tiktoken package, ids equal tiktoken's (its WASM build of the Rust crate) with every special allowed", async () => {
  const { get_encoding } = await import("tiktoken");
  const texts = formatTexts();
  const all = [...texts.corpus, ...texts.hostile];
  for (const name of ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"] as const) {
    const loaded = await loadTokenizer(name, { env: {} });
    assert.equal(loaded.origin, "encoding");
    assert.ok(loaded.patterns.notes[0]?.includes("npm tiktoken"), loaded.patterns.notes.join("; "));
    const ref = get_encoding(name);
    try {
      let differ = 0;
      for (const text of all) {
        const want = Array.from(ref.encode(text, "all"));
        const got = loaded.tokenizer.encode(text);
        if (JSON.stringify(got) !== JSON.stringify(want)) differ++;
      }
      assert.equal(differ, 0, `${name}: ${differ} of ${all.length} texts differ`);
    } finally {
      ref.free();
    }
  }
});

test("OpenAI encodings: DELTATOK_TIKTOKEN_DIR first; a file that is not the published one, or none anywhere, is a coded error", async () => {
  const { npmRanksToRankFile } = await import("../src/load/formats/openai-encodings.js");
  const { createRequire } = await import("node:module");
  const npm = createRequire(import.meta.url).resolve("tiktoken/encoders/r50k_base.json");
  const bytes = npmRanksToRankFile((JSON.parse(readFileSync(npm, "utf8")) as { bpe_ranks: string }).bpe_ranks, npm);
  const dir = mkdtempSync(join(tmpdir(), "deltatok-encodings-"));
  writeFileSync(join(dir, "r50k_base.tiktoken"), bytes);
  const loaded = await loadTokenizer("r50k_base", { env: { DELTATOK_TIKTOKEN_DIR: dir } });
  assert.ok(loaded.patterns.notes[0]?.includes("DELTATOK_TIKTOKEN_DIR"));
  assert.deepEqual(loaded.tokenizer.encode("hello world<|endoftext|>"), [31373, 995, 50256]);
  writeFileSync(join(dir, "r50k_base.tiktoken"), bytes.subarray(0, bytes.length - 100));
  await assert.rejects(loadTokenizer("r50k_base", { env: { DELTATOK_TIKTOKEN_DIR: dir } }), { code: "DT_TOKENIZER_INVALID" });
  const { loadTokenizerWith } = await import("../src/load/load.js");
  const noNpm = () => {
    throw new Error("not installed");
  };
  await assert.rejects(loadTokenizerWith("cl100k_base", { env: { TIKTOKEN_CACHE_DIR: dir } }, noNpm), (e: unknown) => {
    assert.equal((e as { code?: string }).code, "DT_TOKENIZER_NOT_FOUND");
    assert.match((e as Error).message, /DELTATOK_TIKTOKEN_DIR/);
    return true;
  });
});
