// An AI SDK agent loop that keeps its conversation under a context window on Qwen3, counted
// exactly by deltatok before every model call.
//
//   npm install && node examples/ai-sdk-window.mjs
//
// The model is the AI SDK's own MockLanguageModelV3 (from `ai/test`) playing a script — no
// network — so the messages are the real ModelMessage objects generateText builds: a
// reasoning part, a text part and a tool call per step, and the tool's result. Before each
// call, `prepareStep` converts the conversation with `fromAiSdk`, drops the oldest turns until
// the prompt (with the tools and the generation prompt, as the server renders it) fits the
// window, and hands the AI SDK the kept messages (`toAiSdk`).
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Deltatok } from "deltatok";
import { fromAiSdk, toAiSdk } from "deltatok/adapters/ai-sdk";

const WINDOW = 420; // tokens the prompt of each call may take
const SYSTEM = "You are a travel assistant. Answer in one sentence; use the weather tool for forecasts.";
const CITIES = ["Paris", "Lisbon", "Oslo", "Kyoto", "Lima", "Nairobi", "Quebec", "Hanoi"];

// The tool, once for the AI SDK and once in the OpenAI form the chat template renders.
const weatherSchema = {
  type: "object",
  properties: { city: { type: "string", description: "City name" }, days: { type: "integer", description: "Days ahead" } },
  required: ["city"],
};
const tools = {
  weather: tool({
    description: "Weather forecast for a city",
    inputSchema: jsonSchema(weatherSchema),
    execute: async ({ city, days }) => ({ city, days: days ?? 1, forecast: `${city.length % 2 ? "sunny" : "rain"}, ${10 + city.length} °C` }),
  }),
};
const TOOLS = [{ type: "function", function: { name: "weather", description: "Weather forecast for a city", parameters: weatherSchema } }];

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" });
// vLLM and MLCommons endpoints parse the arguments' JSON text before rendering: count as they do
const COUNT = { tools: TOOLS, parse_tool_arguments: true };

// Before every call: the system prompt and the newest whole turns (a user message and everything
// up to the next one, so a tool call stays with its result) that fit in the window, with their
// exact count and the indices dropped. Incremental: the next turn's trim reuses this one's work.
const TRIM = { ...COUNT, policy: "turns" };

// The scripted model: a tool call for each question, then an answer from the tool's result.
let calls = 0;
const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    calls++;
    const last = prompt[prompt.length - 1];
    if (last.role === "tool") {
      const out = last.content[0].output.value;
      const { city, forecast } = typeof out === "string" ? JSON.parse(out) : out;
      return { content: [{ type: "text", text: `In ${city} expect ${forecast}.` }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    }
    const question = last.content.map((p) => p.text).join("");
    const city = CITIES.find((c) => question.includes(c)) ?? "Paris";
    return {
      content: [
        { type: "reasoning", text: `The user asks about ${city}; the weather tool has the forecast.` },
        { type: "text", text: `Let me check ${city}.` },
        { type: "tool-call", toolCallId: `call_${calls}`, toolName: "weather", input: JSON.stringify({ city, days: 1 + (calls % 3) }) },
      ],
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage,
      warnings: [],
    };
  },
});

const history = [];
let worst = 0;
for (let turn = 1; turn <= CITIES.length; turn++) {
  history.push({ role: "user", content: [{ type: "text", text: `What is the weather in ${CITIES[turn - 1]} this week?` }] });
  const result = await generateText({
    model,
    system: SYSTEM,
    messages: history,
    tools,
    stopWhen: stepCountIs(2),
    prepareStep: ({ messages, stepNumber }) => {
      // Qwen3's template reads a user message's content as a string: join text parts, as the server does
      const chat = fromAiSdk([{ role: "system", content: SYSTEM }, ...messages], { textParts: "join" });
      const { messages: kept, count, dropped } = dt.trimToFit(chat, WINDOW, TRIM);
      worst = Math.max(worst, count);
      console.log(`turn ${turn} step ${stepNumber}: kept ${kept.length} of ${chat.length} messages (dropped ${dropped.length}), ${count} tokens, window ${WINDOW}`);
      return { messages: toAiSdk(kept.slice(1)) }; // the system prompt goes as `system`
    },
  });
  history.push(...result.response.messages);
}
console.log(`${calls} model calls; largest prompt ${worst} tokens, window ${WINDOW}`);
