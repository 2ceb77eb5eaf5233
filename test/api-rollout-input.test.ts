/**
 * tokenizeRollout's input: sampled ids and logprobs are validated per conversation (coded
 * DT_INVALID_SAMPLED_IDS with the path); the sampled fields never reach the template; every
 * mode (incremental, counts-only, full) gives the same rollout.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" });
const base = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Say hi." },
  { role: "assistant", content: "Hi." },
  { role: "user", content: "Again." },
  { role: "assistant", content: "Hi again." },
];
const canonical = dt.tokenizeRollout(base);
const first = canonical.sequences[0]?.turns[0];
assert.ok(first !== undefined);
const hiIds = Array.from(canonical.sequences[0]?.ids.subarray(first.completion[0], first.completion[1]) ?? []);

function withSample(extra: Record<string, unknown>, at = 2) {
  return base.map((m, i) => (i === at ? { ...m, ...extra } : m));
}

const BAD: Array<[string, Record<string, unknown>, string, number?]> = [
  ["an id outside the vocabulary", { sampled_ids: [...hiIds.slice(0, 1), 10_000_000] }, "messages[2].sampled_ids[1]"],
  ["a negative id", { sampled_ids: [-1] }, "messages[2].sampled_ids[0]"],
  ["a non-integer id", { sampled_ids: [1.5] }, "messages[2].sampled_ids[0]"],
  ["an id given as a string", { sampled_ids: ["12"] }, "messages[2].sampled_ids[0]"],
  ["sampled_ids not a list", { sampled_ids: 12 }, "messages[2].sampled_ids"],
  ["logprobs of another length", { sampled_ids: hiIds, sampled_logprobs: [-0.1] }, "messages[2].sampled_logprobs"],
  ["a NaN logprob", { sampled_ids: hiIds, sampled_logprobs: hiIds.map(() => Number.NaN) }, "messages[2].sampled_logprobs[0]"],
  ["a logprob given as a string", { sampled_ids: hiIds, sampled_logprobs: hiIds.map(() => "-1") }, "messages[2].sampled_logprobs[0]"],
  ["logprobs without ids", { sampled_logprobs: [-1] }, "messages[2].sampled_logprobs"],
  ["sampled ids on a user message", { sampled_ids: hiIds }, "messages[1].sampled_ids", 1],
];

for (const [what, extra, path, at] of BAD) {
  test(`${what}: DT_INVALID_SAMPLED_IDS at ${path}, and the Deltatok answers the next conversation`, () => {
    assert.throws(() => dt.tokenizeRollout(withSample(extra, at)), (e: unknown) => {
      const err = e as { code: string; path?: string };
      assert.equal(err.code, "DT_INVALID_SAMPLED_IDS");
      assert.equal(err.path, path);
      return true;
    });
    assert.equal(dt.tokenizeRollout(base).sequences.length, canonical.sequences.length);
  });
}

test("-Infinity is a valid logprob; logprobs land on their tokens, NaN elsewhere", () => {
  const lps = hiIds.map((_x, i) => (i === 0 ? Number.NEGATIVE_INFINITY : -0.5));
  const r = dt.tokenizeRollout(withSample({ sampled_ids: hiIds, sampled_logprobs: lps }));
  const s = r.sequences[0];
  assert.ok(s !== undefined && s.logprobs !== null);
  const t = s.turns[0] as { completion: [number, number] };
  assert.equal(s.logprobs[t.completion[0]], Number.NEGATIVE_INFINITY);
  assert.ok(Number.isNaN(s.logprobs[0]));
  assert.equal(r.drift.length, 0);
});

test("the sampled fields do not reach the template", async () => {
  // a template that prints every key of every message: sampled_* would show up in the prompts
  const echo = await Deltatok.create({
    tokenizer: "qwen3",
    chatTemplate: "{% for m in messages %}<|im_start|>{{ m.role }}\n{% for k in m %}{{ k }};{% endfor %}{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
  });
  const plain = echo.tokenizeRollout(base);
  const t = plain.sequences[0]?.turns[0] as { completion: [number, number] };
  const ids = Array.from(plain.sequences[0]?.ids.subarray(t.completion[0], t.completion[1]) ?? []);
  const r = echo.tokenizeRollout(withSample({ sampled_ids: ids, sampled_logprobs: ids.map(() => -1) }));
  const flat = (x: typeof r) => x.sequences.map((s) => Array.from(s.ids));
  assert.deepEqual(flat(r), flat(plain));
  assert.equal(r.drift.length, 0);
});

test("incremental, counts-only and full Deltatoks give the same rollout", async () => {
  const sampled = withSample({ sampled_ids: hiIds, sampled_logprobs: hiIds.map(() => -1) });
  const modes = await Promise.all([
    Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", storeIds: false }),
    Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", mode: "full" }),
  ]);
  const want = JSON.stringify(dt.tokenizeRollout(sampled), (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Uint32Array) : v));
  for (const m of modes) assert.equal(JSON.stringify(m.tokenizeRollout(sampled), (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Uint32Array) : v)), want);
});

test("add_generation_prompt is not a rollout option", () => {
  assert.throws(() => dt.tokenizeRollout(base, { add_generation_prompt: true } as never), { code: "DT_INVALID_OPTION" });
});

test("continue_final_message is not a rollout option (completions are whole messages)", () => {
  for (const v of [true, false, "content"]) {
    assert.throws(() => dt.tokenizeRollout(base, { continue_final_message: v } as never), (e: { code?: string; path?: string }) => e.code === "DT_INVALID_OPTION");
  }
});
