/** fast-check arbitraries of hostile text for tokenizer tests. */
import fc from "fast-check";

const FRAGMENTS = [
  " ", "  ", "\n", "\n\n", "\n\n\n", "\t", "\r\n", "\r", " \n", "\u00a0", "\u2581", "\u2581\u2581", "\ufeff", "\u200b",
  "e\u0301", "\u0301", "Ω", "ﬁ", "한국어", "日本語", "😀", "👩‍💻", "𝒳", "\u0000", "\u001b[0m", "'s", "'ll", "123456", "3.14",
  "<", ">", "|", "<|", "|>", "</", "<tool_call>", "</tool_call>", "<think>", "</think>", "{\"a\": 1}", "def f(x):\n    return x",
];

/** A text built from hostile fragments, words and the given special-token texts. */
export function hostileText(specials: readonly string[], maxParts = 24): fc.Arbitrary<string> {
  const parts: Array<fc.Arbitrary<string>> = [
    fc.constantFrom(...FRAGMENTS),
    fc.string({ unit: "grapheme", maxLength: 8 }),
    fc.string({ maxLength: 6 }),
    fc.constantFrom("hello", "world", "The", "assistant", "user"),
  ];
  if (specials.length > 0) parts.push(fc.constantFrom(...specials));
  return fc.array(fc.oneof(...parts), { maxLength: maxParts }).map((xs) => xs.join(""));
}
