/**
 * The AI SDK adapter on messages built with the real `ai` package (generateText with its
 * MockLanguageModelV3 and a real tool, and ModelMessage literals checked by its types): the
 * OpenAI messages it gives are the hand-written ones and count the same on Qwen3 and Llama 3.1;
 * canonical messages round-trip both ways; what has no OpenAI form is refused with a code.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Deltatok } from "../src/api/deltatok.js";
import { fromAiSdk, toAiSdk, type ChatMessage } from "../src/adapters/ai-sdk.js";
import { repoPath } from "./helpers/paths.js";

const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };

async function deltatoks(): Promise<Array<{ name: string; dt: Deltatok }>> {
  return [
    { name: "qwen3", dt: await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" }) },
    {
      name: "llama3.1",
      dt: await Deltatok.create({ tokenizer: "llama3_1", chatTemplateFile: repoPath("test/fixtures/template/golden/templates/llama3.1.jinja"), date: "2026-11-30" }),
    },
  ];
}

function code(fn: () => unknown): { code: string; path: string | undefined } {
  try {
    fn();
  } catch (e) {
    const err = e as { code: string; path?: string };
    return { code: err.code, path: err.path };
  }
  assert.fail("expected an error");
}

const TOOLS = [
  {
    type: "function",
    function: { name: "weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } } } },
  },
];

/** A conversation generateText builds: reasoning, text, a tool call, its json result, the answer. */
async function generated(): Promise<ModelMessage[]> {
  const model = new MockLanguageModelV3({
    doGenerate: [
      {
        content: [
          { type: "reasoning", text: "The weather tool knows." },
          { type: "text", text: "Checking Paris." },
          { type: "tool-call", toolCallId: "call_1", toolName: "weather", input: '{"city":"Paris","days":2}' },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      },
      { content: [{ type: "text", text: "Sunny, 21.5 °C." }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] },
    ],
  });
  const tools = {
    weather: tool({
      description: "Weather",
      inputSchema: jsonSchema<{ city: string; days?: number }>({ type: "object", properties: { city: { type: "string" }, days: { type: "integer" } } }),
      execute: async ({ city }) => ({ city, temp: 21.5, sky: "sunny" }),
    }),
  };
  const messages: ModelMessage[] = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Weather in Paris?" },
  ];
  const r = await generateText({ model, messages, tools, stopWhen: stepCountIs(2), allowSystemInMessages: true } as Parameters<typeof generateText>[0]);
  return [...messages, ...r.response.messages];
}

test("a generateText conversation converts to the hand-written OpenAI messages and counts the same", async () => {
  const messages = await generated();
  const expected: ChatMessage[] = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Weather in Paris?" },
    {
      role: "assistant",
      content: "Checking Paris.",
      reasoning_content: "The weather tool knows.",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Paris","days":2}' } }],
    },
    { role: "tool", tool_call_id: "call_1", name: "weather", content: '{"city":"Paris","temp":21.5,"sky":"sunny"}' },
    { role: "assistant", content: "Sunny, 21.5 °C." },
  ];
  const chat = fromAiSdk(messages);
  assert.deepEqual(chat, expected);
  const objects = fromAiSdk(messages, { toolArguments: "object" });
  assert.deepEqual((objects[2]?.tool_calls?.[0]?.function.arguments), { city: "Paris", days: 2 });
  for (const { name, dt } of await deltatoks()) {
    for (const k of [2, 4]) {
      const hand = dt.countPrompt(expected.slice(0, k), { tools: TOOLS, parse_tool_arguments: true });
      assert.equal(dt.countPrompt(chat.slice(0, k), { tools: TOOLS, parse_tool_arguments: true }), hand, `${name} request ${k}`);
      assert.equal(dt.countPrompt(objects.slice(0, k), { tools: TOOLS }), hand, `${name} request ${k}, object arguments`);
    }
    assert.equal(dt.countMessage(chat[4]), dt.countMessage(expected[4]), name);
  }
  // the json result comes back as its text (the OpenAI format has no place for its kind); the rest is equal
  const back = toAiSdk(chat);
  // (the AI SDK writes absent fields as undefined: compare as JSON, where they are absent)
  assert.deepEqual(back.slice(0, 3), JSON.parse(JSON.stringify(messages.slice(0, 3))));
  assert.deepEqual(back[3], { role: "tool", content: [{ type: "tool-result", toolCallId: "call_1", toolName: "weather", output: { type: "text", value: '{"city":"Paris","temp":21.5,"sky":"sunny"}' } }] });
  assert.deepEqual(fromAiSdk(back), chat);
});

test("canonical messages round-trip both ways: system, multi-part user text, reasoning, parallel tool calls, text results", () => {
  const messages: ModelMessage[] = [
    { role: "system", content: "You are terse." },
    { role: "user", content: [{ type: "text", text: "Compare " }, { type: "text", text: "two cities." }] },
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "Two lookups." },
        { type: "text", text: "Looking both up." },
        { type: "tool-call", toolCallId: "a", toolName: "weather", input: { city: "Oslo", nested: { list: [1, 2.5, null, true], "1": "one" } } },
        { type: "tool-call", toolCallId: "b", toolName: "weather", input: { city: "Lima" } },
      ],
    },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "a", toolName: "weather", output: { type: "text", value: "cold" } },
        { type: "tool-result", toolCallId: "b", toolName: "weather", output: { type: "text", value: "mild" } },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: "Oslo is colder." }] },
    { role: "user", content: "Thanks" },
    { role: "assistant", content: [{ type: "reasoning", text: "" }, { type: "text", text: "You're welcome." }] },
  ];
  const chat = fromAiSdk(messages);
  assert.equal(chat.length, 8, "one OpenAI tool message per result");
  assert.deepEqual(chat[1]?.content, [{ type: "text", text: "Compare " }, { type: "text", text: "two cities." }]);
  assert.equal(chat[2]?.tool_calls?.[0]?.function.arguments, JSON.stringify({ city: "Oslo", nested: { list: [1, 2.5, null, true], "1": "one" } }));
  assert.deepEqual(toAiSdk(chat), messages);
  assert.deepEqual(fromAiSdk(toAiSdk(chat)), chat);
  // textParts: "join" gives the string a text-only template reads (and comes back as a string)
  const joined = fromAiSdk(messages, { textParts: "join" });
  assert.equal(joined[1]?.content, "Compare \ntwo cities.");
  assert.equal(toAiSdk(joined)[1]?.content, "Compare \ntwo cities.");
});

test("non-canonical messages reach a fixed point after one conversion", () => {
  const messages: ModelMessage[] = [
    { role: "user", content: "hi" },
    { role: "assistant", content: "plain string answer" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "a" },
        { type: "tool-approval-request", approvalId: "p1", toolCallId: "t" },
        { type: "reasoning", text: "r1" },
        { type: "text", text: "b" },
        { type: "reasoning", text: "r2" },
        { type: "tool-call", toolCallId: "t", toolName: "f", input: {} },
      ],
    },
    {
      role: "tool",
      content: [
        { type: "tool-approval-response", approvalId: "p1", approved: true },
        { type: "tool-result", toolCallId: "t", toolName: "f", output: { type: "error-json", value: { error: "boom" } } },
      ],
    },
  ];
  const chat = fromAiSdk(messages);
  assert.deepEqual(chat.slice(1), [
    { role: "assistant", content: "plain string answer" },
    { role: "assistant", content: "ab", reasoning_content: "r1r2", tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "t", name: "f", content: '{"error":"boom"}' },
  ]);
  const once = toAiSdk(chat);
  assert.deepEqual(once[1], { role: "assistant", content: [{ type: "text", text: "plain string answer" }] });
  assert.deepEqual(toAiSdk(fromAiSdk(once)), once);
});

test("toAiSdk: a tool message without name takes its call's; null content; arguments that are not JSON are refused", () => {
  const back = toAiSdk([
    { role: "user", content: "x" },
    { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "lookup", arguments: '{"q": 1}' } }] },
    { role: "tool", tool_call_id: "c", content: "found" },
  ]);
  assert.deepEqual(back[1], { role: "assistant", content: [{ type: "tool-call", toolCallId: "c", toolName: "lookup", input: { q: 1 } }] });
  assert.deepEqual(back[2], { role: "tool", content: [{ type: "tool-result", toolCallId: "c", toolName: "lookup", output: { type: "text", value: "found" } }] });
  assert.deepEqual(
    code(() => toAiSdk([{ role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{oops" } }] }])),
    { code: "DT_INVALID_TOOL_ARGUMENTS", path: "messages[0].tool_calls[0].function.arguments" },
  );
  assert.deepEqual(code(() => toAiSdk([{ role: "tool", tool_call_id: "zz", content: "r" }])), { code: "DT_INVALID_MESSAGE", path: "messages[0].name" });
  assert.equal(code(() => toAiSdk([{ role: "system", content: [{ type: "text", text: "s" }] }])).code, "DT_ADAPTER_UNSUPPORTED");
  assert.equal(code(() => toAiSdk([{ role: "developer", content: "s" }])).code, "DT_ADAPTER_UNSUPPORTED");
});

test("fromAiSdk refuses with a code and a path what has no OpenAI form or is not JSON", () => {
  const cases: Array<[ModelMessage[], string, string]> = [
    [[{ role: "user", content: [{ type: "text", text: "see" }, { type: "image", image: new URL("https://example.com/a.png") }] }], "DT_ADAPTER_UNSUPPORTED", "messages[0].content[1]"],
    [[{ role: "user", content: [{ type: "file", data: "aGVsbG8=", mediaType: "text/plain" }] }], "DT_ADAPTER_UNSUPPORTED", "messages[0].content[0]"],
    [[{ role: "assistant", content: [{ type: "tool-call", toolCallId: "w", toolName: "web_search", input: {}, providerExecuted: true }] }], "DT_ADAPTER_UNSUPPORTED", "messages[0].content[0]"],
    [[{ role: "assistant", content: [{ type: "file", data: "aGk=", mediaType: "image/png" }] }], "DT_ADAPTER_UNSUPPORTED", "messages[0].content[0]"],
    [[{ role: "tool", content: [{ type: "tool-result", toolCallId: "t", toolName: "f", output: { type: "execution-denied", reason: "no" } }] }], "DT_ADAPTER_UNSUPPORTED", "messages[0].content[0].output"],
    [[{ role: "tool", content: [{ type: "tool-approval-response", approvalId: "a", approved: true, providerExecuted: true }] }], "DT_ADAPTER_UNSUPPORTED", "messages[0].content[0]"],
    [[{ role: "assistant", content: [{ type: "tool-call", toolCallId: "t", toolName: "f", input: { n: Number.NaN } }] }], "DT_INVALID_MESSAGE", "messages[0].content[0].input.n"],
    [[{ role: "assistant", content: [{ type: "tool-call", toolCallId: "t", toolName: "f", input: { when: new Date(0) } }] }], "DT_INVALID_MESSAGE", "messages[0].content[0].input.when"],
    [[{ role: "assistant", content: [{ type: "tool-call", toolCallId: "t", toolName: "f", input: { big: 10n } }] }], "DT_INVALID_MESSAGE", "messages[0].content[0].input.big"],
    [[{ role: "bot", content: "x" } as unknown as ModelMessage], "DT_INVALID_MESSAGE", "messages[0].role"],
  ];
  for (const [messages, c, path] of cases) assert.deepEqual(code(() => fromAiSdk(messages)), { code: c, path }, JSON.stringify(messages, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)));
  // an integer beyond 2^53 is exact as JSON text, refused as an object (its rendered digits would differ)
  const big: ModelMessage[] = [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "t", toolName: "f", input: { n: 1e21 } }] }];
  assert.equal(fromAiSdk(big)[0]?.tool_calls?.[0]?.function.arguments, '{"n":1e+21}');
  assert.deepEqual(code(() => fromAiSdk(big, { toolArguments: "object" })), { code: "DT_ADAPTER_UNSUPPORTED", path: "messages[0].content[0].input.n" });
  assert.deepEqual(code(() => fromAiSdk([], { toolArguments: "json" } as never)), { code: "DT_INVALID_OPTION", path: "options.toolArguments" });
  assert.deepEqual(code(() => fromAiSdk([], { parse_tool_arguments: true } as never)), { code: "DT_INVALID_OPTION", path: "options.parse_tool_arguments" });
  assert.equal(code(() => fromAiSdk("nope" as never)).code, "DT_INVALID_MESSAGES");
});
