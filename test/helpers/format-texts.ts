/**
 * The texts the tokenizer-format fixtures are computed on (scripts/make-format-fixtures.py gets
 * them from here, so the Python references and the tests see the same strings):
 * - `corpusTexts()`: every distinct message text of the bundled corpora (contents, reasoning,
 *   tool-call arguments) in file order, plus each conversation's texts joined (long inputs);
 * - `formatHostileTexts()`: fast-check hostile text with a fixed seed, with the spellings these
 *   formats treat specially (`<s>`, `[INST]`, `<0x41>`, `▁`, reserved names, full-width forms);
 * - `longTexts()`: texts longer than Kimi's cut sizes (runs over 25,000 characters, texts over
 *   400,000), built from recipes so the fixtures need not store them.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";

import { repoPath } from "./paths.js";
import { classText, hostileText } from "./texts.js";

export const CORPUS_FILES = ["data/tau-bench-airline-20.jsonl", "data/swebench-agentic-coding-scikit-learn-26323.jsonl"];

/** Seed and count of the hostile texts in the fixtures. */
export const HOSTILE_SEED = 25_2026;
export const HOSTILE_COUNT = 400;

/** Spellings the formats treat specially, mixed into the hostile texts. */
export const FORMAT_SPELLINGS: readonly string[] = [
  "<s>", "</s>", "<unk>", "<pad>", "[INST]", "[/INST]", "[TOOL_CALLS]", "<0x41>", "<0xE2>", "\u2581", "\u2581\u2581x", " \u2581 ",
  "[BOS]", "[EOS]", "<|im_end|>", "<|im_user|>", "<|reserved_token_163600|>", "<|endoftext|>", "[gMASK]", "<sop>",
  "<tool_call>", "</tool_call>", "<|im_start|>", "ＡＢＣ", "１２３", "ｶﾀｶﾅ", "㍿", "ﬀ", "\u00bd", "\u2460", "x\u00a0y",
  "  lead", "trail  ", "a  b   c", "\t\ttab", "\u3000\u3000", "\u200d", "\u2028", "\ud83d\ude00\ud83d\ude00",
];

function messageTexts(message: Record<string, unknown>): string[] {
  const out: string[] = [];
  const content = message.content;
  if (typeof content === "string") out.push(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      const text = (part as { text?: unknown } | null)?.text;
      if (typeof text === "string") out.push(text);
    }
  }
  if (typeof message.reasoning_content === "string") out.push(message.reasoning_content);
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      const args = (call as { function?: { arguments?: unknown } } | null)?.function?.arguments;
      if (typeof args === "string") out.push(args);
      else if (args !== undefined) out.push(JSON.stringify(args));
    }
  }
  return out;
}

/** Distinct non-empty message texts of the corpora, then one joined text per conversation. */
export function corpusTexts(): string[] {
  const seen = new Set<string>();
  const texts: string[] = [];
  const joined: string[] = [];
  for (const file of CORPUS_FILES) {
    for (const line of readFileSync(repoPath(file), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const record = JSON.parse(line) as { messages: Array<Record<string, unknown>> };
      const conversation: string[] = [];
      for (const message of record.messages) {
        for (const text of messageTexts(message)) {
          conversation.push(text);
          if (text !== "" && !seen.has(text)) {
            seen.add(text);
            texts.push(text);
          }
        }
      }
      joined.push(conversation.join("\n"));
    }
  }
  return [...texts, ...joined];
}

function wellFormed(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

/** The fixtures' hostile texts: fixed seed, well-formed UTF-16 only (Python cannot pass lone surrogates). */
export function formatHostileTexts(seed = HOSTILE_SEED, count = HOSTILE_COUNT): string[] {
  const arbitrary = fc.oneof(hostileText(FORMAT_SPELLINGS, 24), classText(16));
  return fc.sample(arbitrary, { seed, numRuns: count * 2 }).filter(wellFormed).slice(0, count);
}

/** A long text as a recipe: `parts` repeated `times`, each part a string repeated `count` times. */
export interface LongTextRecipe {
  readonly name: string;
  readonly parts: ReadonlyArray<readonly [string, number]>;
  readonly times: number;
}

export const LONG_TEXT_RECIPES: readonly LongTextRecipe[] = [
  { name: "letters over one run", parts: [["a", 30_000]], times: 1 },
  { name: "spaces over one run", parts: [[" ", 30_000], ["x", 1]], times: 1 },
  { name: "words over one slice", parts: [["word ", 90_000]], times: 1 },
  { name: "han over one run", parts: [["中", 26_000], [" end", 1]], times: 1 },
  { name: "newlines then letters", parts: [["\n", 25_001], ["b", 25_001]], times: 1 },
  { name: "astral over one run", parts: [["😀", 26_000]], times: 1 },
  { name: "runs just under the limit", parts: [["x", 24_999], [" ", 1]], times: 20 },
  { name: "special across the slice cut", parts: [["ab", 199_998], ["c", 1], ["<|im_end|>", 1], [" tail", 1]], times: 1 },
  { name: "special across a run cut", parts: [["q", 24_998], ["<|im_end|>", 1], ["z", 3]], times: 1 },
  { name: "tabs and nbsp", parts: [["\t", 12_000], ["\u00a0", 14_000], ["\u3000", 1], ["y", 2]], times: 1 },
];

export function expandRecipe(recipe: LongTextRecipe): string {
  const one = recipe.parts.map(([s, n]) => s.repeat(n)).join("");
  return one.repeat(recipe.times);
}

/** The long texts, by recipe. */
export function longTexts(): string[] {
  return LONG_TEXT_RECIPES.map(expandRecipe);
}
