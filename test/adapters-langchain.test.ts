/**
 * The LangChain.js adapter on real `@langchain/core` messages (SystemMessage, HumanMessage with
 * text blocks, AIMessage with tool calls, reasoning in additional_kwargs or in content blocks,
 * ToolMessage, ChatMessage): the OpenAI messages it gives are the hand-written ones and count the
 * same on Qwen3 and Llama 3.1; canonical messages round-trip both ways, as instances of the
 * classes passed in; what has no OpenAI form is refused with a code.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as lc from "@langchain/core/messages";
import { AIMessage, ChatMessage as LcChatMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { Deltatok } from "../src/api/deltatok.js";
import { fromLangChain, toLangChain, type ChatMessage } from "../src/adapters/langchain.js";
import { repoPath } from "./helpers/paths.js";

function code(fn: () => unknown): { code: string; path: string | undefined } {
  try {
    fn();
  } catch (e) {
    const err = e as { code: string; path?: string };
    return { code: err.code, path: err.path };
  }
  assert.fail("expected an error");
}

/** What a LangChain message holds that the OpenAI form carries (its class, content, calls, reasoning, name, call id). */
function fields(m: BaseMessage): unknown {
  const r = m as unknown as Record<string, unknown>;
  const plainCalls = (x: unknown) => (Array.isArray(x) && x.length > 0 ? JSON.parse(JSON.stringify(x)) : undefined);
  const kw = m.additional_kwargs ?? {};
  return JSON.parse(
    JSON.stringify({
      type: m.type,
      role: r.role,
      content: m.content,
      name: m.name,
      tool_call_id: r.tool_call_id,
      tool_calls: plainCalls(r.tool_calls),
      invalid_tool_calls: plainCalls(r.invalid_tool_calls),
      reasoning: kw.reasoning_content,
    }),
  );
}

const TOOLS = [{ type: "function", function: { name: "search", description: "Search", parameters: { type: "object", properties: { query: { type: "string" } } } } }];

const conversation = (): BaseMessage[] => [
  new SystemMessage("Be brief."),
  new HumanMessage({ content: "Find the hotel." }),
  new AIMessage({
    content: "Searching.",
    additional_kwargs: { reasoning_content: "The notes have it." },
    tool_calls: [{ id: "call_1", name: "search", args: { query: "hotel", limit: 3, ratio: 0.5 }, type: "tool_call" }],
  }),
  new ToolMessage({ content: "Hotel Lisboa, 120 EUR", tool_call_id: "call_1", name: "search" }),
  new AIMessage("Hotel Lisboa, 120 EUR a night."),
];
const expected: ChatMessage[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Find the hotel." },
  {
    role: "assistant",
    content: "Searching.",
    reasoning_content: "The notes have it.",
    tool_calls: [{ id: "call_1", type: "function", function: { name: "search", arguments: '{"query":"hotel","limit":3,"ratio":0.5}' } }],
  },
  { role: "tool", tool_call_id: "call_1", content: "Hotel Lisboa, 120 EUR", name: "search" },
  { role: "assistant", content: "Hotel Lisboa, 120 EUR a night." },
];

test("LangChain messages convert to the hand-written OpenAI messages and count the same on Qwen3 and Llama 3.1", async () => {
  const chat = fromLangChain(conversation());
  assert.deepEqual(chat, expected);
  const objects = fromLangChain(conversation(), { toolArguments: "object" });
  const deltatoks = [
    await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" }),
    await Deltatok.create({ tokenizer: "llama3_1", chatTemplateFile: repoPath("test/fixtures/template/golden/templates/llama3.1.jinja"), date: "2026-11-30" }),
  ];
  for (const dt of deltatoks) {
    for (const k of [2, 4]) {
      const hand = dt.countPrompt(expected.slice(0, k), { tools: TOOLS, parse_tool_arguments: true });
      assert.equal(dt.countPrompt(chat.slice(0, k), { tools: TOOLS, parse_tool_arguments: true }), hand);
      assert.equal(dt.countPrompt(objects.slice(0, k), { tools: TOOLS }), hand);
    }
  }
});

test("canonical messages round-trip both ways and come back as instances of the classes passed", () => {
  const messages: BaseMessage[] = [
    ...conversation(),
    new HumanMessage({ content: [{ type: "text", text: "Two " }, { type: "text", text: "parts." }], name: "ana" }),
    new AIMessage({
      content: "",
      tool_calls: [
        { id: "a", name: "search", args: { query: "x", nested: { "1": [1, null, true] } }, type: "tool_call" },
        { id: "b", name: "search", args: {}, type: "tool_call" },
      ],
      invalid_tool_calls: [{ id: "c", name: "search", args: '{"query": ', type: "invalid_tool_call" }],
    }),
    new ToolMessage({ content: [{ type: "text", text: "r1" }], tool_call_id: "a" }),
    new LcChatMessage({ content: "an aside", role: "critic" }),
  ];
  const chat = fromLangChain(messages);
  assert.deepEqual(chat[6]?.tool_calls?.[2], { id: "c", type: "function", function: { name: "search", arguments: '{"query": ' } });
  assert.deepEqual(chat[8], { role: "critic", content: "an aside" });
  const back = toLangChain(chat, lc);
  assert.deepEqual(back.map(fields), messages.map(fields));
  for (let i = 0; i < messages.length; i++) assert.equal(Object.getPrototypeOf(back[i]), Object.getPrototypeOf(messages[i]), `message ${i} class`);
  assert.deepEqual(fromLangChain(back), chat);
  assert.deepEqual(fromLangChain(messages, { textParts: "join" })[5]?.content, "Two \nparts.");
  // without a ChatMessage class a role other than the four is refused
  const { ChatMessage: _omit, ...four } = lc;
  void _omit;
  assert.deepEqual(code(() => toLangChain(chat, four as never)), { code: "DT_ADAPTER_UNSUPPORTED", path: "messages[8].role" });
});

test("reasoning and text blocks of an AIMessage are joined; tool-use blocks that repeat a call are skipped", () => {
  const m = new AIMessage({
    content: [
      { type: "reasoning", reasoning: "first " },
      { type: "text", text: "Hello" },
      { type: "thinking", thinking: "second" },
      { type: "text", text: " world" },
      { type: "tool_use", id: "t1", name: "search", input: { query: "q" } },
    ],
    tool_calls: [{ id: "t1", name: "search", args: { query: "q" }, type: "tool_call" }],
  });
  const [c] = fromLangChain([m]);
  assert.deepEqual(c, {
    role: "assistant",
    content: "Hello world",
    reasoning_content: "first second",
    tool_calls: [{ id: "t1", type: "function", function: { name: "search", arguments: '{"query":"q"}' } }],
  });
  const again = toLangChain([c as ChatMessage], lc)[0] as AIMessage;
  assert.equal(again.content, "Hello world");
  assert.equal(again.additional_kwargs.reasoning_content, "first second");
  assert.deepEqual(fromLangChain([again]), [c]);
});

test("fromLangChain and toLangChain refuse with a code and a path what has no OpenAI form", () => {
  const cases: Array<[BaseMessage[], string, string]> = [
    [[new HumanMessage({ content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] })], "DT_ADAPTER_UNSUPPORTED", "messages[0].content[0]"],
    [[new AIMessage({ content: [{ type: "tool_use", id: "z", name: "f", input: {} }] })], "DT_ADAPTER_UNSUPPORTED", "messages[0].content[0]"],
    [
      [new AIMessage({ content: [{ type: "reasoning", reasoning: "a" }], additional_kwargs: { reasoning_content: "b" } })],
      "DT_ADAPTER_UNSUPPORTED",
      "messages[0].additional_kwargs.reasoning_content",
    ],
    [[new AIMessage({ content: "", tool_calls: [{ id: "t", name: "f", args: { n: Number.POSITIVE_INFINITY } }] })], "DT_INVALID_MESSAGE", "messages[0].tool_calls[0].args.n"],
    [[new lc.RemoveMessage({ id: "m1" })], "DT_ADAPTER_UNSUPPORTED", "messages[0].type"],
  ];
  for (const [messages, c, path] of cases) assert.deepEqual(code(() => fromLangChain(messages)), { code: c, path });
  assert.deepEqual(code(() => toLangChain([{ role: "user", content: "x" }], {} as never)), { code: "DT_INVALID_OPTION", path: "classes.SystemMessage" });
  assert.deepEqual(
    code(() => toLangChain([{ role: "assistant", content: "", tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: "[1, 2]" } }] }], lc)),
    { code: "DT_ADAPTER_UNSUPPORTED", path: "messages[0].tool_calls[0].function.arguments" },
  );
  assert.deepEqual(code(() => toLangChain([{ role: "user", content: [{ type: "image_url" } as never] }], lc)), { code: "DT_ADAPTER_UNSUPPORTED", path: "messages[0].content[0]" });
});
