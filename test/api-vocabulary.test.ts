/**
 * Decode, id ↔ token and the tokenizer's metadata equal the Rust tokenizers' (npm `tokenizers`,
 * the binding transformers' fast tokenizers call) for the five bundled tokenizers and six more:
 * decode of hostile texts' ids and of random ids (added tokens, ids past the vocabulary), with
 * and without skip_special_tokens; convert_ids_to_tokens / convert_tokens_to_ids; vocab_size and
 * len; a plain encode with add_special_tokens (the post-processor's tokens, or, for transformers'
 * Llama/Gemma classes, add_bos_token / add_eos_token).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import { Deltatok } from "../src/api/deltatok.js";
import { cleanUpTokenization } from "../src/api/vocabulary.js";
import { EXTRA_TOKENIZER_NAMES, TOKENIZER_NAMES, modelsDir, type AnyTokenizerName } from "./helpers/tokenizers.js";
import { rustIds, rustTokenizerFile } from "./helpers/rust.js";
import { hostileText } from "./helpers/texts.js";

const NAMES: AnyTokenizerName[] = [...TOKENIZER_NAMES, ...EXTRA_TOKENIZER_NAMES];

for (const name of NAMES) {
  test(`${name}: decode, tokens and sizes equal the Rust tokenizers'`, async () => {
    const dir = modelsDir(name);
    const dt = await Deltatok.create({ tokenizer: dir });
    const rust = rustTokenizerFile(join(dir, "tokenizer.json"));
    const info = dt.tokenizerInfo();
    assert.equal(info.vocab_size, rust.getVocabSize(false), "vocab_size");
    assert.equal(info.length, rust.getVocabSize(true), "len");
    const added = dt.tokenizer.tokenizerJson.added_tokens.map((a) => a.content);
    const addedIds = dt.tokenizer.tokenizerJson.added_tokens.map((a) => a.id);
    const texts = fc.sample(hostileText(added.slice(0, 40)), { numRuns: 60, seed: 20261130 });
    texts.push("Hello , world ! It 's a test . They 've done n't", "", " ");
    const cases: number[][] = [];
    for (const t of texts) cases.push(await rustIds(rust, t));
    // random ids: anywhere in the id space, added tokens, and past the vocabulary
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const top = info.length + 5;
    for (let i = 0; i < 60; i++) {
      const ids: number[] = [];
      for (let j = 0, n = Math.floor(rnd() * 10); j < n; j++) ids.push(rnd() < 0.25 ? (addedIds[Math.floor(rnd() * addedIds.length)] ?? 0) : Math.floor(rnd() * top));
      cases.push(ids);
    }
    for (const ids of cases) {
      for (const skip of [false, true]) {
        const want = await rust.decode(ids, skip);
        assert.equal(dt.decode(ids, { skip_special_tokens: skip, clean_up_tokenization_spaces: false }), want, `${JSON.stringify(ids)} skip=${skip}`);
        assert.equal(dt.decode(ids, { skip_special_tokens: skip, clean_up_tokenization_spaces: true }), cleanUpTokenization(want));
      }
      assert.deepEqual(
        dt.idsToTokens(ids),
        ids.map((id) => rust.idToToken(id) ?? null),
      );
    }
    // the tokenizer_config.json default of clean_up_tokenization_spaces
    const ids = cases[texts.length - 3] as number[];
    const plain = await rust.decode(ids, false);
    assert.equal(dt.decode(ids), info.clean_up_tokenization_spaces ? cleanUpTokenization(plain) : plain);
    const tokens = [...added.slice(0, 20), "hello", "Ġworld", "▁the", "not-a-token-at-all"];
    assert.deepEqual(dt.tokensToIds(tokens), tokens.map((t) => rust.tokenToId(t) ?? null));
    // a plain encode with add_special_tokens
    for (const t of texts.slice(0, 10)) {
      const bare = await rustIds(rust, t);
      assert.deepEqual(Array.from(dt.encodeText(t)), bare);
      const withSpecials = Array.from(dt.encodeText(t, { add_special_tokens: true }));
      if (info.special_ids_around.source === "tokenizer.json post_processor") {
        assert.deepEqual(withSpecials, (await rust.encode(t, null, { addSpecialTokens: true })).getIds(), t);
      } else {
        assert.deepEqual(withSpecials, [...info.special_ids_around.before, ...bare, ...info.special_ids_around.after]);
      }
    }
  });
}

test("Llama/Gemma classes add what add_bos_token / add_eos_token say; bad ids are coded errors", async () => {
  const ds = await Deltatok.create({ tokenizer: modelsDir("deepseek_v3") });
  const info = ds.tokenizerInfo();
  // DeepSeek-V3: LlamaTokenizerFast, add_bos_token true; its tokenizer.json post-processor adds nothing
  assert.equal(info.tokenizer_class, "LlamaTokenizerFast");
  assert.deepEqual(info.special_ids_around.before, [info.special_token_ids.bos_token]);
  assert.deepEqual(info.special_ids_around.after, []);
  const qwen = await Deltatok.create({ tokenizer: "qwen3" });
  assert.deepEqual(qwen.tokenizerInfo().special_ids_around, { before: [], after: [], source: "tokenizer.json post_processor" });
  assert.equal(qwen.decode([]), "");
  assert.throws(() => qwen.decode([-1]), { code: "DT_INVALID_REQUEST", path: "ids[0]" });
  assert.throws(() => qwen.decode([1.5]), { code: "DT_INVALID_REQUEST" });
  assert.throws(() => qwen.decode("abc" as never), { code: "DT_INVALID_REQUEST" });
  assert.throws(() => qwen.decode([1], { skip: true } as never), { code: "DT_INVALID_OPTION" });
  assert.throws(() => qwen.encodeText("x", { add_special_tokens: "yes" } as never), { code: "DT_INVALID_OPTION" });
  assert.throws(() => qwen.tokensToIds([1] as never), { code: "DT_INVALID_REQUEST" });
  const list = qwen.tokenList();
  assert.equal(list.length, Math.max(...Object.keys(qwen.tokenizerInfo().added_tokens_decoder).map(Number)) + 1);
  assert.equal(list[qwen.tokensToIds(["<|im_end|>"])[0] as number], "<|im_end|>");
});
