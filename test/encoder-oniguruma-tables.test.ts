/**
 * The vendored Unicode tables (src/encoder/regex/oniguruma-tables.ts, generated from the Rust binding) are
 * the Rust tokenizers' own, code point by code point, for the classes real tokenizers use; and the
 * short JavaScript forms checked against the running Node (runtime-classes.ts) have exactly the
 * same members, whatever this Node's Unicode version.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { correctedClass } from "../src/encoder/regex/runtime-classes.js";
import { type CodePointSet, escapeLeaf, has, type Leaf, posixLeaf, propertyLeaf, regexCrateLeaf } from "../src/encoder/regex/unicode-sets.js";
import { rustPreTokenizer, rustSplitOffsets } from "./helpers/rust.js";

const MAX = 0x10ffff;
const scalars: number[] = [];
for (let c = 0; c <= MAX; c++) if (c < 0xd800 || c > 0xdfff) scalars.push(c);
let ALL = "";
for (let i = 0; i < scalars.length; i += 20_000) ALL += String.fromCodePoint(...scalars.slice(i, i + 20_000));

/** Which of `universe` (code points, ascending) Rust's Oniguruma matches with a one-code-point pattern. */
function rustMembers(pattern: string, universe: readonly number[], text: string): Uint8Array {
  const m = new Uint8Array(MAX + 1);
  for (const c of universe) m[c] = 1;
  // "Removed" leaves the pieces that did not match; offsets are code point indexes into the text
  for (const [s, e] of rustSplitOffsets({ Regex: pattern }, "Removed")(text)) for (let i = s; i < e; i++) m[universe[i] as number] = 0;
  return m;
}

function differences(set: CodePointSet, rust: Uint8Array, universe: readonly number[] = scalars): string[] {
  const out: string[] = [];
  for (const c of universe) if (has(set, c) !== (rust[c] === 1) && out.length < 10) out.push(`U+${c.toString(16)}`);
  return out;
}

/** The edges of every range of `set` (and their neighbours), and every 61st code point. */
function edgesOf(set: CodePointSet): number[] {
  const pts = new Set<number>();
  for (let i = 0; i < set.length; i++) for (const d of [-1, 0, 1]) pts.add((set[i] as number) + d);
  for (let c = 0; c <= MAX; c += 61) pts.add(c);
  return [...pts].filter((c) => c >= 0 && c <= MAX && (c < 0xd800 || c > 0xdfff)).sort((a, b) => a - b);
}

const CASES: Array<[string, Leaf]> = [
  ["\\s", escapeLeaf("s", false)],
  ["\\w", escapeLeaf("w", false)],
  ["[\\w]", escapeLeaf("w", true)],
  ["\\d", escapeLeaf("d", false)],
  ["\\h", escapeLeaf("h", false)],
  ["[[:punct:]]", posixLeaf("punct") as Leaf],
  ["[[:alpha:]]", posixLeaf("alpha") as Leaf],
  ...["L", "N", "M", "P", "S", "Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Zs", "Cf", "Han", "Latin", "Common", "Emoji"].map(
    (n): [string, Leaf] => [`\\p{${n}}`, propertyLeaf(n, false) as Leaf],
  ),
];

/** Checked over every code point; the others at their edges and a stride. */
const EXHAUSTIVE = new Set(["\\s", "[\\w]", "\\p{L}", "\\p{N}"]);

test("the vendored sets are Oniguruma's, for the classes tokenizers use", () => {
  for (const [pattern, leaf] of CASES) {
    assert.ok(leaf !== undefined, pattern);
    const universe = EXHAUSTIVE.has(pattern) ? scalars : edgesOf(leaf.set);
    const text = universe === scalars ? ALL : String.fromCodePoint(...universe);
    assert.deepEqual(differences(leaf.set, rustMembers(pattern, universe, text), universe), [], pattern);
  }
});

test("the regex crate's \\w and \\s are what tokenizers' Whitespace pre-tokenizer splits with", () => {
  const pre = rustPreTokenizer({ type: "Whitespace" });
  const word = regexCrateLeaf("w").set;
  const space = regexCrateLeaf("s").set;
  // each code point between spaces: a space-class one vanishes, a word one joins a following "a"
  const sample = scalars.filter((c) => c % 7 === 0 || (c < 0x3000 && c % 2 === 0));
  const text = sample.map((c) => String.fromCodePoint(c) + "a ").join("");
  const joined = new Set<number>();
  const seen = new Set<number>();
  for (const piece of pre(text)) {
    const first = piece.codePointAt(0) as number;
    seen.add(first);
    if (piece.length > 1 && piece.endsWith("a") && [...piece].length === 2) joined.add(first);
  }
  for (const c of sample) {
    if (c === 0x61) continue;
    assert.equal(!seen.has(c), has(space, c), `\\s U+${c.toString(16)}`);
    if (!has(space, c)) assert.equal(joined.has(c), has(word, c), `\\w U+${c.toString(16)}`);
  }
});

test("the short JavaScript forms have exactly the vendored members on this Node", () => {
  const leaves: Leaf[] = [
    ...["L", "N", "M", "P", "S", "Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Han"].map((n) => propertyLeaf(n, false) as Leaf),
    escapeLeaf("s", false),
    escapeLeaf("w", false),
    escapeLeaf("w", true),
    regexCrateLeaf("w"),
  ];
  for (const leaf of leaves) {
    assert.ok(leaf.base !== null, leaf.key);
    const cls = correctedClass(leaf.key, leaf.set, leaf.base);
    assert.ok(cls !== null, `${leaf.key}: a short form exists`);
    // every code point the class matches in a text of all of them, against the vendored set
    const matched = new Uint8Array(MAX + 1);
    for (const m of ALL.matchAll(new RegExp(cls.startsWith("[") ? cls : `[${cls}]`, "gv"))) matched[m[0].codePointAt(0) as number] = 1;
    assert.deepEqual(differences(leaf.set, matched), [], `${leaf.key} as ${cls.slice(0, 80)}`);
  }
});
