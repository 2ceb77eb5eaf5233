/**
 * The message counter on CJK answers: its text counter holds the render up to a cut at or after
 * the first difference and the shared suffix (api/stream.ts), so a growing answer is an append
 * to it (an open run over unpunctuated CJK stays open) and only the end-of-turn suffix is encoded
 * besides.
 *
 * - qwen3 and gemma3: after every delta (content and reasoning_content, CJK / kana / Hangul /
 *   ASCII / spaces / punctuation / special tokens' text, random sizes) the count equals
 *   countMessage of the message so far (pinned seeds);
 * - qwen3: 12,000 unpunctuated ideographs as 2-character deltas cost under 2.5× the characters
 *   encoded (the text counter's and the suffixes') and the open run's steps of 6,000, the
 *   answer appended, not rewound (counted, not timed).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Deltatok } from "../src/api/deltatok.js";
import { modelsDir } from "./helpers/tokenizers.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { KANA, ideographs } from "./helpers/cjk-text.js";

const SEED = 20261202;
const IDEOGRAPHS = "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生会自能码";
const HANGUL = "가나다라마바사아자차카타파하한국어의는을를이가에서고";
/** Not run characters; among them special tokens' text, which the raw scan matches inside the answer (split across deltas). */
const OTHERS = [" ", "。", "、", "\n", "\n\n", "a", "Hello", "<", "1", "😀", " 😀", "<|im_end|>", "<end_of_turn>", "<|im_start|>", "<start_of_turn>", "<eos>"];

const runOf = (alphabet: string) => fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 60 }).map((a) => a.join(""));
const answer = fc
  .array(fc.oneof({ arbitrary: runOf(IDEOGRAPHS), weight: 4 }, { arbitrary: runOf(KANA + IDEOGRAPHS), weight: 2 }, { arbitrary: runOf(HANGUL), weight: 2 }, { arbitrary: fc.constantFrom(...OTHERS), weight: 3 }), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.join(""));
/** A delta: a field and how many units of it. */
const deltas = fc.array(fc.tuple(fc.constantFrom("content", "content", "content", "reasoning_content"), fc.integer({ min: 1, max: 7 })), { minLength: 1, maxLength: 120 });

for (const name of ["qwen3", "gemma3"] as const) {
  test(`${name}: message counter on CJK answers: the count after every delta equals countMessage of the message so far`, async () => {
    const dt = await Deltatok.create({ tokenizer: modelsDir(name), renderer: TEST_RENDERER });
    let plain = 0;
    fc.assert(
      fc.property(answer, answer, deltas, (content, reasoning, steps) => {
        const m = dt.messageCounter();
        const at = { content: 0, reasoning_content: 0 };
        const src = { content, reasoning_content: reasoning };
        const so = { content: "", reasoning_content: "" };
        for (const [field, n] of steps) {
          const piece = src[field].slice(at[field], at[field] + n);
          if (piece === "") continue;
          at[field] += piece.length;
          so[field] += piece;
          const got = m.append({ [field]: piece });
          // a trailing high surrogate waits for its low half
          const held = (s: string): string => (/[\ud800-\udbff]$/.test(s) ? s.slice(0, -1) : s);
          const msg = { role: "assistant", content: held(so.content), ...(so.reasoning_content !== "" ? { reasoning_content: held(so.reasoning_content) } : {}) };
          assert.equal(got, dt.countMessage(msg), `${name} after ${JSON.stringify(msg)}`);
        }
        plain += m.stats().plainAppends;
      }),
      { seed: SEED, numRuns: 20 },
    );
    // a delta to the other field, or one the template does not render, is no plain append
    assert.ok(plain > 40, `${name}: ${plain} deltas taken as plain appends`);
  });
}

test("qwen3: unpunctuated ideographs as 2-character deltas: work grows linearly (12k under 2.5× of 6k), the answer appended, counts exact", async () => {
  const dt = await Deltatok.create({ tokenizer: "qwen3", renderer: TEST_RENDERER });
  const work = (n: number): { chars: number; steps: number } => {
    const text = ideographs(n, SEED, IDEOGRAPHS);
    const m = dt.messageCounter();
    for (let i = 0; i < text.length; i += 2) {
      const got = m.append({ content: text.slice(i, i + 2) });
      if (i % 1000 === 0) assert.equal(got, dt.countMessage({ role: "assistant", content: text.slice(0, i + 2) }));
    }
    assert.equal(m.finish(), dt.countMessage({ role: "assistant", content: text }));
    const s = m.stats();
    assert.ok(s.rewinds <= 1, `${s.rewinds} rewinds`);
    assert.ok(s.plainAppends >= n / 2 - 2, `${s.plainAppends} plain appends`);
    assert.ok(s.runAppends >= n / 2 - 20, `${s.runAppends} appends by the open run`);
    return { chars: s.charsEncoded + s.suffixChars, steps: s.runSteps };
  };
  const a = work(6000);
  const b = work(12000);
  assert.ok(b.chars < 2.5 * a.chars, `characters encoded ${b.chars} for 12k, ${a.chars} for 6k`);
  assert.ok(b.steps < 2.5 * a.steps, `steps ${b.steps} for 12k, ${a.steps} for 6k`);
  // each delta rewound to the content's start and re-encoded it: 9 M characters for 6k
  assert.ok(a.chars < 50_000, `characters encoded ${a.chars} for 6k`);
});
