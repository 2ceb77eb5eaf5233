/**
 * A caller may mutate message objects in place between requests (same objects, same arrays):
 * incremental rendering validates by value, never by identity or hash, so every request still
 * equals a full render — content edits, tool-call argument edits, int → float, dict key order,
 * a role change, and a lone surrogate slipped in (still rejected).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { toDeltatokError } from "../src/errors.js";
import { PyFloat } from "../src/json/values.js";
import { compileTemplate, type PreviousRender } from "../src/template/index.js";
import { fixturesDir } from "./fixtures/template/harness.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { incrementalRequests } from "./helpers/incremental.js";

type Msg = Record<string, unknown>;

function conversation(): Msg[] {
  return [
    { role: "system", content: "You are a booking agent." },
    { role: "user", content: "Book flight 12 for user 7" },
    {
      role: "assistant",
      content: "<think>\nlook up the user\n</think>\n\nLet me check.",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "get_user_details", arguments: { user_id: 7, nested: { a: 1, b: [1, 2] } } } }],
    },
    { role: "tool", content: '{"name": "Ann"}', tool_call_id: "call_1", name: "get_user_details" },
    { role: "assistant", content: "Found Ann.", tool_calls: [{ id: "call_2", type: "function", function: { name: "book", arguments: { flight: 12, seats: 1 } } }] },
    { role: "tool", content: "booked", tool_call_id: "call_2", name: "book" },
    { role: "assistant", content: "Done: flight 12 is booked for Ann." },
    { role: "user", content: "Thanks" },
  ];
}

const TOOLS = [{ type: "function", function: { name: "book", description: "Book", parameters: { type: "object", properties: { flight: { type: "integer" } } } } }];

/** Mutations applied in place, one after another, each followed by a request. */
const MUTATIONS: Array<[string, (ms: Msg[]) => void]> = [
  ["content of an earlier message", (ms) => void ((ms[1] as Msg).content = "Book flight 13 for user 7")],
  ["tool-call argument value", (ms) => void ((((ms[2] as Msg).tool_calls as Msg[])[0] as Msg).function = { name: "get_user_details", arguments: { user_id: 8, nested: { a: 1, b: [1, 2] } } })],
  [
    "int → float in tool-call arguments",
    (ms) => {
      const args = ((((ms[4] as Msg).tool_calls as Msg[])[0] as Msg).function as Msg).arguments as Record<string, unknown>;
      args.seats = new PyFloat(1);
    },
  ],
  [
    "key order of a nested dict",
    (ms) => {
      const args = ((((ms[2] as Msg).tool_calls as Msg[])[0] as Msg).function as Msg).arguments as Record<string, unknown>;
      const nested = args.nested as Record<string, unknown>;
      const a = nested.a;
      delete nested.a;
      nested.a = a;
    },
  ],
  ["reasoning moved into reasoning_content", (ms) => void Object.assign(ms[2] as Msg, { content: "Let me check.", reasoning_content: "look up the user" })],
  ["a role", (ms) => void ((ms[7] as Msg).role = "system")],
  ["a tool result", (ms) => void ((ms[5] as Msg).content = "failed")],
];

test("in-place mutations between requests: the Deltatok API still matches full mode, ids included", async () => {
  const base = { renderer: TEST_RENDERER, date: "2026-11-30" } as const;
  const inc = await Deltatok.create({ ...base, mode: "incremental" });
  const full = await Deltatok.create({ ...base, mode: "full" });
  const ms = conversation();
  const ask = (what: string): void => {
    for (const k of [6, 7, 8]) {
      const a = Array.from(inc.encodePrompt(ms.slice(0, k), { tools: TOOLS }));
      const b = Array.from(full.encodePrompt(ms.slice(0, k), { tools: TOOLS }));
      assert.deepEqual(a, b, `${what}: request with ${k} messages`);
    }
  };
  ask("before any mutation");
  for (const [what, f] of MUTATIONS) {
    f(ms);
    ask(what);
  }
  const s = inc.stats();
  assert.ok((s.render?.iterationsReused ?? 0) > 0, "the incremental renderer did reuse iterations");
  assert.ok(s.partial > 0);
});

test("a lone surrogate slipped into a message already seen is still rejected", async () => {
  const dt = await Deltatok.create({ renderer: TEST_RENDERER, date: "2026-11-30" });
  const ms = conversation();
  dt.countPrompt(ms.slice(0, 4));
  (ms[1] as Msg).content = "bad \ud800 text";
  assert.throws(
    () => dt.countPrompt(ms.slice(0, 4)),
    (e: unknown) => toDeltatokError(e).code === "DT_LONE_SURROGATE",
  );
  (ms[1] as Msg).content = "fine again";
  ((((ms[2] as Msg).tool_calls as Msg[])[0] as Msg).function as Msg).name = "x\udfff";
  assert.throws(
    () => dt.countPrompt(ms.slice(0, 4)),
    (e: unknown) => toDeltatokError(e).code === "DT_LONE_SURROGATE",
  );
});

test("in-place mutations between requests: templates render exactly as in full", () => {
  const dir = join(fixturesDir(), "golden", "templates");
  const now = new Date(Date.UTC(2026, 10, 30));
  for (const name of ["qwen3", "deepseek-v3", "llama3.1", "gpt-oss", "glm-4.6", "mistral-small-3.2", "granite-3.3"]) {
    const t = compileTemplate(readFileSync(join(dir, `${name}.jinja`), "utf8"));
    const ms = conversation();
    let prev: PreviousRender | null = null;
    const check = (what: string): void => {
      for (const k of [6, 7, 8]) {
        const vars = { messages: ms.slice(0, k), tools: TOOLS, add_generation_prompt: true, bos_token: "<s>", eos_token: "</s>" };
        let want: string;
        try {
          want = t.render(vars, { now }).text;
        } catch (e) {
          want = `error ${toDeltatokError(e).code}`;
        }
        let got: string;
        try {
          const r = t.renderIncremental(vars, { now }, prev);
          got = r.segments.join("");
          prev = { trace: r.trace, segments: r.segments };
        } catch (e) {
          got = `error ${toDeltatokError(e).code}`;
        }
        assert.equal(got, want, `${name}, ${what}, ${k} messages`);
      }
    };
    check("before any mutation");
    for (const [what, f] of MUTATIONS) {
      f(ms);
      check(what);
    }
  }
});

test("a grown loop is not extended when one of its reused iterations read the loop's length (regression)", () => {
  // Render 2 reuses the inner iteration that read `loop.last` while its outer iteration runs
  // again; that read must still keep the inner loop from being marked extensible, or render 3
  // extends it with the appended message and keeps the stale "L".
  const t = compileTemplate(
    `{%- for m in messages[::-1] %}[{{ m.content }}:{% for x in messages %}{% if x.role == "tool" and loop.last %}L{% endif %}{% endfor %}]{% endfor %}`,
  );
  const now = new Date(Date.UTC(2026, 10, 30));
  const a: Msg = { role: "user", content: "a" };
  const b: Msg = { role: "tool", content: "b" };
  const c: Msg = { role: "user", content: "c" };
  const request = incrementalRequests(t, now, false);
  const check = (ms: Msg[]): void => request({ messages: ms });
  check([a, b]);
  a.content = "a2";
  check([a, b]);
  check([a, b, c]);
});

test("a nested iteration reused by re-evaluating a condition is not trusted inside its parent's record (regression)", () => {
  // The inner iteration over message 3 recorded `x.role == "tool" and loop.last` as false while
  // message 3 was a tool message but not last; after message 3 became a user message it held by
  // re-evaluation (false again), its recorded inputs stale. When message 3 is a tool message again
  // and now last, the outer iterations' records must not hold on those stale inputs (found by
  // property-tests/incremental-synthetic).
  const t = compileTemplate(
    `{%- for m in messages[::-1] %}[{{ m.content }}:{%- for x in messages[loop.index0:] %}{%- if x.role == "tool" and loop.last %}L{%- endif %}{%- endfor %}]{%- endfor %}`,
  );
  const now = new Date(Date.UTC(2026, 10, 30));
  const ms: Msg[] = ["user", "user", "user", "tool", "user"].map((role) => ({ role, content: "" }));
  const request = incrementalRequests(t, now, false);
  const check = (list: Msg[]): void => request({ messages: list }, list.map((m) => m.role).join(","));
  check(ms.slice(0, 2));
  check(ms.slice(0, 5));
  (ms[3] as Msg).role = "user";
  check(ms.slice(0, 5));
  check(ms.slice(0, 4));
  ms[3] = { role: "tool", content: "" };
  check(ms.slice(0, 4));
});
