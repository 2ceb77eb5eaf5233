/**
 * The scheduler's cost model (src/pool/cost.ts): the counts a skim of a corpus line gives, and
 * the order they put lines in — requests and history weigh, not only bytes; a line the skim
 * cannot follow is estimated by its length.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { COST_MODEL, costOf, estimateLineCost, lineFeatures } from "../src/pool/cost.js";
import { LongestFirst } from "../src/pool/schedule.js";

const line = (messages: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ id: "x", ...extra, messages });

test("lineFeatures: requests, message, assistant and tool characters, history messages per request", () => {
  const m = [
    { role: "system", content: "s" },
    { role: "user", content: "hello" },
    { role: "assistant", content: "hi" },
    { role: "user", content: "and?" },
    { role: "assistant", content: "", tool_calls: [{ type: "function", function: { name: "f", arguments: "{}" } }] },
    { role: "tool", content: "{\"role\": \"assistant\"}" },
  ];
  const text = line(m, { tools: [{ type: "function", function: { name: "f" } }] });
  const f = lineFeatures(text);
  const chars = (x: unknown) => JSON.stringify(x).length;
  assert.deepEqual(f, {
    requests: 2,
    messageChars: m.reduce((a, x) => a + chars(x), 0),
    assistantChars: chars(m[2]) + chars(m[4]),
    toolChars: chars(m[5]),
    // the first assistant message has 2 messages before it, the second 4
    historyMessages: 2 + 4,
  });
  // whitespace between tokens, a role that is not a plain string, and an escaped key are followed
  const spaced = '{ "messages" : [ {"role" : "user", "content":"a"} , {"content":"b", "r\\u006fle":"assistant"} ], "id": 1 }';
  assert.deepEqual(lineFeatures(spaced), { requests: 1, messageChars: 32 + 40, assistantChars: 40, toolChars: 0, historyMessages: 1 });
});

test("lineFeatures: null on a line it cannot follow; the estimate is then by length", () => {
  for (const bad of ['{"messages": [1, 2', "[1, 2]", '{"id": "x"}', '{"messages": {"role": "user"}}', "not json"]) {
    assert.equal(lineFeatures(bad), null, bad);
    assert.equal(estimateLineCost(bad), COST_MODEL.perChar * bad.length, bad);
  }
  assert.deepEqual(lineFeatures('{"messages": []}'), { requests: 0, messageChars: 0, assistantChars: 0, toolChars: 0, historyMessages: 0 });
});

test("the model orders many short turns above one long message, and assistant text above user text", () => {
  // one 20 kB user question and a short answer: the most bytes, one request
  const long = line([
    { role: "user", content: "q".repeat(20_000) },
    { role: "assistant", content: "ok" },
  ]);
  // 60 turns of 100 characters each way: fewer bytes, 60 requests over a growing history
  const turns: unknown[] = [];
  for (let i = 0; i < 60; i++) turns.push({ role: "user", content: "u".repeat(100) }, { role: "assistant", content: "a".repeat(100) });
  const chatty = line(turns);
  // the same bytes as `chatty`'s user text moved into the assistant's side
  const answers = line(turns.map((_t, i) => (i % 2 === 0 ? { role: "user", content: "u".repeat(20) } : { role: "assistant", content: "a".repeat(180) })));
  const small = line([
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
  ]);
  assert.ok(long.length > chatty.length, "precondition: bytes alone would put the long message first");
  assert.ok(Math.abs(answers.length - chatty.length) <= 2 * 60, "precondition: about the same bytes");
  const est = [small, long, chatty, answers].map((t) => estimateLineCost(t));
  const s = new LongestFirst(est, { workers: 1 });
  const order: number[] = [];
  for (let a = s.next(); a !== null; a = s.next()) {
    order.push(a.job);
    s.done(a.job, a.worker);
  }
  assert.deepEqual(order, [3, 2, 1, 0], "answers, chatty, long, small");
  // each term adds: one more request, more history, more characters cost more
  const f = lineFeatures(chatty);
  assert.ok(f !== null);
  const base = costOf(f);
  for (const k of ["requests", "messageChars", "assistantChars", "toolChars", "historyMessages"] as const) assert.ok(costOf({ ...f, [k]: f[k] + 1 }) > base, k);
});
