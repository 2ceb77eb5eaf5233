/**
 * The switches that take one stage out of a prompt request (docs/DEBUGGING.md) change how an
 * answer is computed, never the answer: `incrementalSplice: false` encodes every render whole
 * (nothing reused, rendering still incremental), `incrementalRender: false` renders every request
 * whole (the splice still reuses), `checkIncrementalRender: true` compares every incremental
 * render with a whole one — and that check fails loudly when the two differ.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Deltatok } from "../src/api/deltatok.js";
import { checkedIncrementalRender } from "../src/api/stages.js";
import { DeltatokError } from "../src/errors.js";
import type { ChatRenderer, IncrementalRenderOutput } from "../src/render/renderer.js";
import { repoPath } from "./helpers/paths.js";

interface Conv {
  messages: Array<{ role: string }>;
  tools?: unknown[];
}
const convs = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .slice(0, 3)
  .map((l) => JSON.parse(l) as Conv);

/** Every request of the conversations: count, ids, outcome; then the Deltatok's stats. */
function replay(dt: Deltatok) {
  const out: Array<{ count: number; ids: number[]; reused: number; outcome: string; fits: boolean; rollout: string }> = [];
  for (const c of convs) {
    for (let k = 1; k < c.messages.length; k++) {
      if (c.messages[k]?.role !== "assistant") continue;
      const m = c.messages.slice(0, k);
      const r = dt.tokenizePrompt(m, { tools: c.tools }, true);
      const fits = dt.fits(m, r.count - 1, { tools: c.tools });
      out.push({ count: r.count, ids: Array.from(r.ids ?? []), reused: r.reused, outcome: r.outcome, fits, rollout: "" });
    }
    const rollout = dt.tokenizeRollout(c.messages, { tools: c.tools });
    (out[out.length - 1] as { rollout: string }).rollout = JSON.stringify(rollout.sequences.map((q) => [Array.from(q.ids), Array.from(q.mask)]));
  }
  return { out, stats: dt.stats() };
}

const create = (o: object) => Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", ...o });

test("incrementalSplice: false encodes every render whole, renders incrementally, same answers", async () => {
  const base = replay(await create({}));
  const off = replay(await create({ incrementalSplice: false }));
  assert.ok(base.stats.tokensReused > 0);
  assert.equal(off.stats.tokensReused, 0);
  assert.equal(off.stats.partial + off.stats.hits, 0);
  assert.ok((off.stats.render?.iterationsReused ?? 0) > 0, "rendering stays incremental");
  assert.deepEqual(
    off.out.map((r) => [r.count, r.ids, r.fits, r.rollout]),
    base.out.map((r) => [r.count, r.ids, r.fits, r.rollout]),
  );
  for (const r of off.out) assert.deepEqual([r.reused, r.outcome], [0, "miss"]);
});

test("incrementalRender: false renders whole and still splices; checkIncrementalRender passes on exact renders", async () => {
  const base = replay(await create({}));
  const whole = replay(await create({ incrementalRender: false }));
  const checked = replay(await create({ checkIncrementalRender: true }));
  assert.equal(whole.stats.render?.iterationsReused, 0);
  assert.ok(whole.stats.tokensReused > 0);
  assert.ok((checked.stats.render?.iterationsReused ?? 0) > 0);
  assert.deepEqual(whole.out, base.out);
  assert.deepEqual(checked.out, base.out);
});

test("the switches are validated options", async () => {
  for (const k of ["incrementalSplice", "checkIncrementalRender"]) {
    await assert.rejects(create({ [k]: "no" }), (e: DeltatokError) => e.code === "DT_INVALID_OPTION" && e.path === `options.${k}`);
  }
  const dt = await create({ incrementalSplice: false, checkIncrementalRender: true });
  assert.equal(dt.options.incrementalSplice, false);
  assert.equal(dt.options.checkIncrementalRender, true);
});

/** A renderer whose incremental render is `inc` and whole render is `whole` (either may throw). */
function fake(whole: () => string, inc: () => string): ChatRenderer {
  return {
    kind: "python",
    source: "",
    readsClock: false,
    render: () => ({ text: whole(), generation: [] }),
    renderIncremental: (): IncrementalRenderOutput => {
      const t = inc();
      return { segments: [t.slice(0, 2), t.slice(2)], reusedSegments: 0, trace: null, traceBytes: 0, generation: [], work: {} as IncrementalRenderOutput["work"] };
    },
  };
}
const fail = (): string => {
  throw new DeltatokError("DT_TEMPLATE_RUNTIME", "TypeError: x");
};

test("checkIncrementalRender fails a render that differs from the whole render, with the offset", () => {
  const run = (r: ChatRenderer) => checkedIncrementalRender(r, {}, new Date(0), null, {});
  assert.equal(run(fake(() => "abcdef", () => "abcdef")).segments.join(""), "abcdef");
  assert.throws(() => run(fake(() => "abcdef", () => "abcXef")), (e: DeltatokError) => e.code === "DT_INTERNAL" && /offset 3\b/.test(e.message));
  assert.throws(() => run(fake(() => "abc", () => "abcd")), (e: DeltatokError) => e.code === "DT_INTERNAL" && /offset 3\b/.test(e.message));
  assert.throws(() => run(fake(fail, () => "abc")), (e: DeltatokError) => e.code === "DT_INTERNAL" && /succeeded where the whole render failed/.test(e.message));
  assert.throws(() => run(fake(() => "abc", fail)), (e: DeltatokError) => e.code === "DT_INTERNAL" && /failed differently/.test(e.message));
  assert.throws(() => run(fake(fail, fail)), (e: DeltatokError) => e.code === "DT_TEMPLATE_RUNTIME", "failing alike is the render's own error");
});
