/**
 * continue_final_message as transformers does it (api/continue.ts): the render of every vendored
 * case equals the reference (Python Jinja2 + transformers' sentinel cut,
 * test/fixtures/continue/cases.json) and its ids equal the Rust tokenizers' (count and ids hash);
 * refusals have the code of transformers' ValueError; a continued request in the middle of a
 * conversation leaves the cache exact; the sidecar takes the option (in process and through a
 * worker's item path).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Deltatok } from "../src/api/deltatok.js";
import type { PromptOptions } from "../src/api/options.js";
import { answer } from "../src/serve/in-process.js";
import { ConversationMessages } from "../src/api/conversations.js";
import { runItem } from "../src/pool/work.js";
import { repoPath } from "./helpers/paths.js";

interface Case {
  template: string;
  tokenizer: string;
  name: string;
  messages: unknown[];
  continue_final_message: boolean | string;
  add_generation_prompt: boolean;
  expect: { rendered?: string; count?: number; ids_sha?: string; error?: string };
}
const fixture = JSON.parse(readFileSync(repoPath("test", "fixtures", "continue", "cases.json"), "utf8")) as { now: string; cases: Case[] };

const deltatoks = new Map<string, Promise<Deltatok>>();
function deltatok(template: string, tokenizer: string, mode: "incremental" | "full" = "incremental"): Promise<Deltatok> {
  const key = `${template}/${tokenizer}/${mode}`;
  let e = deltatoks.get(key);
  if (e === undefined) {
    const chatTemplate = readFileSync(repoPath("test", "fixtures", "template", "golden", "templates", `${template}.jinja`), "utf8");
    e = Deltatok.create({ tokenizer, chatTemplate, date: fixture.now, mode });
    deltatoks.set(key, e);
  }
  return e;
}

const idsSha = (ids: Uint32Array) => createHash("sha256").update(new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength)).digest("hex").slice(0, 16);

/** The deltatok code of each reference error: transformers' ValueErrors, Python errors in the template. */
function expectedCode(error: string): string {
  if (error.includes("add_generation_prompt are not compatible")) return "DT_INVALID_OPTION";
  if (error.startsWith("ValueError: continue_final_message")) return "DT_CONTINUE_FINAL_MESSAGE";
  return "DT_TEMPLATE_RUNTIME";
}

function options(c: Case): PromptOptions {
  const o: PromptOptions = { continue_final_message: c.continue_final_message };
  if (c.add_generation_prompt) o.add_generation_prompt = true;
  return o;
}

test("renders and ids equal the reference for every vendored case", async () => {
  assert.ok(fixture.cases.length >= 90);
  let renders = 0;
  for (const c of fixture.cases) {
    const dt = await deltatok(c.template, c.tokenizer);
    const what = `${c.template} / ${c.name}`;
    if (c.expect.error !== undefined) {
      const code = expectedCode(c.expect.error);
      assert.throws(() => dt.renderPrompt(c.messages, options(c)), { code }, what);
      assert.throws(() => dt.encodePrompt(c.messages, options(c)), { code }, what);
      continue;
    }
    renders++;
    assert.equal(dt.renderPrompt(c.messages, options(c)), c.expect.rendered, what);
    for (let round = 0; round < 2; round++) {
      // twice: a miss, then an answer from the cache
      const ids = dt.encodePrompt(c.messages, options(c));
      assert.equal(ids.length, c.expect.count, what);
      assert.equal(idsSha(ids), c.expect.ids_sha, what);
    }
  }
  assert.ok(renders >= 50);
});

test("a continued request between ordinary ones leaves every answer equal to full mode", async () => {
  const dt = await deltatok("qwen3", "qwen3");
  const full = await deltatok("qwen3", "qwen3", "full");
  const msgs: unknown[] = [{ role: "system", content: "Be brief." }, { role: "user", content: "Name three rivers." }];
  for (let turn = 0; turn < 4; turn++) {
    const plain = { add_generation_prompt: true };
    assert.deepEqual(dt.encodePrompt(msgs, plain), full.encodePrompt(msgs, plain), `turn ${turn}`);
    const prefill = [...msgs, { role: "assistant", content: `Rivers: the Nile, ${"the Amazon, ".repeat(turn)}and` }];
    const cont = { continue_final_message: true };
    assert.deepEqual(dt.encodePrompt(prefill, cont), full.encodePrompt(prefill, cont), `turn ${turn} continued`);
    assert.equal(dt.countPrompt(prefill, cont), full.countPrompt(prefill, cont));
    msgs.push({ role: "assistant", content: `Nile, Amazon, Danube (${turn}).` }, { role: "user", content: `And ${turn + 1} more?` });
  }
  // the library default: no generation prompt when the final message is continued
  const ids = dt.encodePrompt([{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello" }], { continue_final_message: true });
  assert.ok(dt.tokenizer.tokenizer.decode(Array.from(ids)).endsWith("Hello"));
});

test("option checks: type, and the conflicts transformers refuses", async () => {
  const dt = await deltatok("qwen3", "qwen3");
  const m = [{ role: "user", content: "Hi" }, { role: "assistant", content: "He" }];
  assert.throws(() => dt.countPrompt(m, { continue_final_message: 1 as unknown as boolean }), { code: "DT_INVALID_OPTION", path: "continue_final_message" });
  assert.throws(() => dt.countPrompt(m, { continue_final_message: "" }), { code: "DT_INVALID_OPTION" });
  assert.throws(() => dt.countPrompt(m, { continue_final_message: true, add_generation_prompt: true }), { code: "DT_INVALID_OPTION" });
  assert.throws(() => dt.tokenizeTrajectory(m, { continue_final_message: true }), { code: "DT_INVALID_OPTION" });
  assert.throws(() => dt.countMessage(m[1], { continue_final_message: true } as never), { code: "DT_INVALID_OPTION" });
  assert.equal(dt.countPrompt(m, { continue_final_message: false, add_generation_prompt: true }), dt.countPrompt(m));
  // the caller's messages are not modified
  assert.deepEqual(m, [{ role: "user", content: "Hi" }, { role: "assistant", content: "He" }]);
});

test("the sidecar takes continue_final_message, in process and on a worker's item path", async () => {
  const dt = await deltatok("qwen3", "qwen3");
  const m = [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello th" }];
  const want = Array.from(dt.encodePrompt(m, { continue_final_message: true }));
  const held = new ConversationMessages();
  const r = answer(dt, "encode_prompt", { messages: m, continue_final_message: true, add_generation_prompt: false }, held) as { ids: number[] };
  assert.deepEqual(r.ids, want);
  const w = runItem(dt, { k: "prompt", json: JSON.stringify({ messages: m, continue_final_message: true }), ids: true });
  assert.ok(w.ok);
  assert.deepEqual(Array.from((w as { ids: Uint32Array }).ids), want);
  const bad = answer.bind(null, dt, "count_prompt", { messages: m, continue_final_message: true, add_generation_prompt: true }, held);
  assert.throws(bad, { code: "DT_INVALID_OPTION" });
});
