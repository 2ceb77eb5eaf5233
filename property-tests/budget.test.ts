/**
 * Context budgets (api/budget.ts). On generated agentic conversations (tools, tool-call pairs,
 * several user turns) and real templates: `fits` answers exactly `countPrompt(...) <= limit` for
 * limits around the true count; `trimToFit`'s kept messages count what it says (a fresh Deltatok's
 * countPrompt), fit, keep the pinned messages, never split a tool call from its results, and are
 * maximal (keeping the newest unit it dropped would not fit); DT_CONTEXT_TOO_SMALL exactly when
 * the pinned messages alone are over. Along a growing loop, answers equal a fresh Deltatok's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Deltatok } from "../src/api/deltatok.js";
import type { PromptOptions } from "../src/api/options.js";
import { trimPlan, type TrimPolicy } from "../src/api/budget.js";
import { toDeltatokError } from "../src/errors.js";
import { firstDiff } from "./helpers.js";
import { conversation, type ConversationShape, type Message } from "./arbitraries/conversation.js";
import { specialTexts, type TokenizerName } from "../test/helpers/tokenizers.js";
import { TEST_RENDERER } from "../test/helpers/renderer.js";

const TOOLS = [{ type: "function", function: { name: "calculate", description: "Math", parameters: { type: "object", properties: { expression: { type: "string" } } } } }];

const CASES: Array<{ tokenizer: TokenizerName; shape: ConversationShape; runs: number }> = [
  { tokenizer: "qwen3", shape: { plain: false, nullContent: false, singleToolCall: false }, runs: 40 },
  { tokenizer: "llama3_1", shape: { plain: false, nullContent: false, singleToolCall: true }, runs: 20 },
  { tokenizer: "deepseek_v3", shape: { plain: false, stringArguments: true, nullContent: true, singleToolCall: false }, runs: 20 },
  { tokenizer: "gemma3", shape: { plain: true, nullContent: false, singleToolCall: true }, runs: 20 },
];

/** countPrompt or the error code. */
function countOr(dt: Deltatok, messages: unknown[], o: PromptOptions): number | string {
  try {
    return dt.countPrompt(messages, o);
  } catch (e) {
    return toDeltatokError(e).code;
  }
}

/** Every tool message kept has its call kept, and no kept call lost its results (the tool messages after it). */
function pairsWhole(input: readonly Message[], keptIdx: ReadonlySet<number>): boolean {
  for (let i = 0; i < input.length; i++) {
    if (input[i]?.role !== "tool") continue;
    let j = i;
    while (j > 0 && input[j - 1]?.role === "tool") j--;
    const call = j - 1;
    if (call < 0 || input[call]?.role !== "assistant") continue; // a result without a call, as given
    if (keptIdx.has(i) !== keptIdx.has(call)) return false;
  }
  return true;
}

for (const c of CASES) {
  test(`${c.tokenizer}: fits == (countPrompt <= limit), trimToFit fits, pins, keeps pairs, is maximal`, async () => {
    const base = { tokenizer: c.tokenizer, date: "2026-11-30", renderer: TEST_RENDERER } as const;
    const dt = await Deltatok.create({ ...base, mode: "incremental" });
    const ref = await Deltatok.create({ ...base, mode: "full" });
    const specials = specialTexts(c.tokenizer);
    await fc.assert(
      fc.asyncProperty(
        conversation(c.shape, specials, 5),
        fc.boolean(),
        fc.integer({ min: -12, max: 12 }),
        fc.double({ min: 0, max: 1.1, noNaN: true }),
        fc.constantFrom<TrimPolicy>("oldest", "turns"),
        fc.boolean(),
        async (messages, withTools, delta, frac, policy, keepFirst) => {
          const o: PromptOptions = { tools: c.shape.plain || !withTools ? null : TOOLS };
          // fits along the growing conversation, limits around the true count
          for (let k = 1; k <= messages.length; k++) {
            const req = structuredClone(messages.slice(0, k));
            const truth = countOr(ref, req, o);
            if (typeof truth === "string") {
              assert.throws(() => dt.fits(req, 0, o), (e: unknown) => toDeltatokError(e).code === truth);
              continue;
            }
            for (const limit of [truth, truth - 1, Math.max(0, truth + delta)]) {
              if (limit < 0) continue;
              assert.equal(dt.fits(req, limit, o), truth <= limit, `request ${k}, limit ${limit}, count ${truth}`);
            }
          }
          // trimToFit on the whole conversation at a limit between nothing and the whole count
          const full = countOr(ref, messages, o);
          if (typeof full === "string") return;
          const limit = Math.floor(full * frac);
          const plan = trimPlan(messages, policy, keepFirst);
          const pinnedMsgs = messages.slice(0, plan.head).concat(messages.slice(plan.tail));
          const pinned = countOr(ref, pinnedMsgs, o);
          let r;
          try {
            r = dt.trimToFit(messages, limit, { ...o, policy, keep_first_user: keepFirst });
          } catch (e) {
            const err = toDeltatokError(e);
            if (typeof pinned === "string") return assert.equal(err.code, pinned);
            assert.equal(err.code, "DT_CONTEXT_TOO_SMALL");
            assert.ok(pinned > limit, `pinned ${pinned} > limit ${limit}`);
            assert.equal((e as { pinned?: number }).pinned, pinned);
            return;
          }
          assert.ok(typeof pinned === "string" || pinned <= limit || r.dropped.length === 0);
          const keptIdx = new Set(messages.map((_, i) => i).filter((i) => !r.dropped.includes(i)));
          assert.deepEqual(r.messages, [...keptIdx].map((i) => messages[i]), "kept = the input minus dropped, the caller's objects");
          assert.equal(r.count, countOr(ref, r.messages, o), "count = countPrompt of the kept messages");
          assert.ok(r.count <= limit);
          for (let i = 0; i < plan.head; i++) assert.ok(keptIdx.has(i), `pinned head ${i}`);
          for (let i = plan.tail; i < messages.length; i++) assert.ok(keptIdx.has(i), `pinned tail ${i}`);
          assert.ok(pairsWhole(messages, keptIdx), "tool pairs whole");
          if (r.dropped.length > 0) {
            // keeping the newest dropped unit would not fit
            const from = (r.dropped.at(-1) as number) + 1;
            const d = plan.starts.indexOf(from === plan.tail ? -1 : from);
            const unitStart = d < 0 ? (plan.starts.at(-1) as number) : (plan.starts[d - 1] as number);
            const more = messages.slice(0, plan.head).concat(messages.slice(unitStart));
            const n = countOr(ref, more, o);
            assert.ok(typeof n === "number" && n > limit, `one unit fewer dropped (${unitStart}) counts ${String(n)}, over ${limit}`);
          }
        },
      ),
      { numRuns: Number(process.env.DELTATOK_PROPERTY_RUNS ?? c.runs) },
    );
  });
}

for (const storeIds of [true, false]) test(`qwen3${storeIds ? "" : " (counts only)"}: along a growing agent loop, trimToFit answers equal a fresh Deltatok's`, async () => {
  const base = { tokenizer: "qwen3", date: "2026-11-30", renderer: TEST_RENDERER } as const;
  const dt = await Deltatok.create({ ...base, mode: "incremental", storeIds });
  const whole = await Deltatok.create({ ...base, mode: "full" });
  const specials = specialTexts("qwen3");
  await fc.assert(
    fc.asyncProperty(conversation({ plain: false, nullContent: false, singleToolCall: false }, specials, 6), fc.integer({ min: 40, max: 400 }), async (messages, limit) => {
      for (let k = 1; k <= messages.length; k++) {
        // new objects every turn, as a framework builds them
        const req = structuredClone(messages.slice(0, k));
        const fresh = await Deltatok.create({ ...base, mode: "incremental" });
        let a: unknown;
        let b: unknown;
        try {
          const r = dt.trimToFit(req, limit, { tools: TOOLS });
          assert.equal(r.count, whole.countPrompt(r.messages, { tools: TOOLS }), `turn ${k}: the count of the kept messages`);
          if (!storeIds) assert.equal(dt.countPrompt([...r.messages, { role: "user", content: "More?" }], { tools: TOOLS }), whole.countPrompt([...r.messages, { role: "user", content: "More?" }], { tools: TOOLS }));
          // the snapshots trimToFit stored (assembled from reused parts) hold the exact ids and cuts
          for (const next of storeIds ? [r.messages, [...r.messages, { role: "assistant", content: "Done." }]] : []) {
            const x = Array.from(dt.encodePrompt(next, { tools: TOOLS }));
            const y = Array.from(whole.encodePrompt(next, { tools: TOOLS }));
            assert.equal(firstDiff(x, y), -1, `turn ${k}: ids of the kept messages (${next.length})`);
          }
          a = { count: r.count, dropped: r.dropped };
        } catch (e) {
          a = toDeltatokError(e).code;
        }
        try {
          const r = fresh.trimToFit(req, limit, { tools: TOOLS });
          b = { count: r.count, dropped: r.dropped };
        } catch (e) {
          b = toDeltatokError(e).code;
        }
        assert.deepEqual(a, b, `turn ${k}`);
      }
    }),
    { numRuns: Number(process.env.DELTATOK_PROPERTY_RUNS ?? 15) },
  );
});
