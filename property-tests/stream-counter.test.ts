/**
 * Streaming counters are exact: on every bundled and dev-installed tokenizer, random texts cut
 * into random chunks (surrogate pairs split included) give, after every append, countText of the
 * text so far; streamed assistant messages (content, reasoning, tool-call deltas) give
 * countMessage of the message so far, or fail with its error code. Seeded: the same cases on
 * every run; fast-check prints the seed and the shrunk counterexample on failure.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { Deltatok } from "../src/api/deltatok.js";
import { toDeltatokError } from "../src/errors.js";
import { EXTRA_TOKENIZER_NAMES, TOKENIZER_NAMES, modelsDir, type AnyTokenizerName } from "../test/helpers/tokenizers.js";
import { repoPath } from "../test/helpers/paths.js";
import { TEST_RENDERER } from "../test/helpers/renderer.js";

const RUNS = Number(process.env.DELTATOK_PROPERTY_RUNS ?? 25);
const SEED = 1717;

/** Assistant texts of the bundled corpus, cut to short snippets. */
const SNIPPETS: string[] = (() => {
  const out: string[] = [];
  for (const line of readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n")) {
    if (line.trim() === "") continue;
    for (const m of (JSON.parse(line) as { messages: Array<{ content?: unknown }> }).messages) {
      if (typeof m.content === "string" && m.content.length > 0) out.push(m.content.slice(0, 160));
    }
    if (out.length > 200) break;
  }
  return out;
})();

const PIECES = [
  "hello", "world", " the", "Don't", "it's", "I'LL", "naïve", "café", "e\u0301", "Größe", "東京都", "你好，世界。", "中文", "한국어", "العربية", "עברית",
  "😀", "👍🏽", "👩‍💻", "𝒳", " ", "  ", "    ", "\t", "\n", "\n\n", " \n", "\r\n", "\u00a0", "\u2581", "\u2581\u2581", "\ufeff", "\u200b",
  "0", "42", "2026-11-30", "1234567", "3.14159", "x = [1, 2.5e-3];", "'s", "'", "\"", "{\"a\": 1}", "<", ">", "</", "=>", "...", "---", "```", "**",
];

/** Added-token texts of a tokenizer (tokenizer.json): the first and last 30, where most specials are. */
function addedTexts(name: AnyTokenizerName): string[] {
  const json = JSON.parse(readFileSync(join(modelsDir(name), "tokenizer.json"), "utf8")) as { added_tokens: Array<{ content: string }> };
  const all = json.added_tokens.map((t) => t.content);
  return all.length <= 60 ? all : [...all.slice(0, 30), ...all.slice(-30)];
}

function textArb(extra: readonly string[]): fc.Arbitrary<string> {
  const piece = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...PIECES) },
    { weight: 2, arbitrary: fc.constantFrom(...SNIPPETS) },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }).filter((s) => s.isWellFormed()) },
    { weight: 2, arbitrary: extra.length > 0 ? fc.constantFrom(...extra) : fc.constant("") },
  );
  return fc.array(fc.tuple(piece, fc.constantFrom("", "", " ", "\n")), { maxLength: 14 }).map((ps) => ps.map(([p, sep]) => p + sep).join(""));
}

/** Cut points as chunk lengths (1..24 units, so surrogate pairs and added tokens are split too). */
const cutsArb = fc.array(fc.integer({ min: 1, max: 24 }), { minLength: 1, maxLength: 40 });

function chunksOf(text: string, lengths: readonly number[]): string[] {
  const out: string[] = [];
  let i = 0;
  for (let k = 0; i < text.length; k++) {
    const n = lengths[k % lengths.length] as number;
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

const withoutPendingHigh = (s: string): string => (/[\ud800-\udbff]$/.test(s) ? s.slice(0, -1) : s);

async function open(name: AnyTokenizerName): Promise<Deltatok> {
  const bundled = (TOKENIZER_NAMES as readonly string[]).includes(name);
  return Deltatok.create({ tokenizer: bundled ? name : modelsDir(name), date: "2026-11-30", renderer: TEST_RENDERER });
}

for (const name of [...TOKENIZER_NAMES, ...EXTRA_TOKENIZER_NAMES]) {
  test(`${name}: textCounter.append equals countText of the text so far, for random texts and cuts`, async () => {
    const dt = await open(name);
    // both kinds of counter: the tokenizer's piece memo keeps counts and ids apart, and the
    // runs' texts share pieces, so most appends after the first runs are answered from it
    const counter = dt.textCounter({ ids: true });
    const countOnly = dt.textCounter();
    assert.notEqual(counter.stats().mode, "whole", `${name} has a proven cut rule`);
    fc.assert(
      fc.property(textArb(addedTexts(name)), cutsArb, (text, lengths) => {
        counter.reset();
        countOnly.reset();
        let sofar = "";
        for (const chunk of chunksOf(text, lengths)) {
          sofar += chunk;
          const got = counter.append(chunk);
          const want = withoutPendingHigh(sofar);
          assert.equal(got, dt.countText(want), `after ${JSON.stringify(want.slice(-30))}`);
          assert.equal(countOnly.append(chunk), got);
        }
        assert.equal(counter.finish(), dt.countText(text));
        assert.equal(countOnly.finish(), dt.countText(text));
        assert.deepEqual(Array.from(counter.ids()), Array.from(dt.encodeText(text)));
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
}

for (const name of [...TOKENIZER_NAMES, ...EXTRA_TOKENIZER_NAMES]) {
  test(`${name}: every added token next to words, spaces and newlines, streamed one unit at a time`, async () => {
    const dt = await open(name);
    const counter = dt.textCounter();
    for (const tok of addedTexts(name)) {
      const text = `a${tok} hello${tok}\nWorld ${tok}x ${tok}${tok}. 中${tok} end`;
      counter.reset();
      for (let i = 0; i < text.length; i++) {
        const got = counter.append(text[i] as string);
        assert.equal(got, dt.countText(withoutPendingHigh(text.slice(0, i + 1))), `${JSON.stringify(text.slice(0, i + 1))}`);
      }
    }
  });
}

for (const name of ["qwen3", "llama2"] as const) {
  test(`${name}: replaceFrom at any offset (near the end or far back, inside a surrogate pair) equals countText of the new text`, async () => {
    const dt = await open(name);
    const counter = dt.textCounter({ ids: true });
    // texts past the counter's retained tail (512 units): corpus snippets, then random text
    const longText = fc.tuple(fc.integer({ min: 0, max: 40 }), textArb([])).map(([k, t]) => SNIPPETS.slice(k, k + 8).join("\n") + t);
    fc.assert(
      fc.property(longText, cutsArb, fc.array(fc.tuple(fc.nat(), fc.boolean(), textArb([])), { minLength: 1, maxLength: 6 }), (text, lengths, edits) => {
        counter.reset();
        for (const chunk of chunksOf(text, lengths)) counter.append(chunk);
        let now = withoutPendingHigh(text);
        for (const [at, nearEnd, replacement] of edits) {
          const len = counter.length;
          // near the end: within the last 40 units (inside the tail); else anywhere
          const offset = nearEnd ? Math.max(0, len - (at % 41)) : at % (len + 1);
          const rep = replacement.replace(/^[\udc00-\udfff]/, "x");
          const got = counter.replaceFrom(offset, rep);
          // an offset inside a surrogate pair moves back to its start
          const from = offset > 0 && offset < now.length && /[\ud800-\udbff]/.test(now.charAt(offset - 1)) ? offset - 1 : offset;
          now = now.slice(0, from) + rep;
          assert.equal(counter.text, now);
          assert.equal(got, dt.countText(now), `replaceFrom(${offset}) of ${JSON.stringify(now.slice(-30))}`);
        }
        assert.deepEqual(Array.from(counter.ids()), Array.from(dt.encodeText(now)));
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
}

type Delta = Record<string, unknown>;

const fieldText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...PIECES) },
  { weight: 2, arbitrary: fc.constantFrom(...SNIPPETS).map((s) => s.slice(0, 40)) },
  { weight: 1, arbitrary: fc.constantFrom("<think>", "</think>", "\n</think>\n\n", "<tool_call>", " ") },
);
const deltaArb: fc.Arbitrary<Delta> = fc.oneof(
  { weight: 5, arbitrary: fieldText.map((t) => ({ content: t })) },
  { weight: 3, arbitrary: fieldText.map((t) => ({ reasoning_content: t })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 1 }), fc.constantFrom("", "get_user", "_details"), fc.constantFrom("", "{\"user_id\": ", "\"omar_1\"", "}", "{}", " 42"))
      .map(([index, name, args]) => ({ tool_calls: [{ index, id: `call_${index}`, function: { name, arguments: args } }] })),
  },
  { weight: 1, arbitrary: fc.constant({ role: "assistant", content: "" }) },
);

function code(f: () => number): number | string {
  try {
    return f();
  } catch (e) {
    return toDeltatokError(e).code;
  }
}

for (const name of ["qwen3", "llama3_1", "deepseek_v3", "gptoss"] as const) {
  test(`${name}: messageCounter.append equals countMessage of the message so far`, async () => {
    const dt = await open(name);
    fc.assert(
      fc.property(fc.array(deltaArb, { minLength: 1, maxLength: 12 }), fc.constantFrom(undefined, { parse_tool_arguments: false }), (deltas, opts) => {
        const counter = dt.messageCounter(opts);
        for (const d of deltas) {
          // what countMessage says of the message with this delta applied (computed before the append)
          const preview = mergedPreview(counter.message(), d);
          const want = preview === null ? "DT_INVALID_TOOL_CALLS" : code(() => dt.countMessage(preview, opts));
          const got = code(() => counter.append(d));
          assert.equal(got, want, `after ${JSON.stringify(d)}`);
        }
        const held = code(() => dt.countMessage(counter.message(), opts));
        if (typeof held === "number") assert.equal(counter.finish(), held);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
}

/** The message a delta makes of `m`, independently of the counter; null for a tool-call index past the next one. */
function mergedPreview(m: ReturnType<ReturnType<Deltatok["messageCounter"]>["message"]>, d: Delta): unknown {
  const out: Record<string, unknown> = { ...m };
  if (typeof d.content === "string") out.content = m.content + d.content;
  if (typeof d.reasoning_content === "string") out.reasoning_content = (m.reasoning_content ?? "") + d.reasoning_content;
  if (Array.isArray(d.tool_calls)) {
    const calls = (m.tool_calls ?? []).map((c) => ({ ...c, function: { ...c.function } }));
    for (const t of d.tool_calls as Array<{ index: number; id: string; function: { name: string; arguments: string } }>) {
      if (t.index > calls.length) return null;
      const c = calls[t.index] ?? { type: "function", function: { name: "", arguments: "" } };
      if (calls[t.index] === undefined) calls.push(c);
      c.id = t.id;
      c.function.name += t.function.name;
      c.function.arguments += t.function.arguments;
    }
    out.tool_calls = calls;
  }
  return out;
}
