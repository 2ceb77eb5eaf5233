/**
 * What the cache key and message chains do, seen through the public API: requests of one
 * conversation reuse each other, different tools/kwargs/generation prompt are different keys,
 * equal messages in new objects still find their conversation, the date matters only to
 * templates that read the clock, counts-only Deltatoks keep no ids.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { ChainHasher } from "../src/cache/chain.js";
import { initHasher } from "../src/cache/hash.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const convo = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "What is 2+2?" },
  { role: "assistant", content: "4" },
  { role: "user", content: "And 3+3?" },
  { role: "assistant", content: "6" },
];
const create = (o: Parameters<typeof Deltatok.create>[0] = {}) => Deltatok.create({ renderer: TEST_RENDERER, date: "2026-11-30", ...o });

test("message chains: equal content gives equal chains, any change changes the rest", async () => {
  await initHasher();
  const h = new ChainHasher();
  const a = h.chain(1n, convo);
  const b = h.chain(1n, JSON.parse(JSON.stringify(convo)) as unknown[]);
  assert.deepEqual(a, b, "new objects with equal content");
  const edited = convo.map((m, i) => (i === 2 ? { ...m, content: "four" } : m));
  const c = h.chain(1n, edited);
  assert.deepEqual(c.slice(0, 2), a.slice(0, 2));
  assert.ok(c.slice(2).every((x, i) => x !== a[i + 2]));
  assert.notDeepEqual(h.chain(2n, convo), a, "the key seeds the chain");
});

test("a conversation's later turns reuse earlier ones, even from freshly parsed objects", async () => {
  const dt = await create();
  dt.countPrompt(convo.slice(0, 2));
  const fresh = JSON.parse(JSON.stringify(convo)) as typeof convo;
  const r = dt.tokenizePrompt(fresh.slice(0, 4));
  assert.equal(r.outcome, "partial");
  assert.ok(r.reused > 0);
});

test("tools, kwargs and add_generation_prompt partition the cache", async () => {
  const dt = await create();
  dt.countPrompt(convo.slice(0, 2));
  const tools = [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object", properties: {} } } }];
  assert.equal(dt.tokenizePrompt(convo.slice(0, 4), { tools }).outcome, "miss");
  assert.equal(dt.tokenizePrompt(convo.slice(0, 4), { chat_template_kwargs: { enable_thinking: false } }).outcome, "miss");
  assert.equal(dt.tokenizePrompt(convo.slice(0, 4), { add_generation_prompt: false }).outcome, "miss");
  assert.equal(dt.tokenizePrompt(convo.slice(0, 4)).outcome, "partial");
  assert.equal(dt.stats().misses, 4);
});

test("the date is part of the key only for templates that read the clock", async () => {
  const clock = "{{ strftime_now('%d %b %Y') }}{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}";
  const noClock = "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}";
  const a = await create({ chatTemplate: clock, date: "2026-11-30" });
  const b = await create({ chatTemplate: clock, date: "2026-12-01" });
  assert.notEqual(a.renderPrompt(convo), b.renderPrompt(convo));
  assert.match(a.renderPrompt(convo), /^30 Nov 2026/);
  const c = await create({ chatTemplate: noClock });
  c.countPrompt(convo.slice(0, 2));
  assert.equal(c.tokenizePrompt(convo.slice(0, 4)).outcome, "partial");
});

test("counts-only Deltatoks answer counts without keeping ids; ids then cost a counted re-encode", async () => {
  const counts = await create({ storeIds: false });
  const full = await create({ mode: "full" });
  counts.countPrompt(convo.slice(0, 2));
  assert.equal(counts.countPrompt(convo.slice(0, 4)), full.countPrompt(convo.slice(0, 4)));
  const r = counts.tokenizePrompt(convo, {}, true);
  assert.deepEqual(Array.from(r.ids ?? []), Array.from(full.encodePrompt(convo)));
  assert.equal(r.reason, "ids_not_stored");
  assert.equal(counts.stats().fallbacks.ids_not_stored, 1);
});

test("option validation names the option", async () => {
  await assert.rejects(create({ cacheBytes: 10 }), { code: "DT_INVALID_OPTION" });
  await assert.rejects(create({ mode: "fast" as never }), { code: "DT_INVALID_OPTION" });
  await assert.rejects(create({ date: "yesterday" }), { code: "DT_INVALID_DATE" });
  const dt = await create();
  assert.throws(() => dt.countPrompt(convo, { chat_template_kwargs: { messages: [] } }), { code: "DT_INVALID_KWARGS" });
  assert.throws(() => dt.countPrompt(convo, { add_generation_prompt: "yes" as never }), { code: "DT_INVALID_OPTION" });
  assert.throws(() => dt.countText(42 as never), { code: "DT_INVALID_REQUEST" });
});
