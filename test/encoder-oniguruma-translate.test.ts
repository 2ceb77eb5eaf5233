/**
 * The Oniguruma → JavaScript pattern translation (src/encoder/regex/oniguruma.ts) cuts texts into the same
 * pieces as the Rust tokenizers' Split pre-tokenizer (its Oniguruma), pattern by pattern: the
 * patterns of real tokenizers and every construct the translator handles, on hostile texts, with
 * the pieces and the matched pieces both compared. The constructs it does not handle are refused.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { PatternNotTranslated, translateOniguruma } from "../src/encoder/regex/oniguruma.js";
import { splitText } from "../src/encoder/regex/pattern-split.js";
import { GPT2_PATTERN } from "../src/encoder/regex/patterns.js";
import { rustSplit } from "./helpers/rust.js";
import { CLASS_FRAGMENTS, classText } from "./helpers/texts.js";

const CL100K = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const O200K =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** Patterns of real tokenizers (tokenizer.json `Split` patterns and the built-in ones). */
const REAL: Array<[string, string]> = [
  ["GPT-2 / ByteLevel built-in", GPT2_PATTERN],
  ["words and the rest (Whitespace's pattern, as a Split pattern)", "\\w+|[^\\w\\s]+"],
  ["cl100k (Llama 3, GPT-3.5, GLM)", CL100K],
  ["Qwen2/3", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
  ["o200k (GPT-4o, gpt-oss)", O200K],
  ["DeepSeek-V3 digits", "\\p{N}{1,3}"],
  ["DeepSeek-V3 CJK", "[一-龥぀-ゟ゠-ヿ]+"],
  [
    "DeepSeek-V3 words",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
  ],
  ["BLOOM / Falcon (a nested class)", " ?[^(\\s|[.,!?…。，、।۔،])]+"],
  [
    "Kimi-style (class intersection, \\p{Han})",
    "[\\p{Han}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  ["digits", "\\d+|\\D+"],
];

/** Every construct the translator handles. */
const CONSTRUCTS: string[] = [
  "(?i:[a-z]+)", "(?i:k|s)", "(?i:'LL)", "(?i)ab|cd", "a(?i)b|c", "(?i:a(?-i:b))", "(?i:\\x41)", "(?i:[^a-c])", "(?i:\\p{Ll})",
  "\\h+", "\\H+", "\\w+", "\\W+", "\\s+", "\\S+", "\\d", "\\D", "\\p{^L}+", "\\P{L}+", "\\p{Latin}+", "\\p{Greek}", "\\p{Hani}",
  "\\p{Emoji_Presentation}+", "\\p{letter}+", "\\p{ uppercase letter }", "\\p{Zs}|\\p{Zl}|\\p{Zp}", "\\p{Cn}", "\\p{Cf}+", "\\p{Common}+",
  "\\p{Alpha}+", "\\p{Punct}", "\\p{White_Space}", "\\p{Any}", "\\p{Assigned}+", "\\p{ASCII}+", "\\p{LC}",
  "[[:punct:]]+", "[[:alpha:]]+", "[[:^space:]]+", "[[:word:]]+", "[[:alnum:][:space:]]+", "[[:upper:]]", "[[:cntrl:]]", "[[:blank:]]+",
  "[[:graph:]]+", "[[:print:]]+", "[[:xdigit:]]+", "[[:digit:]]", "[[:lower:]]+", "[[:ascii:]]+",
  "\\bhello\\b", "\\Bl", "\\b", "^\\s+|\\s+$", "^.", ".$", "(?m:.+)", ".+", "\\A\\s+", "\\s+\\z", "\\s+\\Z", "\\Z",
  "a++b?", "(?>\\s+)\\S", "l*+", "\\d{,2}", "\\d{2,}", "\\d{2}{2}", "l{1,2}?", "x{", "{", "x{1,", "}", "]", "a**",
  "(?<=\\d)(?=(?:\\d{3})+(?!\\d))", "(?<!\\s)\\s", "(?<=a|bc)d", "(?=b)", "(?!a)", "", "|a", "a|", "()",
  "[\\x{4e00}-\\x{9fa5}]+", "\\u00e9+", "\\x41", "\\t|\\n|\\r|\\f|\\v|\\a|\\e", "[\\-\\]\\\\^]+", "[]a]+", "[^]a]+", "[a-]+", "[-a]",
  "[a-z&&[^aeiou]]+", "[\\w&&\\D]+", "[^\\s\\p{L}]+", "[\\p{L}&&\\p{Greek}]", "[^[^a]]", "(?#comment)\\s", "(?:ab)*?c", "(?<n>a)b",
  "'s|'t|'re", "\\'\\/\\-", " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*", "\\s*[\\r\\n]+", "\\s+(?!\\S)|\\s+",
];

const TEXTS: string[] = [
  "a \u0085b", "x\ufeff'll", "Hello World, it's 2026!", "  \n\n  x\ty\r\n", "don'ſ 'K' IT'S", "ſſ KK Åß ﬆ", "a\u180eb\u200bc", "é e\u0301",
  "\ua7ce's \u{10d4a}'d \u{323b0}'ll", "٣३𝟘 1234567", "😀👍🏽👩‍💻🇫🇷#️⃣", "中文 日本語です。", "hello\nworld\n", "\n", "", " ", "aab baab",
  "abcd abab bcd ad", "0x1F-zz_9", "(a|b)[c]{d}", "\u2028\u2029\u3000\u00a0\u1680\u2000\u202f\u205f\u000b\u000c\u001c\u001f",
  "\u0378\u{e0080}\ue000", "x{1,2} y{ }", "   trailing   ", "\n\n\nxx\n\n",
];
const SAMPLED = fc.sample(classText(14), { numRuns: 120, seed: 20261130 });

function pieces(pattern: string, text: string, behavior: "Isolated" | "Removed"): string[] {
  return splitText(translateOniguruma(pattern).regex, text, behavior, false);
}

function check(pattern: string): void {
  const isolated = rustSplit({ Regex: pattern }, "Isolated");
  const removed = rustSplit({ Regex: pattern }, "Removed");
  for (const text of [...TEXTS, ...SAMPLED, CLASS_FRAGMENTS.join(""), CLASS_FRAGMENTS.join(" ")]) {
    assert.deepEqual(pieces(pattern, text, "Isolated"), isolated(text), `${JSON.stringify(pattern)} on ${JSON.stringify(text)}`);
    assert.deepEqual(pieces(pattern, text, "Removed"), removed(text), `${JSON.stringify(pattern)} (removed) on ${JSON.stringify(text)}`);
  }
}

for (const [name, pattern] of REAL) {
  test(`translation: ${name}`, () => check(pattern));
}

test("translation: every construct the translator handles", () => {
  for (const pattern of CONSTRUCTS) check(pattern);
});

test("translation: the issue's ByteLevel strings cut as Rust cuts them", () => {
  const re = translateOniguruma(GPT2_PATTERN).regex;
  assert.deepEqual("a \u0085b".match(re), ["a", " ", "\u0085", "b"]);
  assert.deepEqual("x\ufeff'll".match(re), ["x", "\ufeff'", "ll"]);
});

test("translation: the emitted source stays short enough for V8 to optimize it", () => {
  // V8 does not optimize a RegExp whose source exceeds 20 K code units (10× slower on Qwen's)
  for (const [, pattern] of REAL) assert.ok(translateOniguruma(pattern).source.length < 20_000, pattern);
});

test("refused: what the translator does not handle (the library's pattern is kept)", () => {
  const refused = [
    "(a)\\1", "(?<n>a)\\k<n>", "\\Ga", "a\\Kb", "\\R", "\\X", "\\y", "\\N", "\\O", "(?x: a b )", "(?~ab)", "(?(1)a|b)",
    "(?i:é)", "(?i:ss)", "(?i:st)", "(?i:'ff)", "(?i:[\\p{L}])", "(?i:[é])", "\\p{In_Basic_Latin}", "\\p{Foo}", "\\pL",
    "(?<=(?>a))b", "(?<=a++)b", "a{2,1}", "a{100001}", "*a", "(?=a)*", "\\b+", "[a-\\d]", "[\\d-z]", "[z-a]", "[[:foo:]]", "[",
    "(", "a)", "\\", "\\q", "\\0", "\\cA", "[a&&]", "\\x{110000}", "\\ud800",
  ];
  for (const p of refused) assert.throws(() => translateOniguruma(p), PatternNotTranslated, p);
});

test("refused patterns are refused for a reason: Rust rejects or the semantics would differ", () => {
  // spot checks that the refusals above are not overcautious where it matters most:
  // Oniguruma folds "ss" into ß under (?i), which no single-character class can express
  const rust = rustSplit({ Regex: "(?i:ss)" }, "Removed");
  assert.deepEqual(rust("ßSSẞss"), []);
  // and rejects a repeated assertion outright
  assert.throws(() => rustSplit({ Regex: "\\b+" }));
});
