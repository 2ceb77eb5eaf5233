/**
 * The scanners' work is linear in the text: on the texts that make a backtracking regex quadratic
 * (long runs of CJK, spaces, one letter, digits, punctuation, marks, uppercase, and alternations
 * that restart a failed alternative at every position), every scanner examines at most a few
 * characters per character of input (counted reads, reading.ts; never wall time).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { scannerFor, scannerForPattern } from "../src/encoder/pretokenize/index.js";
import { KIMI_PATTERN, TIKTOKEN_CL100K_PATTERN, TIKTOKEN_R50K_PATTERN } from "../src/encoder/pretokenize/patterns.js";
import { examinedCount, resetExaminedCount } from "../src/encoder/pretokenize/reading.js";
import { Int32List, type PieceScanner } from "../src/encoder/pretokenize/scanner.js";
import { preTokenizerOf, SCANNED } from "./helpers/pretokenize.js";

/** Reads per input character allowed. */
const BOUND = 6;

const CJK = "东京都中文字日本語的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可生自会那后能对着事其里所去行过家十用发天如然作方成者多日都三小军二无同么经法当起与好看学进种将还分此心前面又定见只主没公从";

const TEXTS: ReadonlyArray<readonly [string, string]> = [
  ["400k CJK characters", Array.from({ length: 400_000 }, (_, i) => CJK[(i * 7919) % CJK.length]).join("")],
  ["1M spaces", " ".repeat(1_000_000)],
  ["1M spaces then a letter", " ".repeat(1_000_000) + "x"],
  ["'a' × 400k", "a".repeat(400_000)],
  ["'A' × 400k", "A".repeat(400_000)],
  ["'ʰ' (Lm) × 400k", "ʰ".repeat(400_000)],
  ["'A' × 400k then '.'", "A".repeat(400_000) + "."],
  ["a mark × 400k", "\u0301".repeat(400_000)],
  ["digits × 400k", "7".repeat(400_000)],
  ["Arabic-Indic digits × 400k", "٣".repeat(400_000)],
  ["'.' × 400k", ".".repeat(400_000)],
  ["'\\n' × 400k", "\n".repeat(400_000)],
  ["' \\t' × 200k", " \t".repeat(200_000)],
  ["' \\n' × 200k", " \n".repeat(200_000)],
  ["'\\t.' × 200k", "\t.".repeat(200_000)],
  ["'.a' × 200k", ".a".repeat(200_000)],
  ["' 1' × 200k", " 1".repeat(200_000)],
  ["\"'s\" × 200k", "'s".repeat(200_000)],
  ["\"A'\" × 200k", "A'".repeat(200_000)],
  ["'Aʰ' × 200k", "Aʰ".repeat(200_000)],
  ["'ǅA' × 200k", "ǅA".repeat(200_000)],
  ["'\\u0301A' × 200k", "\u0301A".repeat(200_000)],
  ["emoji × 200k", "😀".repeat(200_000)],
  ["lone surrogates × 400k", "\ud800".repeat(400_000)],
  ["'中a' × 200k", "中a".repeat(200_000)],
  ["'\\u00a0\\n' × 200k", "\u00a0\n".repeat(200_000)],
];

const SCANNERS: Array<[string, PieceScanner]> = [
  ...SCANNED.map(([name]) => [name, scannerFor(preTokenizerOf(name)) as PieceScanner] as [string, PieceScanner]),
  ["tiktoken r50k", scannerForPattern(TIKTOKEN_R50K_PATTERN, "rust-regex") as PieceScanner],
  ["tiktoken cl100k", scannerForPattern(TIKTOKEN_CL100K_PATTERN, "rust-regex") as PieceScanner],
  ["kimi", scannerForPattern(KIMI_PATTERN, "rust-regex") as PieceScanner],
];

for (const [name, scanner] of SCANNERS) {
  test(`${name}: at most ${BOUND} characters examined per character on pathological texts`, () => {
    assert.ok(scanner !== undefined && scanner !== null);
    const ends = new Int32List(1 << 16);
    for (const [label, text] of TEXTS) {
      ends.clear();
      resetExaminedCount();
      scanner.scan(text, 0, text.length, ends);
      const perChar = examinedCount() / text.length;
      assert.ok(perChar <= BOUND, `${name} on ${label}: ${perChar.toFixed(2)} characters examined per character`);
      assert.equal(ends.data[ends.length - 1], text.length);
    }
    assert.ok(examinedCount() > 0);
  });
}
