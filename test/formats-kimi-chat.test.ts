/**
 * The Kimi-shaped fixture's chats: tokenization_kimi.py's apply_chat_template renders with
 * `tokenize=False, add_generation_prompt=True` by default and deep-sorts the tools (every dict by
 * key, recursively) before rendering; tokenize=True goes through transformers' slow path, which
 * here gives the same ids as Kimi's own encode of the rendered text. Rendered with deltatok's
 * Python-semantics renderer and encoded with the test tiktoken reference.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { kimiChunks } from "../src/encoder/model/kimi-chunks.js";
import { compareCodePoints, isPlainObject, keysOf, parseJson, setKeyOrder } from "../src/json/index.js";
import { readFormatDirectory, type TiktokenDirectory } from "../src/load/formats/directory.js";
import { createRenderer } from "../src/render/renderer.js";
import { templateVariables } from "../src/render/variables.js";
import { formatFixturePath, readFormatJson, shortHash, shortIdsHash } from "./helpers/format-fixtures.js";
import { CORPUS_FILES } from "./helpers/format-texts.js";
import { repoPath } from "./helpers/paths.js";
import { TiktokenReference } from "./helpers/tiktoken-reference.js";

/** Kimi's deep_sort_dict: dicts rebuilt with keys in sorted (code point) order, recursively. */
function deepSort(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepSort);
  if (isPlainObject(value)) {
    const keys = [...keysOf(value as Record<string, unknown>)].sort(compareCodePoints);
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = deepSort((value as Record<string, unknown>)[k]);
    setKeyOrder(out, keys);
    return out;
  }
  return value;
}

test("Kimi chats: renders with add_generation_prompt and deep-sorted tools equal transformers', and their ids too", async () => {
  const dir = (await readFormatDirectory(formatFixturePath("kimi"))) as TiktokenDirectory;
  const ref = new TiktokenReference(dir.ranks, dir.pattern.pattern, dir.specialTokens);
  const expect = readFormatJson<{ chat: Array<{ rendered: string; rendered_length: number; count: number; ids: string }> }>("kimi", "expect.json");
  const renderer = createRenderer("python", readFileSync(formatFixturePath("kimi", "chat_template.jinja"), "utf8"));
  const config = JSON.parse(readFileSync(formatFixturePath("kimi", "tokenizer_config.json"), "utf8")) as Record<string, string>;
  const specials = { bos_token: config.bos_token, eos_token: config.eos_token, unk_token: config.unk_token, pad_token: config.pad_token };
  let k = 0;
  for (const file of CORPUS_FILES) {
    for (const line of readFileSync(repoPath(file), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const record = parseJson(line) as { messages: unknown[]; tools?: unknown[] };
      const want = expect.chat[k++];
      assert.ok(want !== undefined);
      const vars = templateVariables({ messages: record.messages, tools: deepSort(record.tools ?? null) as unknown[] | null, add_generation_prompt: true }, specials);
      const text = renderer.render(vars, new Date(0)).text;
      assert.equal(text.length, want.rendered_length, `render ${k}`);
      assert.equal(shortHash(text), want.rendered, `render ${k}`);
      const ids: number[] = [];
      for (const [s, e] of kimiChunks(text)) for (const id of ref.encode(text.slice(s, e), true)) ids.push(id);
      assert.equal(ids.length, want.count, `ids ${k}`);
      assert.equal(shortIdsHash(ids), want.ids, `ids ${k}`);
    }
  }
  assert.equal(k, expect.chat.length);
  // Without the deep sort the tools render differently (the corpus' schemas are not key-sorted).
  const first = parseJson(readFileSync(repoPath(CORPUS_FILES[0] as string), "utf8").split("\n")[0] as string) as { messages: unknown[]; tools: unknown[] };
  const unsorted = renderer.render(templateVariables({ messages: first.messages, tools: first.tools, add_generation_prompt: true }, specials), new Date(0)).text;
  assert.notEqual(shortHash(unsorted), expect.chat[0]?.rendered);
});
