/**
 * Installing Oniguruma's semantics into a built tokenizer (src/load/exact-patterns.ts): each
 * pattern-driven component answers as the Rust tokenizers' does (Split in every behavior, Replace,
 * ByteLevel, Whitespace, WhitespaceSplit), and the guards hold: a component whose pattern is not
 * translated, whose configuration is not recognized, or that fails a probe is left (or put back)
 * as the library built it, the report says so, and the loader warns.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { Tokenizer } from "@huggingface/tokenizers";
import { installExactPatterns } from "../src/load/exact-patterns.js";
import { clearTokenizerCache, loadTokenizer } from "../src/load/index.js";
import { type PatternJson, rustNormalizer, rustPreTokenizer, rustReplace, rustSplit } from "./helpers/rust.js";
import { classText } from "./helpers/texts.js";

type Json = Record<string, unknown>;

function tokenizerJson(normalizer: unknown, preTokenizer: unknown): Json {
  return {
    version: "1.0", truncation: null, padding: null, added_tokens: [], normalizer, pre_tokenizer: preTokenizer,
    post_processor: null, decoder: null, model: { type: "WordLevel", vocab: { "[UNK]": 0, a: 1 }, unk_token: "[UNK]" },
  };
}

function build(json: Json): { tok: Tokenizer; pre: (s: string) => string[]; norm: (s: string) => string } {
  const tok = new Tokenizer(json as never, { unk_token: "[UNK]" });
  const t = tok as unknown as { pre_tokenizer: (s: string) => string[]; normalizer: (s: string) => string };
  return { tok, pre: (s) => t.pre_tokenizer(s), norm: (s) => t.normalizer(s) };
}

const TEXTS = [
  "", "a", "abab", "baab", "a b  c\n\nd", " ,a,,b, ", "x\u0085y\ufeffz", "Hello, world! It's 2026.", "¼a² b", "aaa", "\u{10d4a}b",
  ...fc.sample(classText(10), { numRuns: 60, seed: 7 }),
];

test("Split: every behavior, inverted or not, cuts as Rust cuts", () => {
  const patterns: PatternJson[] = [
    { Regex: "\\s+" }, { Regex: "a*" }, { Regex: "(?=b)" }, { Regex: "\\p{P}" }, { Regex: "x*" }, { Regex: "" }, { String: "," }, { String: "" },
    { String: "aa" }, { Regex: "(?i:'s|'ll)" },
  ];
  for (const pattern of patterns) {
    for (const behavior of ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]) {
      for (const invert of [false, true]) {
        const json = tokenizerJson(null, { type: "Split", pattern, behavior, invert });
        const { tok, pre } = build(json);
        const report = installExactPatterns(tok, json as never);
        assert.equal(report.exact, true, report.notes.join("; "));
        const rust = rustSplit(pattern, behavior, invert);
        for (const text of TEXTS) {
          assert.deepEqual(pre(text), rust(text), `${JSON.stringify(pattern)} ${behavior} invert=${invert} on ${JSON.stringify(text)}`);
        }
      }
    }
  }
});

test("Replace: matches replaced as Rust replaces them (empty matches, literal content)", () => {
  const patterns: PatternJson[] = [{ Regex: "a*" }, { Regex: "\\s+" }, { Regex: "(?=b)" }, { Regex: "x*" }, { String: "" }, { String: "aa" }, { Regex: "\\p{Zs}" }, { Regex: "(a)" }];
  for (const pattern of patterns) {
    for (const content of ["-", "$&", "$1$$", "", "▁"]) {
      const json = tokenizerJson({ type: "Sequence", normalizers: [{ type: "Replace", pattern, content }] }, null);
      const { tok, norm } = build(json);
      assert.equal(installExactPatterns(tok, json as never).exact, true);
      const rust = rustReplace(pattern, content);
      for (const text of TEXTS) assert.equal(norm(text), rust(text), `${JSON.stringify(pattern)} → ${JSON.stringify(content)} on ${JSON.stringify(text)}`);
    }
  }
});

test("ByteLevel (use_regex, with and without a prefix space), Whitespace, WhitespaceSplit cut as Rust cuts", () => {
  const components = [
    { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    { type: "ByteLevel", add_prefix_space: false, trim_offsets: true },
    { type: "Whitespace" },
    { type: "WhitespaceSplit" },
    { type: "Sequence", pretokenizers: [{ type: "WhitespaceSplit" }, { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: true }] },
  ];
  for (const component of components) {
    const json = tokenizerJson(null, component);
    const { tok, pre } = build(json);
    const report = installExactPatterns(tok, json as never);
    assert.equal(report.exact, true, report.notes.join("; "));
    const rust = rustPreTokenizer(component);
    // (the library never pre-tokenizes an empty section, where its ByteLevel would add a space)
    for (const text of TEXTS.filter((t) => t !== "")) assert.deepEqual(pre(text), rust(text), `${JSON.stringify(component)} on ${JSON.stringify(text)}`);
  }
});

test("a pattern the translator refuses is left to the library, and the report says so", () => {
  const json = tokenizerJson(null, { type: "Sequence", pretokenizers: [{ type: "Split", pattern: { Regex: "(a)\\1" }, behavior: "Isolated", invert: false }] });
  const { tok } = build(json);
  const split = (tok as unknown as { pre_tokenizer: { tokenizers: Array<Record<string, unknown>> } }).pre_tokenizer.tokenizers[0] as Record<string, unknown>;
  const report = installExactPatterns(tok, json as never);
  assert.equal(report.exact, false);
  assert.match(report.notes[0] as string, /^pre_tokenizer\.pretokenizers\[0\] Split: left to @huggingface\/tokenizers \(pattern not translated/);
  assert.equal(Object.prototype.hasOwnProperty.call(split, "pre_tokenize_text"), false, "the library's method stays");
  assert.equal(installExactPatterns(tok, json as never), report, "idempotent");
});

test("an unrecognized configuration is left to the library", () => {
  for (const pre of [
    { type: "Split", pattern: { Regex: "\\s" }, behavior: "Isolated", invert: false, extra: 1 },
    { type: "Split", pattern: { Regex: "\\s" }, behavior: "isolated", invert: false },
    { type: "Split", pattern: { Regex: "\\s" }, behavior: "Isolated" },
    { type: "Split", pattern: { Glob: "\\s" }, behavior: "Isolated", invert: false },
  ]) {
    const json = tokenizerJson(null, pre);
    let tok: Tokenizer;
    try {
      tok = build(json).tok;
    } catch {
      continue; // the library itself rejects it
    }
    const report = installExactPatterns(tok, json as never);
    assert.equal(report.exact, false, JSON.stringify(pre));
    assert.match(report.notes.join("\n"), /left to @huggingface\/tokenizers/);
  }
});

test("a stand-in the pipeline does not call is put back (the effect probe)", () => {
  const json = tokenizerJson(null, { type: "Split", pattern: { Regex: "\\s+" }, behavior: "Isolated", invert: false });
  const { tok } = build(json);
  const split = (tok as unknown as { pre_tokenizer: Record<string, unknown> }).pre_tokenizer;
  // a library version whose pipeline reaches the method some other way
  const proto = Object.getPrototypeOf(split) as { pre_tokenize_text: (s: string) => string[] };
  split["pre_tokenize"] = (text: string) => proto.pre_tokenize_text.call(split, text);
  const report = installExactPatterns(tok, json as never);
  assert.equal(report.exact, false);
  assert.match(report.notes[0] as string, /the pipeline did not call the stand-in/);
  assert.equal(Object.prototype.hasOwnProperty.call(split, "pre_tokenize_text"), false, "put back");
});

test("a ByteLevel whose method does not read its pattern keeps the library's pattern", () => {
  const json = tokenizerJson(null, { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true });
  const { tok } = build(json);
  const bl = (tok as unknown as { pre_tokenizer: Record<string, unknown> }).pre_tokenizer;
  const stock = bl["pattern"] as RegExp;
  const method = bl["pre_tokenize_text"] as (this: unknown, s: string) => string[];
  // a library version that compiled its pattern into the method
  bl["pre_tokenize_text"] = function (this: Record<string, unknown>, text: string) {
    const saved = this["pattern"];
    this["pattern"] = stock;
    try {
      return method.call(this, text);
    } finally {
      this["pattern"] = saved;
    }
  };
  const report = installExactPatterns(tok, json as never);
  assert.equal(report.exact, false);
  assert.match(report.notes[0] as string, /the probe did not see the pattern/);
  assert.equal(bl["pattern"], stock, "put back");
});

test("a ByteLevel with an unrecognized pattern is left to the library", () => {
  const json = tokenizerJson(null, { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true });
  const { tok } = build(json);
  const bl = (tok as unknown as { pre_tokenizer: Record<string, unknown> }).pre_tokenizer;
  const other = /\w+|\s+/gu;
  bl["pattern"] = other;
  const report = installExactPatterns(tok, json as never);
  assert.equal(report.exact, false);
  assert.equal(bl["pattern"], other);
});

test("loading a tokenizer with an untranslated pattern warns once and still encodes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-patterns-"));
  try {
    const json = tokenizerJson(null, { type: "Split", pattern: { Regex: "\\G\\s" }, behavior: "Isolated", invert: false });
    writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(json));
    const warned = new Promise<Error>((resolve) => {
      const on = (w: Error & { code?: string }): void => {
        if (w.code !== "DELTATOK_PATTERN_INEXACT") return;
        process.off("warning", on);
        resolve(w);
      };
      process.on("warning", on);
    });
    const loaded = await loadTokenizer(dir);
    assert.equal(loaded.patterns.exact, false);
    const w = await warned;
    assert.equal((w as { code?: string }).code, "DELTATOK_PATTERN_INEXACT");
    assert.ok(Array.isArray(loaded.tokenizer.encode("a b", { add_special_tokens: false }).ids));
  } finally {
    clearTokenizerCache();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("components without a pattern that differ from Rust are reported, not changed", () => {
  const cases: Array<{ json: Json; text: string; kind: "pre" | "norm" }> = [
    { json: tokenizerJson(null, { type: "Digits", individual_digits: true }), text: "x٣y", kind: "pre" },
    { json: tokenizerJson(null, { type: "Punctuation", behavior: "Isolated" }), text: "a\\'b", kind: "pre" },
    { json: tokenizerJson(null, { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: true }), text: "yo  ", kind: "pre" },
    { json: tokenizerJson({ type: "Strip", strip_left: true, strip_right: true }, null), text: "\u0085a\ufeff", kind: "norm" },
  ];
  for (const { json, text, kind } of cases) {
    const { tok, pre, norm } = build(json);
    const report = installExactPatterns(tok, json as never);
    assert.equal(report.exact, false, JSON.stringify(json["pre_tokenizer"] ?? json["normalizer"]));
    assert.match(report.notes.join("\n"), /known to differ from the Rust crate/);
    // the difference is real
    if (kind === "pre") assert.notDeepEqual(pre(text), rustPreTokenizer(json["pre_tokenizer"])(text));
    else assert.notEqual(norm(text), rustNormalizer(json["normalizer"])(text));
  }
});
