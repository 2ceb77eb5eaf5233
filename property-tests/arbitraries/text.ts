/** Message text with the edges that break renderers and tokenizers. */
import fc from "fast-check";

const EDGES = [
  "", " ", "  ", "\n", "\n\n", " \n", "\n ", "\t", "\r\n", "\u00a0", "\u2581", "\ufeff", "\u200b", "e\u0301", "😀", "👩‍💻",
  "𝒳", "한국어", "日本語", "Ω", "'", "\"", "\\", "{", "}", "{{", "}}", "{%", "%}", "<think>", "</think>", "<think>\nplan\n</think>\n\n",
  "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "1.0", "True", "None", "null",
];

/**
 * Text for message fields: words, edge fragments and the tokenizer's special-token texts, with
 * leading/trailing whitespace variants (templates strip and split on these).
 */
export function messageText(specials: readonly string[]): fc.Arbitrary<string> {
  const piece = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("hello", "world", "the flight", "booking", "ok", "Sure,", "42", "user_id") },
    { weight: 3, arbitrary: fc.constantFrom(...EDGES) },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
    { weight: 1, arbitrary: specials.length > 0 ? fc.constantFrom(...specials) : fc.constant("") },
  );
  return fc
    .tuple(fc.constantFrom("", " ", "\n", "\n\n", "  "), fc.array(piece, { maxLength: 8 }), fc.constantFrom("", " ", "\n", " \n", "\n\n"))
    .map(([pre, parts, post]) => pre + parts.join(" ") + post);
}
