// A LangChain.js agent loop that keeps its conversation under a context window on Qwen3,
// counted exactly by deltatok before every model call.
//
//   npm install && node examples/langchain-window.mjs
//
// The model is scripted — no network — and answers with new @langchain/core message objects, as
// a chat model does: an AIMessage with its reasoning in additional_kwargs.reasoning_content (as
// OpenAI-compatible chat models give it) and a tool call, then a ToolMessage with the tool's
// result, then the answer. Before each call the loop converts the history with `fromLangChain`,
// drops the oldest turns until the prompt (with the tools and the generation prompt, as the
// server renders it) fits the window, and builds the messages it sends with `toLangChain`.
import * as lc from "@langchain/core/messages";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { Deltatok } from "deltatok";
import { fromLangChain, toLangChain } from "deltatok/adapters/langchain";

const WINDOW = 400; // tokens the prompt of each call may take
const QUESTIONS = [
  "How many days until the Lisbon conference?",
  "Book a hotel near the venue.",
  "What is the exchange rate for euros?",
  "Find a vegetarian restaurant for Tuesday.",
  "Is there a train from Porto on Monday?",
  "Remind me what the hotel costs per night.",
  "Summarise the plan.",
];
const TOOLS = [
  {
    type: "function",
    function: {
      name: "search",
      description: "Search the travel notes",
      parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
    },
  },
];

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" });
// vLLM and MLCommons endpoints parse the arguments' JSON text before rendering: count as they do
const COUNT = { tools: TOOLS, parse_tool_arguments: true };

// Before every call: the system prompt and the newest whole turns (a user message and everything
// up to the next one, so a tool call stays with its result) that fit in the window, with their
// exact count and the indices dropped. Incremental: the next turn's trim reuses this one's work.
const TRIM = { ...COUNT, policy: "turns" };

// The scripted model: a search for each question, then an answer from what it found.
let calls = 0;
function model(messages) {
  calls++;
  const last = messages[messages.length - 1];
  if (ToolMessage.isInstance(last)) return new AIMessage({ content: `Here is what I found: ${last.content}` });
  const question = String(last.content);
  return new AIMessage({
    content: "Let me look that up.",
    additional_kwargs: { reasoning_content: `The notes should answer: ${question}` },
    tool_calls: [{ id: `call_${calls}`, name: "search", args: { query: question.slice(0, 40) }, type: "tool_call" }],
  });
}
const search = ({ query }) => `${query.split(" ").length} notes match "${query}"; the first says it is booked for ${3 + (query.length % 5)} days.`;

const history = [new SystemMessage("You plan business trips. Be brief and use the search tool.")];
let worst = 0;
for (let turn = 1; turn <= QUESTIONS.length; turn++) {
  history.push(new HumanMessage(QUESTIONS[turn - 1]));
  for (let step = 0; ; step++) {
    const chat = fromLangChain(history);
    const { messages: kept, count, dropped } = dt.trimToFit(chat, WINDOW, TRIM);
    worst = Math.max(worst, count);
    console.log(`turn ${turn} step ${step}: kept ${kept.length} of ${chat.length} messages (dropped ${dropped.length}), ${count} tokens, window ${WINDOW}`);
    const reply = model(toLangChain(kept, lc));
    history.push(reply);
    if (!reply.tool_calls?.length) break;
    for (const call of reply.tool_calls) history.push(new ToolMessage({ content: search(call.args), tool_call_id: call.id, name: call.name }));
  }
}
console.log(`${calls} model calls; largest prompt ${worst} tokens, window ${WINDOW}`);
