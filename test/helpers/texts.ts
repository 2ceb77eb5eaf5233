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

/**
 * Code points whose class differs between regex engines or Unicode versions (JavaScript's `\s` vs
 * Oniguruma's, White_Space, letters and digits new in recent Unicode versions, case folds), and
 * the text around them: what the pattern-exactness tests draw from.
 */
export const CLASS_FRAGMENTS: readonly string[] = [
  // spaces and separators: U+0085 and U+FEFF are where JavaScript's \s and Oniguruma's disagree
  "\u0085", "\ufeff", "\u180e", "\u200b", "\u2028", "\u2029", "\u00a0", "\u1680", "\u2000", "\u2003", "\u2007", "\u200a",
  "\u202f", "\u205f", "\u3000", "\u000b", "\u000c", "\u001c", "\u001d", "\u001e", "\u001f", "\u0000", "\u00ad", "\u200d",
  // combining marks, alone and on a letter
  "\u0301", "e\u0301", "\u0903", "\u20dd", "\u093f", "\u302a",
  // digits and numbers of other scripts
  "٣", "३", "߀", "໕", "𝟘", "𑁦", "Ⅻ", "²", "¼", "⑦", "〇",
  // letters new in Unicode 15.0 (Kawi, Nag Mundari), 15.1 (CJK I), 16.0 (Garay, Todhri, Kirat Rai,
  // Ol Onal), 17.0 (Latin, Sidetic, Beria Erfe, Tai Yo, CJK J), and unassigned code points
  "\u{11f04}", "\u{1e4d0}", "\u{2ebf0}", "\u{10d4a}", "\u{105c0}", "\u{16d43}", "\u{1e5d0}", "\ua7ce", "\ua7d2",
  "\u{10940}", "\u{16ea0}", "\u{1e6c0}", "\u{323b0}", "\u0378", "\u{e0080}", "\ue000",
  // emoji: presentation, ZWJ sequences, modifiers, flags, keycaps
  "😀", "👍🏽", "👩‍💻", "🇫🇷", "#️⃣", "❤️", "🫠",
  // contractions in every case, and the letters that fold to s and k
  "'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D",
  "'ſ", "'K", "’s", "ſ", "K", "Å", "ß", "ﬁ", "ﬆ", "İ", "ǅ", "ʰ",
  // runs of spaces and newlines, and plain text around them
  " ", "  ", "   ", "\n", "\n\n", " \n", "\r\n", "\r", "\t", "\t\t", "a", "Z", "hello", "World", "x", "123", "4567",
  "中文", "日本語", "한국어", "Ωμέγα", "مرحبا", "$", "!", "...", "_", "-", "—", "(", "\"", "/", "\\",
];

/** A text of class fragments and runs of spaces or newlines up to 40 long. */
export function classText(maxParts = 16): fc.Arbitrary<string> {
  const run = fc.tuple(fc.constantFrom(" ", "\n", "\t", "\u3000", "\u0085", "\r\n"), fc.integer({ min: 2, max: 40 })).map(([c, n]) => c.repeat(n));
  return fc
    .array(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...CLASS_FRAGMENTS) }, { weight: 1, arbitrary: run }, { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 3 }) }), {
      maxLength: maxParts,
    })
    .map((xs) => xs.join(""));
}
