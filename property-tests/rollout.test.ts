/**
 * RL rollouts on generated agentic conversations, for templates that rewrite history (Qwen3,
 * gpt-oss) and ones that do not (Llama 3.1, DeepSeek-V3). Each conversation is rolled out
 * three ways: without sampled ids (canonical completions), with sampled ids equal to the
 * canonical ones (and random logprobs), and with some completions perturbed into a
 * non-canonical tokenization of the same text (a token replaced by two that decode to the same
 * string). Checked against full renders + whole encodes, independently of the rollout code:
 * (a) every turn's ids[:prompt_tokens] are the full-render ids of request k;
 * (b) every sampled id appears exactly once, under mask 1, with its logprob;
 * (c) a sequence ends exactly where the sequence so far is not a token prefix of the next
 *     prompt, and the split says where they first differ;
 * (d) drift is reported for exactly the perturbed messages;
 * and the cache-backed rollout equals the reference (full mode) rollout exactly.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Deltatok } from "../src/api/deltatok.js";
import type { Rollout } from "../src/api/rollout.js";
import { toDeltatokError } from "../src/errors.js";
import { conversation, type ConversationShape } from "./arbitraries/conversation.js";
import { specialTexts, type TokenizerName } from "../test/helpers/tokenizers.js";
import { repoPath } from "../test/helpers/paths.js";

const RUNS = Number(process.env.DELTATOK_PROPERTY_RUNS ?? 25);

const CASES: Array<{ name: string; tokenizer: TokenizerName; template?: string; shape: ConversationShape }> = [
  { name: "qwen3", tokenizer: "qwen3", shape: { plain: false, nullContent: false, singleToolCall: false } },
  { name: "llama3.1", tokenizer: "llama3_1", template: "llama3.1", shape: { plain: false, nullContent: false, singleToolCall: true } },
  { name: "deepseek-v3", tokenizer: "deepseek_v3", shape: { plain: false, stringArguments: true, nullContent: true, singleToolCall: false } },
  { name: "gpt-oss", tokenizer: "gptoss", template: "gpt-oss", shape: { plain: false, nullContent: false, singleToolCall: true } },
];

type Msg = Record<string, unknown>;

function plain(r: Rollout): unknown {
  return JSON.parse(JSON.stringify(r, (_k, v: unknown) => (v instanceof Uint32Array ? Array.from(v) : v instanceof Float64Array ? Array.from(v, (x) => (Number.isNaN(x) ? null : x)) : v)));
}

function isPrefix(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length > b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function firstDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

/** A non-canonical spelling of `ids`: the first token (from `start`) that splits into two vocabulary tokens, split. */
function perturb(dt: Deltatok, ids: Uint32Array, start: number): Uint32Array | null {
  const tok = dt.tokenizer.tokenizer;
  const special = new Set(dt.tokenizer.tokenizerJson.added_tokens.map((t) => t.id));
  for (let n = 0; n < ids.length; n++) {
    const i = (start + n) % ids.length;
    const id = ids[i] as number;
    if (special.has(id)) continue;
    const s = tok.idToToken(id);
    if (s === undefined || s.length < 2) continue;
    for (let j = 1; j < s.length; j++) {
      const a = tok.tokenToId(s.slice(0, j));
      const b = tok.tokenToId(s.slice(j));
      if (a === undefined || b === undefined || special.has(a) || special.has(b)) continue;
      const out = new Uint32Array(ids.length + 1);
      out.set(ids.subarray(0, i));
      out[i] = a;
      out[i + 1] = b;
      out.set(ids.subarray(i + 1), i + 2);
      if (tok.decode(Array.from(out)) !== tok.decode(Array.from(ids))) continue;
      return out;
    }
  }
  return null;
}

/** The properties (a)–(d) of one rollout, from full-mode prompts. */
function checkRollout(full: Deltatok, messages: Msg[], tools: unknown, r: Rollout, sampled: Map<number, { ids: Uint32Array; logprobs: number[] }>, perturbed: Set<number>): void {
  const turns = r.sequences.flatMap((s, si) => s.turns.map((t) => ({ t, si, s })));
  const assistant = messages.map((m, i) => (m.role === "assistant" ? i : -1)).filter((i) => i >= 0);
  assert.deepEqual(
    turns.map((x) => x.t.index),
    assistant,
    "one turn per assistant message, in order",
  );
  const splitAt = new Map(r.splits.map((s) => [s.index, s]));
  for (let j = 0; j < turns.length; j++) {
    const { t, si, s } = turns[j] as (typeof turns)[number];
    const want = full.encodePrompt(messages.slice(0, t.index), { tools: tools as unknown[] | null });
    // (a)
    assert.deepEqual(Array.from(s.ids.subarray(0, t.promptTokens)), Array.from(want), `prompt ids of turn ${t.index}`);
    // (b)
    const [c0, c1] = t.completion;
    const sample = sampled.get(t.index);
    assert.equal(t.sampled, sample !== undefined);
    if (sample !== undefined) {
      assert.deepEqual(Array.from(s.ids.subarray(c0, c1)), Array.from(sample.ids), `sampled ids of turn ${t.index} in place`);
      assert.ok(s.logprobs !== null);
      for (let i = 0; i < sample.logprobs.length; i++) assert.equal(s.logprobs[c0 + i], sample.logprobs[i] as number);
    }
    if (j > 0) {
      // (c): the sequence so far (through the previous completion) against this prompt
      const prev = turns[j - 1] as (typeof turns)[number];
      const sofar = prev.s.ids.subarray(0, prev.t.completion[1]);
      if (isPrefix(sofar, want)) {
        assert.equal(si, prev.si, `turn ${t.index} extends the sequence`);
        assert.equal(splitAt.has(t.index), false);
      } else {
        assert.equal(si, prev.si + 1, `turn ${t.index} starts a new sequence`);
        assert.equal(t.promptTokens === c0, true);
        const sp = splitAt.get(t.index);
        assert.ok(sp !== undefined, `split recorded for turn ${t.index}`);
        assert.equal(sp.at, firstDiff(sofar, want));
      }
    }
  }
  assert.equal(r.splits.length, r.sequences.length - 1);
  // mask 1 exactly over the completions, each sampled id exactly once
  for (const s of r.sequences) {
    const mask = new Uint8Array(s.ids.length);
    for (const [a, b] of s.mask) for (let i = a; i < b; i++) mask[i] = (mask[i] as number) + 1;
    const want = new Uint8Array(s.ids.length);
    for (const t of s.turns) for (let i = t.completion[0]; i < t.completion[1]; i++) want[i] = (want[i] as number) + 1;
    assert.deepEqual(Array.from(mask), Array.from(want));
    assert.ok(mask.every((x) => x <= 1));
    if (s.logprobs !== null) for (let i = 0; i < s.ids.length; i++) if (want[i] === 0) assert.ok(Number.isNaN(s.logprobs[i]));
  }
  // (d)
  assert.deepEqual(
    r.drift.map((d) => d.index).sort((a, b) => a - b),
    [...perturbed].sort((a, b) => a - b),
    "drift exactly for the perturbed completions",
  );
}

for (const c of CASES) {
  test(`${c.name}: rollouts keep prompts exact, sampled ids in place, split only where the prefix breaks, drift only where perturbed`, async () => {
    const opts = { tokenizer: c.tokenizer, date: "2026-11-30", ...(c.template ? { chatTemplateFile: repoPath("test/fixtures/template/golden/templates", `${c.template}.jinja`) } : {}) };
    const dt = await Deltatok.create(opts);
    const full = await Deltatok.create({ ...opts, mode: "full" });
    let checked = 0;
    let splits = 0;
    let drifted = 0;
    fc.assert(
      fc.property(conversation(c.shape, specialTexts(c.tokenizer), 3), fc.integer({ min: 0, max: 1 << 30 }), (messages, salt) => {
        let canonical: Rollout;
        try {
          canonical = dt.tokenizeRollout(messages);
        } catch (e) {
          // a conversation the template rejects fails the same way in full mode
          const code = toDeltatokError(e).code;
          assert.throws(() => full.tokenizeRollout(messages), { code });
          return;
        }
        checked++;
        assert.deepEqual(plain(canonical), plain(full.tokenizeRollout(messages)), "cache-backed rollout equals the reference");
        checkRollout(full, messages, null, canonical, new Map(), new Set());
        splits += canonical.splits.length;
        // sampled ids: the canonical completions, a third of them perturbed
        const sampled = new Map<number, { ids: Uint32Array; logprobs: number[] }>();
        const perturbed = new Set<number>();
        const withSamples = messages.map((m) => ({ ...m }));
        for (const s of canonical.sequences) {
          for (const t of s.turns) {
            let ids: Uint32Array = s.ids.slice(t.completion[0], t.completion[1]);
            if ((salt + t.index) % 3 === 0) {
              const p = perturb(dt, ids, salt % Math.max(1, ids.length));
              if (p !== null) {
                ids = p;
                perturbed.add(t.index);
              }
            }
            const logprobs = Array.from(ids, (_x, i) => -((salt + i * 7919) % 1000) / 97);
            sampled.set(t.index, { ids, logprobs });
            Object.assign(withSamples[t.index] as Msg, { sampled_ids: Array.from(ids), sampled_logprobs: logprobs });
          }
        }
        // on an empty cache, so the rollout's own turns are what each prompt builds on
        dt.clearCache();
        const r = dt.tokenizeRollout(withSamples);
        assert.deepEqual(plain(r), plain(full.tokenizeRollout(withSamples)), "cache-backed rollout equals the reference (sampled)");
        checkRollout(full, messages, null, r, sampled, perturbed);
        drifted += r.drift.length;
      }),
      { numRuns: RUNS, seed: 20261201 },
    );
    assert.ok(checked > RUNS / 3, `only ${checked} conversations rendered`);
    if (c.name === "qwen3" || c.name === "gpt-oss") assert.ok(splits > 0, "the history rewrite was exercised");
    assert.ok(drifted > 0, "a perturbation was exercised");
  });
}
