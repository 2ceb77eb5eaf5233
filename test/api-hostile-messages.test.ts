/**
 * Hostile values given to the library get a coded input error with the path of the value, never
 * DT_INTERNAL or a crash, and the Deltatok answers a good request right after: throwing getters
 * and Proxy traps, cycles, non-data objects (Map, Date, class instances, functions, symbols),
 * holes, very deep nesting, huge key counts. Validation reads each value once and the render
 * uses what it read. Data values JSON allows (bigint ints, NaN/Infinity floats, a `__proto__`
 * key) are accepted, nothing is written to Object.prototype, and undefined is what
 * JSON.stringify makes of it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { DeltatokError } from "../src/errors.js";
import { pythonJsonParser } from "../src/api/json.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

type Msg = Record<string, unknown>;
const good = (): Msg[] => [
  { role: "system", content: "You are terse." },
  { role: "user", content: "What is 2+2?" },
];
const dtP = Deltatok.create({ renderer: TEST_RENDERER, date: "2026-11-30", maxPromptChars: 100_000 });

function coded(f: () => unknown, code: string, path?: string | RegExp): DeltatokError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof DeltatokError, `expected a DeltatokError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (typeof path === "string") assert.equal(e.path, path, e.message);
    else if (path !== undefined) assert.match(e.path ?? "", path, e.message);
    return e;
  }
  assert.fail(`expected ${code}`);
}

/** The Deltatok still answers a good request, with the same count as before. */
async function stillAnswers(): Promise<void> {
  const dt = await dtP;
  const fresh = await Deltatok.create({ renderer: TEST_RENDERER, date: "2026-11-30" });
  assert.equal(dt.countPrompt(good()), fresh.countPrompt(good()));
}

function withGetter(base: Msg, key: string, get: () => unknown): Msg {
  const m = { ...base };
  Object.defineProperty(m, key, { enumerable: true, configurable: true, get });
  return m;
}

test("a throwing getter is DT_INVALID_MESSAGE at its path, in countPrompt and countMessage", async () => {
  const dt = await dtP;
  const boom = () => {
    throw new TypeError("boom");
  };
  coded(() => dt.countPrompt([good()[0] as Msg, withGetter({ role: "user" }, "content", boom)]), "DT_INVALID_MESSAGE", "messages[1].content");
  coded(() => dt.countPrompt([{ role: "user", content: [withGetter({ type: "text" }, "text", boom)] }]), "DT_INVALID_MESSAGE", "messages[0].content[0].text");
  coded(() => dt.countMessage(withGetter({ role: "assistant" }, "tool_calls", boom)), "DT_INVALID_MESSAGE", "message.tool_calls");
  // the thrown value itself may be hostile (a getter on its message)
  const nasty = {};
  Object.defineProperty(nasty, "message", { get: boom });
  coded(() => dt.countPrompt([withGetter({ role: "user" }, "content", () => { throw nasty; })]), "DT_INVALID_MESSAGE", "messages[0].content");
  const list = new Proxy(good(), { get: (t, k) => (k === "1" ? boom() : Reflect.get(t, k)) });
  coded(() => dt.countPrompt(list), "DT_INVALID_MESSAGE", "messages[1]");
  coded(() => dt.countPrompt([good()[1] as Msg], { tools: [withGetter({ type: "function" }, "function", boom)] }), "DT_INVALID_TOOLS", "tools[0].function");
  coded(() => dt.countPrompt(good(), { chat_template_kwargs: withGetter({}, "enable_thinking", boom) }), "DT_INVALID_KWARGS", "chat_template_kwargs.enable_thinking");
  await stillAnswers();
});

test("each value is read once, and the render uses what was read", async () => {
  const dt = await dtP;
  let reads = 0;
  const m = withGetter({ role: "user" }, "content", () => (reads++ === 0 ? "What is 2+2?" : "something else entirely, and longer"));
  const n = dt.countPrompt([good()[0] as Msg, m]);
  assert.equal(reads, 1, "validation read it once and the template rendered the value read");
  assert.equal(n, dt.countPrompt(good()));
  // a getter that works once and throws afterwards: this request counts, the next one is coded
  let calls = 0;
  const once = withGetter({ role: "user" }, "content", () => {
    if (calls++ > 0) throw new Error("read twice");
    return "What is 2+2?";
  });
  assert.equal(dt.countPrompt([good()[0] as Msg, once]), n);
  coded(() => dt.countPrompt([good()[0] as Msg, once]), "DT_INVALID_MESSAGE", "messages[1].content");
});

test("Proxy traps: ownKeys, getPrototypeOf, a revoked proxy", async () => {
  const dt = await dtP;
  const keysThrow = new Proxy({ role: "user", content: "x" }, { ownKeys: () => { throw new Error("no"); } });
  coded(() => dt.countPrompt([keysThrow]), "DT_INVALID_MESSAGE", "messages[0]");
  const protoThrow = new Proxy({ role: "user", content: "x" }, { getPrototypeOf: () => { throw new Error("no"); } });
  coded(() => dt.countPrompt([protoThrow]), "DT_INVALID_MESSAGE", "messages[0]");
  const { proxy, revoke } = Proxy.revocable(good(), {});
  revoke();
  coded(() => dt.countPrompt(proxy), "DT_INVALID_MESSAGES", "messages");
  const r2 = Proxy.revocable({ role: "user", content: "x" }, {});
  r2.revoke();
  coded(() => dt.countPrompt([r2.proxy]), "DT_INVALID_MESSAGE", "messages[0]");
  // a well-behaved proxy is just data
  const plain = new Proxy({ role: "user", content: "What is 2+2?" }, {});
  assert.equal(dt.countPrompt([good()[0] as Msg, plain]), dt.countPrompt(good()));
  await stillAnswers();
});

test("cycles, non-data objects and holes are coded errors naming the value", async () => {
  const dt = await dtP;
  const cyc: Msg = { role: "user", content: "x" };
  cyc.self = cyc;
  coded(() => dt.countPrompt([cyc]), "DT_INVALID_MESSAGE", /^messages\[0\]\.self/);
  const tools: unknown[] = [];
  tools.push(tools);
  coded(() => dt.countPrompt(good(), { tools }), "DT_INVALID_TOOLS", /^tools\[0\]/);
  const kw: Msg = {};
  kw.me = { again: kw };
  coded(() => dt.countPrompt(good(), { chat_template_kwargs: kw }), "DT_INVALID_KWARGS", /^chat_template_kwargs\.me/);
  class Part {
    type = "text";
    text = "x";
  }
  const cases: Array<[string, unknown]> = [
    ["Map", new Map([["a", 1]])],
    ["Set", new Set([1])],
    ["Date", new Date(0)],
    ["class instance", new Part()],
    ["function", () => "x"],
    ["symbol", Symbol("x")],
    ["boxed string", new String("x")],
    ["typed array", new Uint8Array(2)],
  ];
  for (const [what, v] of cases) {
    const e = coded(() => dt.countPrompt([{ role: "user", content: "x", extra: v }]), "DT_INVALID_MESSAGE", "messages[0].extra");
    assert.ok(e.message.length < 300, what);
  }
  coded(() => dt.countPrompt([{ role: "user", content: [new Part()] }]), "DT_INVALID_MESSAGE", "messages[0].content[0]");
  coded(() => dt.countPrompt([new Map([["role", "user"]])]), "DT_INVALID_MESSAGE", "messages[0]");
  // eslint-disable-next-line no-sparse-arrays
  coded(() => dt.countPrompt([{ role: "user", content: [{ type: "text", text: "a" }, , { type: "text", text: "b" }] }]), "DT_INVALID_MESSAGE", "messages[0].content[1]");
  // eslint-disable-next-line no-sparse-arrays
  coded(() => dt.countPrompt([good()[0] as Msg, , good()[1] as Msg] as Msg[]), "DT_INVALID_MESSAGE", "messages[1]");
  await stillAnswers();
});

test("deep nesting and huge sizes: coded errors, checked before the walk allocates", async () => {
  const dt = await dtP;
  let deep: unknown = "x";
  for (let i = 0; i < 100_000; i++) deep = [deep];
  const e = coded(() => dt.countPrompt([{ role: "user", content: "x", extra: deep }]), "DT_INVALID_MESSAGE", /^messages\[0\]\.extra(\[0\])+$/);
  assert.ok(e.message.length < 400, "the message stays short");
  let deepObj: Msg = {};
  for (let i = 0; i < 10_000; i++) deepObj = { a: deepObj };
  coded(() => dt.countPrompt(good(), { chat_template_kwargs: deepObj }), "DT_INVALID_KWARGS");
  const many: Msg = { role: "user", content: "x" };
  for (let i = 0; i < 150_000; i++) many[`k${i}`] = i;
  coded(() => dt.countPrompt([many]), "DT_INPUT_TOO_LARGE", "messages[0]");
  const sparse: unknown[] = [];
  sparse.length = 2 ** 32 - 1;
  coded(() => dt.countPrompt([{ role: "user", content: "x", extra: sparse }]), "DT_INPUT_TOO_LARGE", "messages[0].extra");
  const longList: unknown[] = [];
  longList.length = 2 ** 31;
  coded(() => dt.countPrompt(longList as Msg[]), "DT_INPUT_TOO_LARGE", "messages");
  coded(() => dt.countPrompt(good(), { tools: Array.from({ length: 200_000 }, () => 1) }), "DT_INPUT_TOO_LARGE", "tools");
  coded(() => dt.countPrompt(good(), { chat_template: "x".repeat(100_001) }), "DT_INPUT_TOO_LARGE", "chat_template");
  await stillAnswers();
});

test("JSON data the reference accepts: big ints, NaN/Infinity, a __proto__ key; Object.prototype untouched", async () => {
  const dt = await dtP;
  const base = dt.countPrompt(good());
  const withData = good();
  (withData[1] as Msg).extra = { big: 2n ** 70n, nan: NaN, inf: -Infinity, list: [1, 2.5, null, true] };
  assert.equal(dt.countPrompt(withData), base, "extra keys the template does not read change nothing");
  const parsed = pythonJsonParser('[{"role":"system","content":"You are terse."},{"role":"user","content":"What is 2+2?","__proto__":{"role":"assistant","polluted":1}}]') as Msg[];
  assert.equal(dt.countPrompt(parsed), base);
  assert.equal(({} as Msg).polluted, undefined);
  assert.equal(Object.getPrototypeOf(parsed[1]), Object.prototype);
  const kw = pythonJsonParser('{"__proto__": {"enable_thinking": false}}') as Msg;
  assert.equal(typeof dt.countPrompt(good(), { chat_template_kwargs: kw }), "number");
  assert.equal(({} as Msg).enable_thinking, undefined);
  // undefined is what JSON.stringify makes of it (the sidecar sees the same): an absent key, a null item
  const tools = [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object" } } }];
  const toolsUndef = [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object" }, strict: undefined } }];
  assert.equal(dt.countPrompt(good(), { tools: toolsUndef }), dt.countPrompt(good(), { tools }));
  coded(() => dt.countPrompt([{ role: "user", content: [undefined] } as never]), "DT_INVALID_CONTENT", "messages[0].content[0]");
  // a lone surrogate keeps its own code
  coded(() => dt.countPrompt([{ role: "user", content: "a\ud800b" }]), "DT_LONE_SURROGATE", "messages[0].content");
  coded(() => dt.countPrompt([{ role: "user", content: "x", ["k\udc00"]: 1 }]), "DT_LONE_SURROGATE", "messages[0]");
});

test("caller's objects reused across requests: mutated in place, still exact (snapshots follow)", async () => {
  const dt = await dtP;
  const full = await Deltatok.create({ renderer: TEST_RENDERER, date: "2026-11-30", mode: "full" });
  const ms: Msg[] = [...good(), { role: "assistant", content: "4" }, { role: "user", content: "And 3+3?" }];
  for (let round = 0; round < 3; round++) {
    assert.equal(dt.countPrompt(ms), full.countPrompt(ms), `round ${round}`);
    (ms[2] as Msg).content = `answer ${round} `.repeat(round + 1);
    (ms[3] as Msg).extra = { round };
  }
});
