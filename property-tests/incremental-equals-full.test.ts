/**
 * For generated agentic conversations and edit sequences (append, branch, rewrite an earlier
 * message, change chat_template_kwargs), every request answered incrementally has exactly the
 * ids of a full render + tokenize — or fails with the same error code. On real tokenizers and
 * their templates. fast-check prints the seed and the shrunk counterexample on failure.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { PromptOptions } from "../src/api/options.js";
import { conversation, type ConversationShape, type Message } from "./arbitraries/conversation.js";
import { messageText } from "./arbitraries/text.js";
import { enginePair, firstDiff, outcome } from "./helpers.js";
import { specialTexts, type TokenizerName } from "../test/helpers/tokenizers.js";

interface Case {
  name: string;
  tokenizer: TokenizerName;
  shape: ConversationShape;
  kwargs: Array<Record<string, unknown> | null>;
  runs: number;
}

const TOOLS = [
  { type: "function", function: { name: "get_user_details", description: "Get user", parameters: { type: "object", properties: { user_id: { type: "string" } }, required: ["user_id"] } } },
  { type: "function", function: { name: "calculate", description: "Math", parameters: { type: "object", properties: { expression: { type: "string" } } } } },
];

const CASES: Case[] = [
  { name: "qwen3", tokenizer: "qwen3", shape: { plain: false, nullContent: false, singleToolCall: false }, kwargs: [null, { enable_thinking: false }], runs: 60 },
  { name: "deepseek-v3", tokenizer: "deepseek_v3", shape: { plain: false, stringArguments: true, nullContent: true, singleToolCall: false }, kwargs: [null], runs: 50 },
  { name: "llama3 (bundled)", tokenizer: "llama3_1", shape: { plain: false, nullContent: false, singleToolCall: true }, kwargs: [null], runs: 50 },
  { name: "gemma3", tokenizer: "gemma3", shape: { plain: true, nullContent: false, singleToolCall: true }, kwargs: [null], runs: 40 },
];

type Edit = { at: number; text: string } | null;

for (const c of CASES) {
  test(`${c.name}: incremental == full for every request of generated conversations and edits`, async () => {
    const { inc, full } = await enginePair({ tokenizer: c.tokenizer });
    const specials = specialTexts(c.tokenizer);
    const edit: fc.Arbitrary<Edit> = fc.option(fc.record({ at: fc.nat(), text: messageText(specials) }), { nil: null });
    fc.assert(
      fc.property(
        conversation(c.shape, specials),
        fc.constantFrom(...c.kwargs),
        fc.boolean(),
        edit,
        fc.option(conversation(c.shape, specials, 1), { nil: null }),
        (messages, kwargs, withTools, rewrite, branch) => {
          const opts: PromptOptions = { tools: c.shape.plain || !withTools ? null : TOOLS, chat_template_kwargs: kwargs };
          const requests: Message[][] = [];
          for (let k = 1; k <= messages.length; k++) if (messages[k - 1]?.role === "assistant" || k === messages.length) requests.push(messages.slice(0, k));
          if (rewrite !== null) {
            // rewrite an earlier message's content, then replay the tail
            const j = rewrite.at % messages.length;
            const edited = messages.map((m, i) => (i === j ? { ...m, content: rewrite.text } : m));
            for (let k = j + 1; k <= edited.length; k++) requests.push(edited.slice(0, k));
          }
          if (branch !== null && messages.length > 2) {
            // same history, a different continuation
            const cut = messages.findLastIndex((m) => m.role === "assistant");
            const base = messages.slice(0, Math.max(1, cut + 1));
            const cont = branch.filter((m) => m.role !== "system");
            for (let k = 1; k <= cont.length; k++) requests.push([...base, ...cont.slice(0, k)]);
          }
          for (const req of requests) {
            const a = outcome(inc, req, opts);
            const b = outcome(full, req, opts);
            if ("ids" in a && "ids" in b) {
              const d = firstDiff(a.ids, b.ids);
              assert.equal(d, -1, `ids differ at ${d} (incremental ${a.ids.length} vs full ${b.ids.length} tokens)`);
            } else assert.deepEqual(a, b);
          }
        },
      ),
      { numRuns: Number(process.env.DELTATOK_PROPERTY_RUNS ?? c.runs) },
    );
    const s = inc.stats();
    assert.ok(s.partial > 0, "the incremental Deltatok did reuse cached prefixes");
  });
}
