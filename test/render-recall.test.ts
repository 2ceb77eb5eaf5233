/**
 * Recognising unchanged messages by content (render/messages.ts, MessageRecall): a new object
 * with the content of a message read before takes that message's snapshot and content version;
 * any difference — a string, a nested value, key order, a key, a number's sign — means its own
 * walk; a message recognised and then mutated is read as mutated; bad input fails as without it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { MessageRecall, readMessages } from "../src/render/messages.js";
import { DeltatokError } from "../src/errors.js";

const LIMITS = { maxPromptChars: 1_000_000 };

function conv(): Array<Record<string, unknown>> {
  return [
    { role: "system", content: "You are helpful." },
    { role: "user", content: "Book a flight" },
    { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "book", arguments: { from: "SFO", n: -0 } } }] },
    { role: "tool", content: "ok", tool_call_id: "c1" },
  ];
}

/** Sets the value at `path` inside `root`. */
function set(root: unknown, path: Array<string | number>, value: unknown): void {
  let o = root as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  o[path[path.length - 1] as string | number] = value;
}

function read(recall: MessageRecall, messages: unknown[]): { snaps: unknown[]; versions: number[] } {
  const versions: number[] = [];
  return { snaps: readMessages(messages, LIMITS, "messages", versions, undefined, recall), versions };
}

test("a new object with equal content takes the snapshot and version of the message read before", () => {
  const recall = new MessageRecall();
  const a = read(recall, conv());
  const b = read(recall, structuredClone(conv()));
  const c = read(recall, JSON.parse(JSON.stringify(conv())) as unknown[]);
  for (let i = 0; i < 3; i++) {
    assert.equal(b.snaps[i], a.snaps[i], `message ${i} (structuredClone)`);
    assert.equal(b.versions[i], a.versions[i]);
  }
  // -0 and 0 are different content (JSON turns -0 into 0): message 2 is read on its own there
  assert.equal(c.snaps[0], a.snaps[0]);
  assert.notEqual(c.snaps[2], a.snaps[2]);
  assert.notEqual(c.versions[2], a.versions[2]);
  assert.ok(recall.recognised >= 7);
});

test("any difference in content gives a snapshot of its own, equal to what a walk gives", () => {
  const edits: Array<(m: Array<Record<string, unknown>>) => void> = [
    (m) => ((m[1] as Record<string, unknown>).content = "Book a flight!"),
    (m) => set(m, [2, "tool_calls", 0, "function", "arguments", "from"], "LAX"),
    (m) => (m[1] = { content: "Book a flight", role: "user" }), // key order
    (m) => ((m[3] as Record<string, unknown>).name = "book"), // a key more
    (m) => delete (m[3] as Record<string, unknown>).tool_call_id, // a key less
    (m) => ((m[2] as Record<string, unknown>).content = null),
  ];
  for (const [k, edit] of edits.entries()) {
    const recall = new MessageRecall();
    const a = read(recall, conv());
    const changed = structuredClone(conv());
    edit(changed);
    const b = read(recall, changed);
    const fresh = readMessages(structuredClone(changed), LIMITS);
    assert.deepEqual(b.snaps, fresh, `edit ${k}`);
    for (let i = 0; i < 4; i++) {
      assert.deepEqual(Object.keys(b.snaps[i] as object), Object.keys(fresh[i] as object), `edit ${k}, message ${i}: key order`);
      const same = b.snaps[i] === a.snaps[i];
      assert.equal(same, b.versions[i] === a.versions[i], `edit ${k}, message ${i}: version follows the snapshot`);
    }
    assert.ok(b.snaps.some((s, i) => s !== a.snaps[i]), `edit ${k}: some message is new`);
  }
});

test("a key whose value is undefined is absent, with or without recall", () => {
  const recall = new MessageRecall();
  const a = read(recall, conv());
  const withUndefined = structuredClone(conv()).map((m) => ({ ...m, name: undefined }));
  const b = read(recall, withUndefined);
  assert.deepEqual(b.snaps, a.snaps);
});

test("a recognised message mutated after the call is read as mutated", () => {
  const recall = new MessageRecall();
  read(recall, conv());
  const copy = structuredClone(conv());
  const b = read(recall, copy);
  (copy[1] as Record<string, unknown>).content = "Cancel it";
  set(copy, [2, "tool_calls", 0, "function", "name"], "cancel");
  const c = read(recall, copy);
  assert.equal((c.snaps[1] as Record<string, unknown>).content, "Cancel it");
  assert.notEqual(c.snaps[2], b.snaps[2]);
  assert.deepEqual(c.snaps, readMessages(structuredClone(copy), LIMITS));
});

test("bad input fails with the same code and path with recall as without", () => {
  const cases: unknown[][] = [
    [...conv(), { role: "user", content: "\ud800" }],
    [
      conv()[0],
      {
        role: "user",
        get content(): string {
          throw new Error("boom");
        },
      },
    ],
    [conv()[0], { role: "user", content: "x".repeat(100) }],
  ];
  for (const [k, messages] of cases.entries()) {
    const limits = k === 2 ? { maxPromptChars: 80 } : LIMITS;
    const recall = new MessageRecall();
    read(recall, conv());
    let a: DeltatokError | null = null;
    let b: DeltatokError | null = null;
    try {
      readMessages(messages, limits, "messages", [], undefined, recall);
    } catch (e) {
      a = e as DeltatokError;
    }
    try {
      readMessages(messages, limits);
    } catch (e) {
      b = e as DeltatokError;
    }
    assert.ok(a instanceof DeltatokError && b instanceof DeltatokError, `case ${k} fails`);
    assert.equal(a.code, b.code);
    assert.equal(a.path, b.path);
  }
  // a long message recognised by content still counts against the limit
  const recall = new MessageRecall();
  const big = [{ role: "user", content: "y".repeat(50) }];
  read(recall, big);
  assert.throws(() => readMessages(structuredClone(big), { maxPromptChars: 40 }, "messages", [], undefined, recall), (e: unknown) => (e as DeltatokError).code === "DT_INPUT_TOO_LARGE");
});

test("interleaved conversations that share a system prompt are each recognised", () => {
  const recall = new MessageRecall();
  const x = conv();
  const y = [x[0], { role: "user", content: "Other question" }, { role: "assistant", content: "Answer" }];
  const ax = read(recall, x);
  const ay = read(recall, y);
  const bx = read(recall, structuredClone(x));
  const by = read(recall, structuredClone(y));
  assert.deepEqual(bx.versions, ax.versions);
  assert.deepEqual(by.versions, ay.versions);
});
