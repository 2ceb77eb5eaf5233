/**
 * Options nobody reads are refused, not ignored: an unknown key of `Deltatok.create` or of any
 * request method is DT_INVALID_OPTION naming it (a misspelled snake/camel variant gets the
 * option it meant; an option of the other entry point says where it belongs), options are read
 * once (a throwing getter is DT_INVALID_OPTION, not DT_INTERNAL), and known options with
 * undefined values still mean "the default".
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { DeltatokError } from "../src/errors.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const convo = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "What is 2+2?" },
  { role: "assistant", content: "4" },
];
const create = (o: Record<string, unknown> = {}) => Deltatok.create({ renderer: TEST_RENDERER, date: "2026-11-30", ...o } as Parameters<typeof Deltatok.create>[0]);

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

test("Deltatok.create: unknown options are DT_INVALID_OPTION naming them, with the option meant", async () => {
  let e = await rejects(create({ chat_template: "{{ 1 }}" }), "DT_INVALID_OPTION");
  assert.equal(e.path, "options.chat_template");
  assert.ok(e.message.includes("chatTemplate"), "the hint names chatTemplate");
  e = await rejects(create({ store_ids: false }), "DT_INVALID_OPTION");
  assert.equal(e.path, "options.store_ids");
  assert.ok(e.message.includes("storeIds"));
  e = await rejects(create({ tokeniser: "qwen3" }), "DT_INVALID_OPTION");
  assert.ok(e.message.includes('"tokenizer"'), "a near miss gets a hint");
  e = await rejects(create({ tools: [] }), "DT_INVALID_OPTION");
  assert.ok(e.message.includes("countPrompt"), "a request option names where it belongs");
  e = await rejects(create({ bogus: 1, other: 2 }), "DT_INVALID_OPTION");
  assert.ok(e.message.includes("bogus") && e.message.includes("other"), "every unknown key is named");
  // a known option left undefined is the default, as before
  const dt = await create({ chatTemplate: undefined, cacheBytes: undefined });
  assert.equal(dt.options.cacheBytes, 256 * 1024 * 1024);
});

test("Deltatok.create: options are read once; a throwing getter is DT_INVALID_OPTION", async () => {
  const o = { renderer: TEST_RENDERER } as Record<string, unknown>;
  Object.defineProperty(o, "mode", { enumerable: true, get: () => { throw new Error("boom"); } });
  const e = await rejects(Deltatok.create(o as never), "DT_INVALID_OPTION");
  assert.equal(e.path, "options.mode");
  let reads = 0;
  const counted = { renderer: TEST_RENDERER, date: "2026-11-30" } as Record<string, unknown>;
  Object.defineProperty(counted, "mode", { enumerable: true, get: () => (reads++ === 0 ? "full" : "bogus") });
  const dt = await Deltatok.create(counted as never);
  assert.equal(dt.options.mode, "full");
  assert.equal(reads, 1);
  const trap = new Proxy({}, { ownKeys: () => { throw new Error("no keys"); } });
  await rejects(Deltatok.create(trap as never), "DT_INVALID_OPTION");
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  await rejects(Deltatok.create(proxy as never), "DT_INVALID_OPTION");
  await rejects(Deltatok.create([] as never), "DT_INVALID_OPTION");
  await rejects(Deltatok.create(null as never), "DT_INVALID_OPTION");
});

test("request methods: unknown options are DT_INVALID_OPTION, camelCase variants get the snake_case name", async () => {
  const dt = await create();
  let e = coded(() => dt.countPrompt(convo.slice(0, 2), { addGenerationPrompt: false } as never), "DT_INVALID_OPTION");
  assert.equal(e.path, "addGenerationPrompt");
  assert.ok(e.message.includes("add_generation_prompt"));
  e = coded(() => dt.encodePrompt(convo.slice(0, 2), { chatTemplateKwargs: {} } as never), "DT_INVALID_OPTION");
  assert.ok(e.message.includes("chat_template_kwargs"));
  e = coded(() => dt.tokenizePrompt(convo.slice(0, 2), { tool: [] } as never), "DT_INVALID_OPTION");
  assert.ok(e.message.includes('"tools"'));
  coded(() => dt.renderPrompt(convo.slice(0, 2), { documnets: [] } as never), "DT_INVALID_OPTION");
  coded(() => dt.tokenizeTrajectory(convo, { parseToolArguments: true } as never), "DT_INVALID_OPTION");
  e = coded(() => dt.countPrompt(convo.slice(0, 2), { date: "2026-01-01" } as never), "DT_INVALID_OPTION");
  assert.ok(e.message.includes("Deltatok.create"), "a Deltatok option names where it belongs");
  // countMessage takes fewer: OSL is defined without tools or a generation prompt
  coded(() => dt.countMessage(convo[2], { tools: [] } as never), "DT_INVALID_OPTION");
  coded(() => dt.countMessage(convo[2], { add_generation_prompt: true } as never), "DT_INVALID_OPTION");
  coded(() => dt.countMessage(convo[2], { chatTemplate: "x" } as never), "DT_INVALID_OPTION");
  coded(() => dt.countPrompt(convo.slice(0, 2), null as never), "DT_INVALID_OPTION");
  coded(() => dt.countPrompt(convo.slice(0, 2), [] as never), "DT_INVALID_OPTION");
  const r = Proxy.revocable({}, {});
  r.revoke();
  coded(() => dt.countPrompt(convo.slice(0, 2), r.proxy), "DT_INVALID_OPTION");
  // every known option is accepted, undefined ones too, and the Deltatok still answers
  const n = dt.countPrompt(convo.slice(0, 2));
  assert.equal(
    dt.countPrompt(convo.slice(0, 2), {
      tools: undefined,
      documents: null,
      add_generation_prompt: true,
      chat_template: undefined,
      chat_template_kwargs: {},
      parse_tool_arguments: false,
    }),
    n,
  );
  assert.equal(dt.countMessage(convo[2], { chat_template_kwargs: {}, parse_tool_arguments: false, chat_template: undefined }), dt.countMessage(convo[2]));
});

test("request options are read once: a throwing getter is DT_INVALID_OPTION, a changing one is read once", async () => {
  const dt = await create();
  const bad = {};
  Object.defineProperty(bad, "tools", { enumerable: true, get: () => { throw new Error("boom"); } });
  const e = coded(() => dt.countPrompt(convo.slice(0, 2), bad), "DT_INVALID_OPTION");
  assert.equal(e.path, "tools");
  let reads = 0;
  const flip = {};
  Object.defineProperty(flip, "add_generation_prompt", { enumerable: true, get: () => (reads++ === 0 ? false : 7) });
  assert.equal(dt.countPrompt(convo.slice(0, 2), flip), dt.countPrompt(convo.slice(0, 2), { add_generation_prompt: false }));
  assert.equal(reads, 1);
});
