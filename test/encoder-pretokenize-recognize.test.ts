/**
 * scannerFor recognizes exactly the tokenizer.json shapes it claims (README.md of
 * src/encoder/pretokenize) and answers null for anything else, so the regex path keeps every other
 * configuration; scannerForPattern knows its patterns per flavor; the pattern constants are the
 * bundled tokenizers' own strings.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { scannerFor, scannerForPattern } from "../src/encoder/pretokenize/index.js";
import * as P from "../src/encoder/pretokenize/patterns.js";
import { preTokenizerOf } from "./helpers/pretokenize.js";

type Json = Record<string, unknown>;
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;
const split = (Regex: string, behavior = "Isolated", invert = false): Json => ({ type: "Split", pattern: { Regex }, behavior, invert });
const byteLevel = (extra: Json = {}): Json => ({ type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false, ...extra });

test("the pattern constants are the bundled tokenizers' strings", () => {
  const regexes = (name: string): string[] =>
    ((preTokenizerOf(name) as { pretokenizers: Json[] }).pretokenizers ?? [])
      .filter((c) => c["type"] === "Split")
      .map((c) => (c["pattern"] as { Regex: string }).Regex);
  assert.deepEqual(regexes("llama3"), [P.CL100K_PATTERN]);
  assert.deepEqual(regexes("gpt35turbo"), [P.CL100K_PATTERN]);
  assert.deepEqual(regexes("qwen3"), [P.QWEN_PATTERN]);
  assert.deepEqual(regexes("gpt4o"), [P.O200K_PATTERN]);
  assert.deepEqual(regexes("gptoss"), [P.O200K_PATTERN]);
  assert.deepEqual(regexes("deepseek_v3"), [...P.DEEPSEEK_PATTERNS]);
});

test("the recognized shapes: Split (Isolated, or Removed inverted), ByteLevel with its regex, the Sequences", () => {
  const family = (c: unknown): string | null => scannerFor(c)?.family ?? null;
  assert.equal(family(split(P.CL100K_PATTERN)), "cl100k/oniguruma");
  assert.equal(family(split(P.CL100K_PATTERN, "Removed", true)), "cl100k/oniguruma");
  assert.equal(family(split(P.QWEN_PATTERN)), "qwen/oniguruma");
  assert.equal(family(split(P.O200K_PATTERN, "Removed", true)), "o200k/oniguruma");
  assert.equal(family(split(P.GPT2_PATTERN)), "gpt2/oniguruma");
  assert.equal(family({ type: "ByteLevel", add_prefix_space: false, trim_offsets: true }), "gpt2/oniguruma");
  assert.equal(family({ type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: true }), "gpt2/oniguruma");
  assert.equal(family({ type: "Sequence", pretokenizers: [split(P.O200K_PATTERN), byteLevel(), byteLevel()] }), "o200k/oniguruma");
  assert.equal(family({ type: "Sequence", pretokenizers: [{ type: "ByteLevel", add_prefix_space: false }] }), "gpt2/oniguruma");
  assert.equal(family({ type: "Sequence", pretokenizers: P.DEEPSEEK_PATTERNS.map((p) => split(p)) }), "deepseek-v3/oniguruma");
  // the same scanner object for the same family
  assert.equal(scannerFor(split(P.CL100K_PATTERN)), scannerFor(preTokenizerOf("llama3")));
});

test("anything else is null: other behaviors, extra keys, a prefix space, other patterns, other orders", () => {
  const refused: unknown[] = [
    null, "Split", [], {}, { type: "Whitespace" }, { type: "Metaspace", replacement: "▁" }, { type: "Digits", individual_digits: true },
    split(P.CL100K_PATTERN, "Isolated", true), split(P.CL100K_PATTERN, "Removed", false), split(P.CL100K_PATTERN, "MergedWithPrevious"),
    split(P.CL100K_PATTERN, "Contiguous"), split(P.CL100K_PATTERN + " "), split("\\s+"), { ...split(P.CL100K_PATTERN), extra: 1 },
    { type: "Split", pattern: { String: P.CL100K_PATTERN }, behavior: "Isolated", invert: false },
    { type: "Split", pattern: { Regex: P.CL100K_PATTERN, String: "x" }, behavior: "Isolated", invert: false },
    split(P.KIMI_PATTERN), split(P.TIKTOKEN_CL100K_PATTERN),
    { type: "ByteLevel", add_prefix_space: true, trim_offsets: true },
    { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
    { type: "ByteLevel", trim_offsets: true },
    { type: "Sequence", pretokenizers: [] },
    { type: "Sequence", pretokenizers: [byteLevel(), split(P.CL100K_PATTERN)] },
    { type: "Sequence", pretokenizers: [split(P.CL100K_PATTERN), byteLevel({ add_prefix_space: true })] },
    { type: "Sequence", pretokenizers: [split(P.CL100K_PATTERN), byteLevel({ use_regex: true })] },
    { type: "Sequence", pretokenizers: [split(P.CL100K_PATTERN), split(P.CL100K_PATTERN)] },
    { type: "Sequence", pretokenizers: [{ type: "Sequence", pretokenizers: [split(P.CL100K_PATTERN)] }] },
    { type: "Sequence", pretokenizers: [...P.DEEPSEEK_PATTERNS].reverse().map((p) => split(p)) },
    { type: "Sequence", pretokenizers: P.DEEPSEEK_PATTERNS.map((p, i) => split(p, i === 2 ? "Removed" : "Isolated", i === 2)) },
    { type: "Sequence", pretokenizers: [split(P.CL100K_PATTERN)], extra: true },
  ];
  for (const c of refused) assert.equal(scannerFor(c), null, JSON.stringify(c));
  const deepseek = clone(preTokenizerOf("deepseek_v3")) as { pretokenizers: Json[] };
  (deepseek.pretokenizers[1] as { pattern: { Regex: string } }).pattern.Regex = "[一-龥]+";
  assert.equal(scannerFor(deepseek), null);
});

test("scannerForPattern: tokenizer.json patterns in the Oniguruma flavor, tiktoken's in the regex crate's", () => {
  const family = (p: string, f: "oniguruma" | "rust-regex"): string | null => scannerForPattern(p, f)?.family ?? null;
  assert.equal(family(P.O200K_PATTERN, "oniguruma"), "o200k/oniguruma");
  assert.equal(family(P.O200K_PATTERN, "rust-regex"), "o200k/rust-regex");
  assert.equal(family(P.TIKTOKEN_CL100K_PATTERN, "rust-regex"), "cl100k-tiktoken/rust-regex");
  assert.equal(family(P.GLM4_PATTERN, "rust-regex"), "cl100k/rust-regex");
  assert.equal(family(P.TIKTOKEN_R50K_PATTERN, "rust-regex"), "gpt2/rust-regex");
  assert.equal(family(P.KIMI_PATTERN, "rust-regex"), "kimi/rust-regex");
  assert.equal(family(P.KIMI_PATTERN, "oniguruma"), null);
  assert.equal(family(P.TIKTOKEN_CL100K_PATTERN, "oniguruma"), null);
  assert.equal(family(P.QWEN_PATTERN, "rust-regex"), null);
  assert.equal(family("\\s+", "rust-regex"), null);
  assert.equal(scannerForPattern(P.O200K_PATTERN, "pcre" as never), null);
});
