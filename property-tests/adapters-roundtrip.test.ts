/**
 * The framework adapters on generated conversations:
 * (a) OpenAI → framework → OpenAI is the identity on the adapters' range (generated agentic
 *     conversations: system, user turns, reasoning, parallel tool calls, tool results), for the
 *     AI SDK and for LangChain;
 * (b) AI SDK messages in any part order (several text and reasoning parts, approval parts, json
 *     and error outputs, multi-part user text) reach a fixed point after one conversion, and the
 *     canonical ones (reasoning, text, tool calls; text outputs) round-trip exactly;
 * (c) arguments as JSON text counted with parse_tool_arguments count the same as arguments as
 *     values, on Qwen3 and Llama 3.1 (what vLLM renders either way).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { ModelMessage } from "ai";
import * as lc from "@langchain/core/messages";
import { Deltatok } from "../src/api/deltatok.js";
import { fromAiSdk, toAiSdk, type ChatMessage } from "../src/adapters/ai-sdk.js";
import { fromLangChain, toLangChain } from "../src/adapters/langchain.js";
import { toDeltatokError } from "../src/errors.js";
import { conversation } from "./arbitraries/conversation.js";
import { messageText } from "./arbitraries/text.js";
import { specialTexts } from "../test/helpers/tokenizers.js";
import { repoPath } from "../test/helpers/paths.js";

const RUNS = Number(process.env.DELTATOK_PROPERTY_RUNS ?? 50);
const SEED = 20261201;
const plain = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

test("OpenAI → AI SDK → OpenAI and OpenAI → LangChain → OpenAI are the identity on generated conversations", () => {
  const convo = conversation({ plain: false, stringArguments: true, nullContent: false, singleToolCall: false }, specialTexts("qwen3"));
  fc.assert(
    fc.property(convo, (messages) => {
      const o = messages as unknown as ChatMessage[];
      assert.deepEqual(fromAiSdk(toAiSdk(o)), o);
      assert.deepEqual(fromLangChain(toLangChain(o, lc)), o);
    }),
    { numRuns: RUNS, seed: SEED },
  );
});

type Part = Record<string, unknown>;

/** Tool-call input: JSON data with numbers a double and its JSON text agree on. */
const jsonInput: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(
  fc.constantFrom("q", "n", "1", "x y", "é", "nested"),
  fc.oneof(
    fc.string({ maxLength: 6 }),
    fc.integer({ min: -1_000_000, max: 1_000_000 }),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
    fc.constantFrom(0.1, 1e-7, 2.5e-300, 9007199254740991),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }),
  ),
  { maxKeys: 4 },
);

/** An AI SDK conversation; `canonical` keeps the parts in the adapter's canonical form. */
function aiSdkConversation(canonical: boolean, single: boolean): fc.Arbitrary<ModelMessage[]> {
  const text = messageText([]);
  const user = canonical
    ? fc.oneof(text, fc.array(text.map((t) => ({ type: "text", text: t })), { minLength: 1, maxLength: 3 }))
    : fc.array(text.map((t) => ({ type: "text", text: t })), { minLength: 1, maxLength: 3 });
  const call = fc.tuple(fc.constantFrom("lookup", "book", "calc"), jsonInput);
  const step = fc
    .tuple(fc.option(text, { nil: undefined }), text, fc.array(call, { minLength: 0, maxLength: single ? 1 : 3 }), fc.array(fc.tuple(fc.boolean(), text, jsonInput), { minLength: 3, maxLength: 3 }), fc.nat())
    .map(([reasoning, answer, calls, results, seed]) => {
      const ids = calls.map((_, j) => `call_${seed % 1000}_${j}`);
      let parts: Part[] = [];
      if (reasoning !== undefined) parts.push({ type: "reasoning", text: reasoning });
      if (answer !== "" || (reasoning === undefined && calls.length === 0)) parts.push({ type: "text", text: answer });
      calls.forEach(([name, input], j) => parts.push({ type: "tool-call", toolCallId: ids[j], toolName: name, input }));
      if (!canonical) {
        // split the text in two and move the reasoning after it; add an approval request
        parts = parts.flatMap((p) => (p.type === "text" ? [{ type: "text", text: String(p.text).slice(0, 2) }, { type: "text", text: String(p.text).slice(2) }] : [p]));
        parts.push(...parts.splice(0, reasoning === undefined ? 0 : 1));
        parts.push({ type: "tool-approval-request", approvalId: `ap${seed}`, toolCallId: ids[0] ?? "none" });
      }
      const out: ModelMessage[] = [{ role: "assistant", content: parts } as ModelMessage];
      if (calls.length > 0) {
        const content: Part[] = calls.map(([name], j) => {
          const [asJson, t, value] = results[j] as [boolean, string, Record<string, unknown>];
          const output = !canonical && asJson ? { type: j % 2 ? "error-json" : "json", value } : { type: "text", value: t };
          return { type: "tool-result", toolCallId: ids[j], toolName: name, output };
        });
        if (!canonical) content.unshift({ type: "tool-approval-response", approvalId: `ap${seed}`, approved: true });
        out.push({ role: "tool", content } as ModelMessage);
      }
      return out;
    });
  const turn = fc.tuple(user, fc.array(step, { minLength: 1, maxLength: 3 })).map(([u, steps]) => [{ role: "user", content: u } as ModelMessage, ...steps.flat()]);
  return fc
    .tuple(fc.option(text, { nil: undefined }), fc.array(turn, { minLength: 1, maxLength: 3 }))
    .map(([s, turns]) => [...(s === undefined ? [] : [{ role: "system", content: s } as ModelMessage]), ...turns.flat()]);
}

test("AI SDK messages: one conversion reaches a fixed point; canonical ones round-trip exactly", () => {
  fc.assert(
    fc.property(fc.boolean().chain((c) => aiSdkConversation(c, false).map((m) => [c, m] as const)), ([canonical, messages]) => {
      const chat = fromAiSdk(messages);
      const once = toAiSdk(chat);
      assert.deepEqual(fromAiSdk(once), chat);
      assert.deepEqual(toAiSdk(fromAiSdk(once)), once);
      if (canonical) assert.deepEqual(once, plain(messages));
    }),
    { numRuns: RUNS, seed: SEED },
  );
});

function count(dt: Deltatok, messages: ChatMessage[], parse: boolean): number | string {
  try {
    return dt.countPrompt(messages, { parse_tool_arguments: parse });
  } catch (e) {
    return toDeltatokError(e).code;
  }
}

test("arguments as JSON text with parse_tool_arguments count as arguments as values (Qwen3, Llama 3.1)", async () => {
  const cases = [
    { name: "qwen3", dt: await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" }), single: false },
    {
      name: "llama3.1",
      dt: await Deltatok.create({ tokenizer: "llama3_1", chatTemplateFile: repoPath("test/fixtures/template/golden/templates/llama3.1.jinja"), date: "2026-11-30" }),
      single: true,
    },
  ];
  for (const { name, dt, single } of cases) {
    fc.assert(
      fc.property(aiSdkConversation(false, single), (messages) => {
        // each request of the conversation: the prompt before every assistant message
        const text = fromAiSdk(messages, { textParts: "join" });
        const values = fromAiSdk(messages, { textParts: "join", toolArguments: "object" });
        for (let k = 1; k < text.length; k++) {
          if (text[k]?.role !== "assistant") continue;
          const a = count(dt, text.slice(0, k), true);
          assert.equal(typeof a, "number", `${name}: ${String(a)}`);
          assert.equal(count(dt, values.slice(0, k), false), a, `${name} request ${k}`);
        }
      }),
      { numRuns: Math.ceil(RUNS / 2), seed: SEED },
    );
  }
});
