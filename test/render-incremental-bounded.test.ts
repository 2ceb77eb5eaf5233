/**
 * Incremental rendering does bounded work per turn: while an agentic conversation grows
 * append-only to 300+ messages, the number of units and loop iterations *executed* per request
 * does not grow with the history (turn ~250 ≤ 2 × turn ~20 + a small constant), and the
 * observations *checked* grow at most linearly with the number of messages. No timing: counts.
 * Checked on Qwen3, DeepSeek-V3, Llama 3.1 and gpt-oss; every sampled render equals the full one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compileTemplate, type PreviousRender } from "../src/template/index.js";
import { fixturesDir } from "./fixtures/template/harness.js";

type Msg = Record<string, unknown>;

const TOOLS = [
  { type: "function", function: { name: "bash", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } } },
];

/** An agent trajectory: tool calls and results, with a new user query and a final answer every 12 steps. */
function trajectory(steps: number): Msg[] {
  const ms: Msg[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the failing test in the repository." },
  ];
  for (let i = 0; i < steps; i++) {
    ms.push({
      role: "assistant",
      content: `<think>\nstep ${i}: inspect more\n</think>\n\nRunning a command.`,
      tool_calls: [{ id: `call${i}`, type: "function", function: { name: "bash", arguments: { command: `ls -la dir${i}`, n: i } } }],
    });
    ms.push({ role: "tool", content: `output of step ${i}\nline 2`, tool_call_id: `call${i}`, name: "bash" });
    if (i % 12 === 11) {
      ms.push({ role: "assistant", content: `Progress after step ${i}.` });
      ms.push({ role: "user", content: `Continue with part ${i}.` });
    }
  }
  return ms;
}

interface Turn {
  messages: number;
  executed: number;
  checks: number;
}

function grow(name: string, specials: Record<string, unknown>): Turn[] {
  const t = compileTemplate(readFileSync(join(fixturesDir(), "golden", "templates", `${name}.jinja`), "utf8"));
  const ms = trajectory(160);
  const now = new Date(Date.UTC(2026, 10, 30));
  const turns: Turn[] = [];
  let prev: PreviousRender | null = null;
  ms.forEach((m, k) => {
    if (m.role !== "assistant") return;
    const vars = { messages: ms.slice(0, k), tools: TOOLS, add_generation_prompt: true, ...specials };
    const r = t.renderIncremental(vars, { now }, prev);
    prev = { trace: r.trace, segments: r.segments };
    if (turns.length % 40 === 7) assert.equal(r.segments.join(""), t.render(vars, { now }).text, `${name}: render of ${k} messages`);
    turns.push({ messages: k, executed: r.stats.unitsExecuted + r.stats.iterationsExecuted, checks: r.stats.checks });
  });
  return turns;
}

/** Mean of a field over turns [from, to). */
function mean(ts: Turn[], from: number, to: number, f: (t: Turn) => number): number {
  const xs = ts.slice(from, to).map(f);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/**
 * [template, special tokens, how validation checks may grow]. gpt-oss's template itself scans
 * all later messages for every assistant turn with tool calls (`for future_message in
 * loop_messages[loop.index:]`), so checking those scans is quadratic in the history; what runs
 * per turn stays bounded.
 */
const CASES: Array<[string, Record<string, unknown>, "linear" | "quadratic"]> = [
  ["qwen3", { eos_token: "<|im_end|>" }, "linear"],
  ["deepseek-v3", { bos_token: "<｜begin▁of▁sentence｜>", eos_token: "<｜end▁of▁sentence｜>" }, "linear"],
  ["llama3.1", { bos_token: "<|begin_of_text|>", eos_token: "<|eot_id|>" }, "linear"],
  ["gpt-oss", {}, "quadratic"],
];

for (const [name, specials, checks] of CASES) {
  test(`${name}: executed work per turn does not grow with the history`, () => {
    const ts = grow(name, specials);
    assert.ok(ts.length >= 160 && (ts[ts.length - 1] as Turn).messages >= 300, `grew to ${(ts[ts.length - 1] as Turn).messages} messages`);
    // windows of 13 turns hold the same number of "final answer" turns (one every 12 steps)
    const early = mean(ts, 13, 26, (t) => t.executed);
    const late = mean(ts, 143, 156, (t) => t.executed);
    assert.ok(late <= 2 * early + 4, `executed units+iterations per turn: ${early.toFixed(1)} at turn ~20, ${late.toFixed(1)} at turn ~150`);
    const per = (t: Turn): number => t.checks / (checks === "linear" ? t.messages : t.messages * t.messages);
    const earlyPer = mean(ts, 13, 26, per);
    const latePer = mean(ts, 143, 156, per);
    assert.ok(latePer <= 2 * earlyPer + 2, `checks per ${checks === "linear" ? "message" : "message²"} per turn: ${earlyPer.toFixed(3)} at turn ~20, ${latePer.toFixed(3)} at turn ~150`);
  });
}
