import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { kimiChunks } from "../src/encoder/model/kimi-chunks.js";
import { readFormatDirectory, type TiktokenDirectory } from "../src/load/formats/directory.js";
import { readTekken } from "../src/load/formats/tekken.js";
import { compareExpectations, formatFixturePath, formatTexts, readFormatJson, shortIdsHash, type Expectations } from "./helpers/format-fixtures.js";
import { longTexts } from "./helpers/format-texts.js";
import { splitOnAddedTokens, TiktokenReference } from "./helpers/tiktoken-reference.js";

interface KimiExpect {
  pat_str: string;
  special_tokens: Array<[number, string]>;
  added_tokens: Array<[number, string, boolean]>;
  encode: Expectations;
  encode_slow: Expectations;
  long: Array<{ count: number; ids: string; cuts: Array<[number, number]>; slow_count: number; slow_ids: string }>;
}

async function kimi(): Promise<{ dir: TiktokenDirectory; expect: KimiExpect; ref: TiktokenReference }> {
  const dir = await readFormatDirectory(formatFixturePath("kimi"));
  assert.equal(dir.format, "tiktoken");
  const expect = readFormatJson<KimiExpect>("kimi", "expect.json");
  const t = dir as TiktokenDirectory;
  return { dir: t, expect, ref: new TiktokenReference(t.ranks, t.pattern.pattern, t.specialTokens) };
}

/** Kimi's own `encode(text)`: cut as Kimi cuts, each piece through tiktoken with specials allowed. */
function kimiEncode(ref: TiktokenReference, text: string): number[] {
  const out: number[] = [];
  for (const [s, e] of kimiChunks(text)) for (const id of ref.encode(text.slice(s, e), true)) out.push(id);
  return out;
}

/** UTF-16 offsets → code-point offsets, for comparing cuts with Python's. */
function codePointCuts(text: string, cuts: Array<[number, number]>): Array<[number, number]> {
  const cp = new Int32Array(text.length + 1);
  for (let i = 0, n = 0; i <= text.length; i++) {
    cp[i] = n;
    const c = text.charCodeAt(i);
    if (!(c >= 0xd800 && c <= 0xdbff && i + 1 < text.length)) n++;
  }
  return cuts.map(([s, e]) => [cp[s] as number, cp[e] as number]);
}

test("Kimi-shaped directory: tiktoken.model, the kimi family from auto_map, its pattern and 256 reserved specials named from added_tokens_decoder", async () => {
  const { dir, expect } = await kimi();
  assert.equal(dir.family?.family.name, "kimi");
  assert.match(dir.family?.reason ?? "", /auto_map/);
  assert.equal(dir.pattern.pattern, expect.pat_str, "the family table's Kimi pattern is the one tokenization_kimi.py uses");
  assert.match(dir.pattern.source, /kimi family/);
  assert.deepEqual(dir.specialTokens.map((s) => [s.id, s.text]), expect.special_tokens);
  assert.equal(dir.specialTokens.length, 256);
  assert.equal(dir.ranks.size, 20_000);
  assert.equal(dir.kimiChunks, true);
});

test("Kimi encode (tiktoken + Kimi's cuts) over the directory's tables equals tokenization_kimi.py on the corpora and hostile text; decode too", async () => {
  const { ref, expect } = await kimi();
  const problems = compareExpectations(formatTexts(), expect.encode, (text) => {
    const ids = kimiEncode(ref, text);
    return { ids, decoded: ref.decode(ids) };
  }, { decoded: true });
  assert.deepEqual(problems.slice(0, 10), [], `${problems.length} mismatches`);
});

test("Kimi's slow path (encode with keyword arguments): split at added tokens first, then Kimi encode on each part", async () => {
  const { ref, expect, dir } = await kimi();
  const config = JSON.parse(readFileSync(formatFixturePath("kimi", "tokenizer_config.json"), "utf8")) as {
    added_tokens_decoder: Record<string, { content: string }>;
  };
  const added = new Map(Object.entries(config.added_tokens_decoder).map(([id, t]) => [t.content, Number(id)]));
  assert.ok(dir.specialTokens.length > added.size);
  const problems = compareExpectations(formatTexts(), expect.encode_slow, (text) => ({
    ids: splitOnAddedTokens(text, added, (part) => kimiEncode(ref, part)),
  }));
  assert.deepEqual(problems.slice(0, 10), [], `${problems.length} mismatches`);
});

test("Kimi's long-text cuts (400,000-character slices, runs of at most 25,000) equal Python's, and so do the ids on long texts", async () => {
  const { ref, expect } = await kimi();
  const texts = longTexts();
  const config = JSON.parse(readFileSync(formatFixturePath("kimi", "tokenizer_config.json"), "utf8")) as {
    added_tokens_decoder: Record<string, { content: string }>;
  };
  const added = new Map(Object.entries(config.added_tokens_decoder).map(([id, t]) => [t.content, Number(id)]));
  texts.forEach((text, i) => {
    const want = expect.long[i];
    assert.ok(want !== undefined);
    assert.deepEqual(codePointCuts(text, kimiChunks(text)), want.cuts, `cuts of long text ${i}`);
    const ids = kimiEncode(ref, text);
    assert.equal(ids.length, want.count, `count of long text ${i}`);
    assert.equal(shortIdsHash(ids), want.ids, `ids of long text ${i}`);
    const slow = splitOnAddedTokens(text, added, (part) => kimiEncode(ref, part));
    assert.equal(shortIdsHash(slow), want.slow_ids, `slow-path ids of long text ${i}`);
  });
  // The rule changes ids where a special token's text straddles a cut: encode sees plain text.
  const straddle = texts.findIndex((t) => t.startsWith("q".repeat(24_998) + "<|im_end|>"));
  assert.notEqual(expect.long[straddle]?.ids, expect.long[straddle]?.slow_ids);
});

test("Kimi cuts with small limits equal Python's loop (values from tokenization_kimi.py): a class change never cuts, code points count", () => {
  assert.deepEqual(kimiChunks(""), []);
  assert.deepEqual(kimiChunks("ab  cd", 100, 1), [[0, 1], [1, 3], [3, 5], [5, 6]]);
  assert.deepEqual(kimiChunks("aaaa bb", 3, 100), [[0, 3], [3, 6], [6, 7]]);
  // code-point offsets [0, 2], [2, 3] are UTF-16 [0, 4], [4, 6]
  assert.deepEqual(kimiChunks("😀😀😀", 2, 100), [[0, 4], [4, 6]]);
});

interface Glm4Expect {
  pat_str: string;
  special_tokens: Array<[number, string]>;
  encode_ordinary: Expectations;
  encode_special: Expectations;
}

test("GLM-4-shaped directory: a tiktoken-style tokenizer.model, the pattern read from tokenization_chatglm.py, 14 specials after the ranks; ids equal tiktoken", async () => {
  const dir = (await readFormatDirectory(formatFixturePath("glm4"))) as TiktokenDirectory;
  const expect = readFormatJson<Glm4Expect>("glm4", "expect.json");
  assert.equal(dir.format, "tiktoken");
  assert.match(dir.file, /tokenizer\.model$/);
  assert.equal(dir.family?.family.name, "glm4");
  assert.equal(dir.pattern.pattern, expect.pat_str);
  assert.match(dir.pattern.source, /^tokenization_chatglm\.py:\d+ pat_str$/);
  assert.deepEqual(dir.specialTokens.map((s) => [s.id, s.text]), expect.special_tokens);
  const ref = new TiktokenReference(dir.ranks, dir.pattern.pattern, dir.specialTokens);
  const texts = formatTexts();
  const ordinary = compareExpectations(texts, expect.encode_ordinary, (text) => {
    const ids = ref.encode(text, false);
    return { ids, decoded: ref.decode(ids) };
  }, { decoded: true });
  assert.deepEqual(ordinary.slice(0, 10), [], `${ordinary.length} mismatches (specials as text)`);
  const special = compareExpectations(texts, expect.encode_special, (text) => ({ ids: ref.encode(text, true) }));
  assert.deepEqual(special.slice(0, 10), [], `${special.length} mismatches (specials allowed)`);
});

interface TekkenExpect {
  num_special_tokens: number;
  n_words: number;
  special_tokens: Array<[number, string]>;
  bos_id: number;
  eos_id: number;
  encode: Expectations;
  pieces: Array<[number, string]>;
}

for (const name of ["tekken", "tekken-v3"]) {
  test(`${name}.json: special slots, the vocabulary offset by them and cut to default_vocab_size; ids equal mistral-common`, () => {
    const file = formatFixturePath("tekken", `${name}.json`);
    const model = readTekken(readFileSync(file), file);
    const expect = readFormatJson<TekkenExpect>("tekken", `${name}.expect.json`);
    assert.equal(model.numSpecialTokens, expect.num_special_tokens);
    assert.equal(model.vocabSize, expect.n_words);
    assert.equal(model.ranks.size + model.numSpecialTokens, expect.n_words);
    assert.deepEqual(model.specialTokens.map((s) => [s.id, s.text]), expect.special_tokens);
    assert.equal(model.specialTokens.find((s) => s.text === "<s>")?.id, expect.bos_id);
    assert.equal(model.specialTokens.find((s) => s.text === "</s>")?.id, expect.eos_id);
    for (const [id, b64] of expect.pieces) {
      const r = id - model.numSpecialTokens;
      const bytes = model.ranks.bytes.subarray(model.ranks.offsets[r] as number, model.ranks.offsets[r + 1] as number);
      assert.equal(Buffer.from(bytes).toString("base64"), b64, `bytes of id ${id}`);
    }
    // mistral-common encodes text with no special tokens: `<s>` in text is ordinary text.
    const ref = new TiktokenReference(model.ranks, model.pattern, [], model.numSpecialTokens);
    const problems = compareExpectations(formatTexts(), expect.encode, (text) => {
      const ids = ref.encode(text, false);
      return { ids, decoded: ref.decode(ids) };
    }, { decoded: true });
    assert.deepEqual(problems.slice(0, 10), [], `${problems.length} mismatches`);
  });
}
