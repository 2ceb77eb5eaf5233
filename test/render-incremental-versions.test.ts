/**
 * Content versions of messages (validateMessages' `versions`) and what incremental rendering
 * does with them: an iteration over a message whose version is unchanged since the previous
 * render skips the checks of what it read inside that message. Versions must change with any
 * change inside a message (nested in-place edits included) and never be shared by two objects;
 * renders with them stay exactly the full render, and need fewer checks.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { validateMessages } from "../src/render/messages.js";
import { compileTemplate, type PreviousRender } from "../src/template/index.js";
import { Deltatok } from "../src/api/deltatok.js";
import { fixturesDir } from "./fixtures/template/harness.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { incrementalRequests } from "./helpers/incremental.js";

type Msg = Record<string, unknown>;
const LIMITS = { maxPromptChars: 1 << 30 };

function versions(ms: unknown[]): number[] {
  const v: number[] = [];
  validateMessages(ms, LIMITS, "messages", v);
  return v;
}

function trajectory(steps: number): Msg[] {
  const ms: Msg[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the failing test." },
  ];
  for (let i = 0; i < steps; i++) {
    ms.push({
      role: "assistant",
      content: `<think>\nstep ${i}\n</think>\n\nRunning a command.`,
      tool_calls: [{ id: `call${i}`, type: "function", function: { name: "bash", arguments: { command: `ls dir${i}`, n: i } } }],
    });
    ms.push({ role: "tool", content: `output ${i}`, tool_call_id: `call${i}`, name: "bash" });
    if (i % 7 === 6) {
      ms.push({ role: "assistant", content: `Progress after step ${i}.` });
      ms.push({ role: "user", content: `Continue with part ${i}.` });
    }
  }
  return ms;
}

const TOOLS = [{ type: "function", function: { name: "bash", description: "Run", parameters: { type: "object", properties: { command: { type: "string" } } } } }];

test("versions: stable while a message is unchanged, new after any change inside it, never shared", () => {
  const ms = trajectory(3);
  const v1 = versions(ms);
  assert.equal(v1.length, ms.length);
  assert.ok(v1.every((x) => x > 0));
  assert.equal(new Set(v1).size, v1.length, "distinct objects have distinct versions");
  assert.deepEqual(versions(ms), v1, "unchanged messages keep their versions");
  // a nested in-place edit (tool-call argument) changes that message's version only
  ((((ms[2] as Msg).tool_calls as Msg[])[0] as Msg).function as Msg).arguments = { command: "ls other", n: 0 };
  const v2 = versions(ms);
  assert.notEqual(v2[2], v1[2]);
  assert.deepEqual(v2.filter((_, i) => i !== 2), v1.filter((_, i) => i !== 2));
  // deeper still: a value inside the arguments object, edited in place
  ((((ms[2] as Msg).tool_calls as Msg[])[0] as Msg).function as Msg as { arguments: Msg }).arguments.n = 1;
  const v3 = versions(ms);
  assert.notEqual(v3[2], v2[2]);
  // -0 and 0 are different JSON values
  (ms[3] as Msg).extra = 0;
  const v4 = versions(ms);
  (ms[3] as Msg).extra = -0;
  assert.notEqual(versions(ms)[3], v4[3]);
  // an equal copy is another object: another version
  const copy = JSON.parse(JSON.stringify(ms[1])) as Msg;
  assert.notEqual(versions([copy])[0], versions(ms)[1]);
});

/**
 * [template, special tokens, most checks left with versions (a share of those without)]. gpt-oss
 * scans every later message from each assistant turn with tool calls: those reads are of other
 * messages, still checked one by one.
 */
const CASES: Array<[string, Record<string, unknown>, number]> = [
  ["qwen3", { eos_token: "<|im_end|>" }, 0.8],
  ["deepseek-v3", { bos_token: "<｜begin▁of▁sentence｜>", eos_token: "<｜end▁of▁sentence｜>" }, 0.8],
  ["llama3.1", { bos_token: "<|begin_of_text|>", eos_token: "<|eot_id|>" }, 0.8],
  ["gpt-oss", {}, 0.9],
];

for (const [name, specials, share] of CASES) {
  test(`${name}: unchanged messages skip their per-field checks; every render stays exact, in-place edits included`, () => {
    const t = compileTemplate(readFileSync(join(fixturesDir(), "golden", "templates", `${name}.jinja`), "utf8"));
    const now = new Date(Date.UTC(2026, 10, 30));
    const ms = trajectory(40);
    let prevV: PreviousRender | null = null;
    let prevN: PreviousRender | null = null;
    let checksV = 0;
    let checksN = 0;
    let unchanged = 0;
    let turn = 0;
    ms.forEach((m, k) => {
      if (m.role !== "assistant") return;
      turn++;
      // an earlier message edited in place, deep inside (the render must see it)
      if (turn % 9 === 0) ((((ms[2] as Msg).tool_calls as Msg[])[0] as Msg).function as { arguments: Msg }).arguments.command = `edited at ${k}`;
      if (turn % 13 === 0) (ms[1] as Msg).content = `New task at ${k}.`;
      const list = ms.slice(0, k);
      const vars = { messages: list, tools: TOOLS, add_generation_prompt: true, ...specials };
      const a = t.renderIncremental(vars, { now, itemVersions: { list, versions: versions(list) } }, prevV);
      const b = t.renderIncremental(vars, { now }, prevN);
      prevV = { trace: a.trace, segments: a.segments };
      prevN = { trace: b.trace, segments: b.segments };
      const want = t.render(vars, { now }).text;
      assert.equal(a.segments.join(""), want, `${name}: ${k} messages, with versions`);
      assert.equal(b.segments.join(""), want, `${name}: ${k} messages, without versions`);
      assert.equal(b.stats.unchangedItems, 0);
      checksV += a.stats.checks;
      checksN += b.stats.checks;
      unchanged += a.stats.unchangedItems;
    });
    assert.ok(unchanged > 0, "iterations over unchanged messages were proven by their versions");
    assert.ok(checksV < share * checksN, `observations checked: ${checksV} with versions, ${checksN} without`);
  });
}

test("versions ignored when they do not belong to the messages rendered", () => {
  const t = compileTemplate(readFileSync(join(fixturesDir(), "golden", "templates", "qwen3.jinja"), "utf8"));
  const now = new Date(Date.UTC(2026, 10, 30));
  const ms = trajectory(4);
  const list = ms.slice(0, 6);
  const r1 = t.renderIncremental({ messages: list, add_generation_prompt: true }, { now, itemVersions: { list, versions: versions(list) } }, null);
  const prev = { trace: r1.trace, segments: r1.segments };
  // another list object (a copy) with the first list's versions: not used
  const other = ms.slice(0, 7);
  const r2 = t.renderIncremental({ messages: other, add_generation_prompt: true }, { now, itemVersions: { list, versions: versions(list) } }, prev);
  assert.equal(r2.stats.unchangedItems, 0);
  assert.equal(r2.segments.join(""), t.render({ messages: other, add_generation_prompt: true }, { now }).text);
});

test("the Deltatok API passes versions: a growing conversation reuses unchanged messages, ids equal to full mode", async () => {
  const base = { renderer: TEST_RENDERER, date: "2026-11-30" } as const;
  const inc = await Deltatok.create({ ...base, mode: "incremental" });
  const full = await Deltatok.create({ ...base, mode: "full" });
  const ms = trajectory(12);
  ms.forEach((m, k) => {
    if (m.role !== "assistant") return;
    if (k === 20) (ms[4] as Msg).content = "changed in place";
    assert.deepEqual(Array.from(inc.encodePrompt(ms.slice(0, k), { tools: TOOLS })), Array.from(full.encodePrompt(ms.slice(0, k), { tools: TOOLS })), `${k} messages`);
  });
  assert.ok((inc.stats().render?.unchangedItems ?? 0) > 0);
});

test("gpt-oss: an unchanged message whose iteration's look-ahead loop grew is still extended exactly, steps included (regression)", () => {
  // found by property-tests/incremental-render (seed 2039774259): a record holding a grown-loop
  // length observation was checked through its copy without item reads, and the extension was
  // written at that copy's index into the original observations
  const t = compileTemplate(readFileSync(join(fixturesDir(), "golden", "templates", "gpt-oss.jinja"), "utf8"));
  const now = new Date(Date.UTC(2026, 10, 30, 9, 15));
  const call = (): Msg => ({ id: "call_0abc", type: "function", function: { name: "get_user_details", arguments: {} } });
  const turn = (): Msg[] => [
    { role: "user", content: "" },
    { role: "assistant", content: "", tool_calls: [call()] },
    { role: "tool", content: "", tool_call_id: "call_0abc", name: "get_user_details" },
    { role: "assistant", content: "" },
  ];
  const ms: Msg[] = [...turn(), ...turn()];
  const check = incrementalRequests(t, now, true);
  const specials = { bos_token: "<|startoftext|>", eos_token: "<|return|>", pad_token: "<|endoftext|>" };
  const request = (k: number): void => check({ messages: ms.slice(0, k), tools: null, documents: null, add_generation_prompt: false, ...specials });
  request(2);
  request(3);
  request(6);
  (ms[0] as Msg).content = "";
  request(6);
  ms.splice(6, ms.length - 6, ...turn());
  request(7);
  request(8);
  request(9);
});

test("a position condition whose other operand is read from the message is decided per message", () => {
  // `loop.index0 > message.n` has the form of a position condition, but its other operand
  // depends on the item: it must not be evaluated once for a whole run of iterations (the loop
  // runs backwards, so every append moves each message's position and the test is decided again)
  const t = compileTemplate(
    `{%- set ns = namespace(k=2) %}{%- for message in messages[::-1] %}{%- if loop.index0 > message.n %}A{%- elif loop.index0 > ns.k %}B{%- else %}C{%- endif %}{%- endfor %}`,
  );
  const now = new Date(Date.UTC(2026, 10, 30));
  const ms: Msg[] = [];
  const ns = [15, 5, 4, 4, 8, 27, 0, 26, 4, 6, 8, 23, 12, 16, 27, 13, 5, 12, 25, 10, 7, 18, 3, 28, 16, 24, 17, 0, 22, 27];
  ns.forEach((n, i) => ms.push({ role: "user", content: `m${i}`, n }));
  const check = incrementalRequests(t, now, true);
  for (let k = 2; k <= ms.length; k += 2) check({ messages: ms.slice(0, k) });
});

test("a condition that held by re-evaluation keeps its reads of an unchanged message (regression)", () => {
  // Message 1's iteration of the backwards loop was recorded while it was an assistant message;
  // after it became a user message (in place) the record still held — its condition was
  // re-evaluated to the same value — so the role it recorded inside that condition is stale. The
  // next request, with the message unchanged, must not drop that read (found by
  // property-tests/incremental-synthetic).
  const t = compileTemplate(
    `{%- set ns = namespace(last=-1, flag=true) %}{%- for m in messages[::-1] %}{%- if ns.flag and m.role == "user" %}{%- set ns.flag = false %}{%- set ns.last = messages|length - 1 - loop.index0 %}{%- endif %}{%- endfor %}{%- for m in messages %}{{ ns.last }}{%- if loop.index0 > ns.last %}[{{ m.role }}]{%- endif %}{%- endfor %}`,
  );
  const now = new Date(Date.UTC(2026, 10, 30));
  const ms: Msg[] = [
    { role: "user", content: "" },
    { role: "assistant", content: "" },
    { role: "user", content: "" },
  ];
  const check = incrementalRequests(t, now, true);
  const request = (k: number): void => {
    const list = ms.slice(0, k);
    check({ messages: list }, `${k} messages: ${list.map((m) => m.role).join(",")}`);
  };
  request(2);
  request(3);
  ms[2] = { role: "user", content: "" };
  (ms[1] as Msg).role = "user";
  request(3);
  (ms[2] as Msg).role = "tool";
  request(3);
  (ms[0] as Msg).role = "tool";
  request(3);
});
