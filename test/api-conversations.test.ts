/**
 * Conversation prefixes (api/conversations.ts): a request can say "the first n messages of state
 * s, then these"; only the exact held state is accepted, tools carry over, memory is bounded.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConversationMessages } from "../src/api/conversations.js";

const m = (i: number) => ({ role: i % 2 ? "assistant" : "user", content: `m${i}` });

test("a prefix extends the held state; the result becomes the new state", () => {
  const held = new ConversationMessages();
  const tools = [{ name: "f" }];
  const a = held.resolve("c", 1, undefined, [m(0), m(1)], tools);
  assert.deepEqual(a, { messages: [m(0), m(1)], tools });
  const b = held.resolve("c", 2, { state: 1, length: 2 }, [m(2)], undefined);
  assert.deepEqual(b.messages, [m(0), m(1), m(2)]);
  assert.equal(b.tools, tools, "tools carry over when the request has none");
  const c = held.resolve("c", 3, { state: 2, length: 1 }, [m(9)], null);
  assert.deepEqual(c.messages, [m(0), m(9)], "a shorter prefix branches");
  assert.equal(c.tools, null, "explicit null means no tools");
  // the held objects are reused, not copied: the Deltatok's per-object memos keep working
  assert.equal((b.messages as unknown[])[0], (a.messages as unknown[])[0]);
});

test("only the exact held state is accepted", () => {
  const held = new ConversationMessages();
  held.resolve("c", 1, undefined, [m(0), m(1)], undefined);
  held.resolve("c", 2, { state: 1, length: 2 }, [m(2)], undefined);
  assert.throws(() => held.resolve("c", 3, { state: 1, length: 2 }, [m(3)], undefined), { code: "DT_PREFIX_UNKNOWN" }, "an older state");
  assert.throws(() => held.resolve("c", 3, { state: 2, length: 9 }, [m(3)], undefined), { code: "DT_PREFIX_UNKNOWN" }, "longer than held");
  assert.throws(() => held.resolve("other", 1, { state: 2, length: 1 }, [], undefined), { code: "DT_PREFIX_UNKNOWN" });
  assert.throws(() => held.resolve(undefined, 1, { state: 2, length: 1 }, [], undefined), { code: "DT_INVALID_REQUEST" });
  assert.throws(() => held.resolve("c", 3, { state: 2, length: -1 }, [], undefined), { code: "DT_INVALID_REQUEST" });
  assert.throws(() => held.resolve("c", 3, 5, [], undefined), { code: "DT_INVALID_REQUEST" });
});

test("held conversations are bounded by count and bytes", () => {
  const byCount = new ConversationMessages({ maxConversations: 3 });
  for (let i = 0; i < 10; i++) byCount.resolve(`c${i}`, 1, undefined, [m(0)], undefined);
  assert.equal(byCount.conversations, 3);
  assert.throws(() => byCount.resolve("c0", 2, { state: 1, length: 1 }, [], undefined), { code: "DT_PREFIX_UNKNOWN" });
  const byBytes = new ConversationMessages({ maxBytes: 100_000 });
  for (let i = 0; i < 50; i++) byBytes.resolve(`c${i}`, 1, undefined, [{ role: "user", content: "x".repeat(10_000) }], undefined);
  assert.ok(byBytes.conversations <= 5);
});
