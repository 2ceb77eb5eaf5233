/**
 * Each pipeline component of deltatok's encoder answers as the Rust tokenizers' does, compared
 * piece by piece (pre-tokenizers) and string by string (normalizers) with the binding on the same
 * tokenizer.json component: Split in every behavior, inverted or not, ByteLevel with and without
 * its pattern and prefix space, Metaspace in every prepend scheme, Digits, Whitespace,
 * WhitespaceSplit, Sequence; NFC/NFD/NFKC/NFKD, Lowercase, Strip, Prepend, Replace, Sequence.
 * A component the encoder does not implement is named, not guessed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { spellBytes } from "../src/encoder/model/byte-alphabet.js";
import { buildNormalizer } from "../src/encoder/normalize/normalizers.js";
import { buildPreTokenizer } from "../src/encoder/pretokenize/stages.js";
import { type PatternJson, rustNormalizer, rustPreTokenizer } from "./helpers/rust.js";
import { classText } from "./helpers/texts.js";

const TEXTS = [
  "", "a", "abab", "baab", "a b  c\n\nd", " ,a,,b, ", "x\u0085y\ufeffz", "Hello, world! It's 2026.", "¼a² b", "aaa", "\u{10d4a}b",
  "  leading and trailing  ", "▁already▁marked", "tabs\tand\u3000ideographic spaces", "١٢٣ digits ٣३𝟘 and 12345",
  ...fc.sample(classText(10), { numRuns: 60, seed: 7 }),
];

const utf8 = new TextEncoder();

/** deltatok's pieces of `text` through a pre-tokenizer component (byte-level pieces spelled as Rust prints them). */
function ourPieces(component: unknown): (text: string) => string[] {
  const b = buildPreTokenizer(component, () => null);
  if (!b.ok) throw new Error(`not built: ${b.unsupported}`);
  return (text) => {
    const out: string[] = [];
    const sink = b.chain((t, s, e) => out.push(t.slice(s, e)));
    if (text.length > 0) sink(text, 0, text.length, true);
    return b.byteLevel ? out.map((p) => spellBytes(utf8.encode(p))) : out;
  };
}

function samePieces(component: unknown, texts: readonly string[] = TEXTS): void {
  const ours = ourPieces(component);
  const rust = rustPreTokenizer(component);
  for (const text of texts) {
    if (text === "") continue; // the encoder never pre-tokenizes an empty section
    assert.deepEqual(ours(text), rust(text), `${JSON.stringify(component)} on ${JSON.stringify(text)}`);
  }
}

test("Split: every behavior, inverted or not, cuts as Rust cuts", () => {
  const patterns: PatternJson[] = [
    { Regex: "\\s+" }, { Regex: "a*" }, { Regex: "(?=b)" }, { Regex: "\\p{P}" }, { Regex: "x*" }, { Regex: "" }, { String: "," }, { String: "" },
    { String: "aa" }, { Regex: "(?i:'s|'ll)" },
  ];
  for (const pattern of patterns) {
    for (const behavior of ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]) {
      for (const invert of [false, true]) samePieces({ type: "Split", pattern, behavior, invert });
    }
  }
});

test("ByteLevel, Metaspace, Digits, Whitespace, WhitespaceSplit and Sequences cut as Rust cuts", () => {
  const components: unknown[] = [
    { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    { type: "ByteLevel", add_prefix_space: false, trim_offsets: true },
    { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: false },
    { type: "Whitespace" },
    { type: "WhitespaceSplit" },
    { type: "Digits", individual_digits: true },
    { type: "Digits", individual_digits: false },
    { type: "Sequence", pretokenizers: [{ type: "WhitespaceSplit" }, { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: true }] },
    { type: "Sequence", pretokenizers: [{ type: "Digits", individual_digits: true }, { type: "Split", pattern: { Regex: "\\s+" }, behavior: "MergedWithNext", invert: false }] },
  ];
  for (const scheme of ["always", "first", "never"]) {
    for (const split of [true, false]) components.push({ type: "Metaspace", replacement: "▁", prepend_scheme: scheme, split });
  }
  components.push({ type: "Metaspace", replacement: "▁", add_prefix_space: true });
  for (const c of components) samePieces(c);
});

test("normalizers answer as Rust normalizes", () => {
  const components: unknown[] = [
    { type: "NFC" }, { type: "NFD" }, { type: "NFKC" }, { type: "NFKD" }, { type: "Lowercase" },
    { type: "Strip", strip_left: true, strip_right: true }, { type: "Strip", strip_left: false, strip_right: true },
    { type: "Prepend", prepend: "▁" },
    { type: "Sequence", normalizers: [{ type: "Prepend", prepend: "▁" }, { type: "Replace", pattern: { String: " " }, content: "▁" }] },
    { type: "Sequence", normalizers: [] },
    { type: "Sequence", normalizers: [{ type: "NFKC" }, { type: "Lowercase" }] },
  ];
  // U+10795, U+0897, U+1AC1: characters the crate's (older) Unicode tables do not know
  const texts = [...TEXTS, "ﬁ Ω Å ΣΑΣ İstanbul e\u0301", "\u0085 a \ufeff", "ǅ ß ẞ", "a\u{10795}b \u0897\u0301e\u0897 \u1ac1\u0316a\u0316\u1ac1 ﬁ\u{10795}ﬁ"];
  for (const c of components) {
    const b = buildNormalizer(c);
    assert.ok(b.ok, JSON.stringify(c));
    const ours = b.normalize ?? ((s: string) => s);
    const rust = rustNormalizer(c);
    for (const t of texts) if (t !== "") assert.equal(ours(t), rust(t), `${JSON.stringify(c)} on ${JSON.stringify(t)}`);
  }
});

test("Replace: matches replaced as Rust replaces them (empty matches, literal content)", () => {
  const patterns: PatternJson[] = [{ Regex: "a*" }, { Regex: "\\s+" }, { Regex: "(?=b)" }, { Regex: "x*" }, { String: "" }, { String: "aa" }, { Regex: "\\p{Zs}" }, { Regex: "(a)" }];
  for (const pattern of patterns) {
    for (const content of ["-", "$&", "$1$$", "", "▁"]) {
      const c = { type: "Replace", pattern, content };
      const b = buildNormalizer(c);
      assert.ok(b.ok);
      const rust = rustNormalizer(c);
      for (const t of TEXTS) if (t !== "") assert.equal((b.normalize as (s: string) => string)(t), rust(t), `${JSON.stringify(c)} on ${JSON.stringify(t)}`);
    }
  }
});

test("a component the encoder does not implement is named", () => {
  const pre = buildPreTokenizer({ type: "Sequence", pretokenizers: [{ type: "Punctuation", behavior: "Isolated" }] }, () => null);
  assert.equal(pre.ok, false);
  assert.match((pre as { unsupported: string }).unsupported, /pre_tokenizer\.pretokenizers\[0\] Punctuation/);
  const norm = buildNormalizer({ type: "BertNormalizer", clean_text: true });
  assert.equal(norm.ok, false);
  assert.match((norm as { unsupported: string }).unsupported, /BertNormalizer/);
  const untranslated = buildPreTokenizer({ type: "Split", pattern: { Regex: "(a)\\1" }, behavior: "Isolated", invert: false }, () => null);
  assert.equal(untranslated.ok, false);
  assert.match((untranslated as { unsupported: string }).unsupported, /pattern not translated/);
});
