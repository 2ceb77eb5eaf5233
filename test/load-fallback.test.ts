/**
 * A tokenizer.json using a component deltatok's encoder does not implement still loads — on
 * @huggingface/tokenizers' stock pipeline — and says so, never silently: the load warns with
 * DELTATOK_TOKENIZER_FALLBACK naming the component, `tokenizer.engine` is "fallback",
 * `patterns.exact` is false, `Deltatok.tokenizerEngine` and a replay summary carry it, and a pool
 * loads it per worker (no shared tables). A tokenizer the encoder implements reports "deltatok".
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { clearTokenizerCache, loadTokenizer } from "../src/load/index.js";
import { runCli } from "./helpers/cli.js";
import { rustIds, rustTokenizerFile } from "./helpers/rust.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { modelsDir } from "./helpers/tokenizers.js";

/** A WordPiece tokenizer (BERT-style): a model type deltatok's encoder does not implement. */
function wordPieceJson(): Record<string, unknown> {
  const vocab: Record<string, number> = { "[UNK]": 0, "[CLS]": 1, "[SEP]": 2, hello: 3, world: 4, "##s": 5, ",": 6, "!": 7, the: 8 };
  return {
    version: "1.0", truncation: null, padding: null,
    added_tokens: [
      { id: 0, content: "[UNK]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: 1, content: "[CLS]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: 2, content: "[SEP]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    ],
    normalizer: { type: "Lowercase" },
    pre_tokenizer: { type: "WhitespaceSplit" },
    post_processor: null,
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab },
  };
}

function waitForWarning(code: string): Promise<Error & { code?: string }> {
  return new Promise((resolve) => {
    const on = (w: Error & { code?: string }): void => {
      if (w.code !== code) return;
      process.off("warning", on);
      resolve(w);
    };
    process.on("warning", on);
  });
}

test("an unimplemented component loads on the library's stock pipeline, loudly", async () => {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-fallback-"));
  try {
    writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(wordPieceJson()));
    writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ chat_template: "{% for m in messages %}[CLS]{{ m.content }}[SEP]{% endfor %}" }));
    clearTokenizerCache();
    const warned = waitForWarning("DELTATOK_TOKENIZER_FALLBACK");
    const loaded = await loadTokenizer(dir);
    const w = await warned;
    assert.match(w.message, /model\.type WordPiece/);
    assert.equal(loaded.tokenizer.engine, "fallback");
    assert.equal(loaded.tokenizer.unsupported, "model.type WordPiece");
    assert.equal(loaded.patterns.exact, false);
    const rust = rustTokenizerFile(join(dir, "tokenizer.json"));
    for (const text of ["Hello worlds !", "hello, the worlds!", "HELLO world unknown"]) assert.deepEqual(loaded.tokenizer.encode(text), await rustIds(rust, text), text);
    assert.equal(loaded.tokenizer.decode([]), "", "no ids decode to nothing, as in the Rust crate");

    const dt = await Deltatok.create({ tokenizer: dir, renderer: TEST_RENDERER, date: "2026-11-30" });
    assert.deepEqual(dt.tokenizerEngine, { engine: "fallback", unsupported: "model.type WordPiece" });
    assert.deepEqual(Array.from(dt.encodePrompt([{ role: "user", content: "hello world" }], { add_generation_prompt: false })), await rustIds(rust, "[CLS]hello world[SEP]"));

    const corpus = join(dir, "c.jsonl");
    writeFileSync(corpus, JSON.stringify({ id: "a", messages: [{ role: "user", content: "hello" }, { role: "assistant", content: "world!" }] }) + "\n");
    const r = await runCli(["replay", corpus, "--tokenizer", dir, "--date", "2026-11-30", "--summary", join(dir, "s.json")]);
    assert.equal(r.code, 0, r.stderr);
    const { readFileSync } = await import("node:fs");
    const summary = JSON.parse(readFileSync(join(dir, "s.json"), "utf8")) as Record<string, unknown>;
    assert.equal(summary["tokenizer_engine"], "fallback");
    assert.equal(summary["tokenizer_unsupported"], "model.type WordPiece");
    assert.match(r.stderr, /DELTATOK_TOKENIZER_FALLBACK/);
  } finally {
    clearTokenizerCache();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a tokenizer the encoder implements reports deltatok's encoder", async () => {
  const dt = await Deltatok.create({ tokenizer: modelsDir("qwen3"), renderer: TEST_RENDERER, date: "2026-11-30" });
  assert.deepEqual(dt.tokenizerEngine, { engine: "deltatok" });
  assert.equal(dt.tokenizer.patterns.exact, true);
  assert.ok(dt.tokenizer.patterns.notes.length > 0);
});
