/**
 * Messages recognised by content (render/messages.ts, MessageRecall): along a growing
 * conversation, each request passes the messages as the same objects, as structuredClone or JSON
 * copies, as a copy with one message changed, or as the earlier objects mutated in place after
 * they were counted; every answer equals the ids of a fresh Deltatok that has seen nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Deltatok } from "../src/api/deltatok.js";
import type { PromptOptions } from "../src/api/options.js";
import { conversation, type ConversationShape, type Message } from "./arbitraries/conversation.js";
import { messageText } from "./arbitraries/text.js";
import { firstDiff, outcome } from "./helpers.js";
import { specialTexts, type TokenizerName } from "../test/helpers/tokenizers.js";
import { TEST_RENDERER } from "../test/helpers/renderer.js";

const TOOLS = [{ type: "function", function: { name: "calculate", description: "Math", parameters: { type: "object", properties: { expression: { type: "string" } } } } }];

const CASES: Array<{ tokenizer: TokenizerName; shape: ConversationShape; runs: number }> = [
  { tokenizer: "qwen3", shape: { plain: false, nullContent: false, singleToolCall: false }, runs: 40 },
  { tokenizer: "llama3_1", shape: { plain: false, nullContent: false, singleToolCall: true }, runs: 25 },
];

type Pass = "same" | "clone" | "json" | "edit" | "mutate";

for (const c of CASES) {
  test(`${c.tokenizer}: new, copied, edited and mutated message objects get a fresh Deltatok's answers`, async () => {
    const base = { tokenizer: c.tokenizer, date: "2026-11-30", renderer: TEST_RENDERER } as const;
    const inc = await Deltatok.create({ ...base, mode: "incremental" });
    const specials = specialTexts(c.tokenizer);
    await fc.assert(
      fc.asyncProperty(
        conversation(c.shape, specials),
        fc.array(fc.constantFrom<Pass>("same", "clone", "json", "edit", "mutate"), { minLength: 12, maxLength: 12 }),
        fc.nat(),
        messageText(specials),
        fc.boolean(),
        async (messages, passes, at, text, withTools) => {
          const opts: PromptOptions = { tools: withTools ? TOOLS : null };
          let live: Message[] = messages.map((m) => ({ ...m }));
          for (let k = 1; k <= messages.length; k++) {
            const pass = passes[k % passes.length] as Pass;
            let req: Message[] = live.slice(0, k);
            if (pass === "clone") req = structuredClone(req);
            else if (pass === "json") req = JSON.parse(JSON.stringify(req)) as Message[];
            else if (pass === "edit") {
              req = structuredClone(req);
              const j = at % k;
              req[j] = { ...req[j], content: text };
            } else if (pass === "mutate") {
              // the objects counted before, changed in place
              const j = at % k;
              (live[j] as Message).content = `${String((live[j] as Message).content ?? "")}${text}`;
              req = live.slice(0, k);
            }
            const fresh = await Deltatok.create({ ...base, mode: "full" });
            const a = outcome(inc, req, opts);
            const b = outcome(fresh, req, opts);
            if ("ids" in a && "ids" in b) {
              const d = firstDiff(a.ids, b.ids);
              assert.equal(d, -1, `request ${k} (${pass}): ids differ at ${d} (${a.ids.length} vs ${b.ids.length} tokens)`);
            } else assert.deepEqual(a, b, `request ${k} (${pass})`);
            if (pass === "edit" || pass === "json") live = req.concat(live.slice(k)).map((m) => ({ ...m }));
          }
        },
      ),
      { numRuns: Number(process.env.DELTATOK_PROPERTY_RUNS ?? c.runs) },
    );
    assert.ok((inc.stats().messagesRecognised ?? 0) > 0, "copies were recognised by content");
  });
}
