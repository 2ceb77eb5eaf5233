/**
 * The class sources (classes.ts) of the two regex engines the pattern families run on, and their
 * tables, each built once per process on first use:
 * - "oniguruma": the Rust `tokenizers` crate (tokenizer.json patterns), from the translator's
 *   tables (../regex/oniguruma-tables.ts, read off the Rust binding);
 * - "rust-regex": the `regex` crate as tiktoken's fancy-regex runs it (tiktoken patterns), from
 *   rust-regex-tables.ts (read off tiktoken itself).
 *
 * Layer: encoder.
 */

import { type CodePointSet, decodeRanges, escapeLeaf, propertyLeaf } from "../regex/unicode-sets.js";
import { buildClassTable, type ClassName, type ClassSource, type ClassTable } from "./classes.js";
import { RUST_REGEX_SETS } from "./rust-regex-tables.js";

export type Flavor = "oniguruma" | "rust-regex";
export const FLAVORS: readonly Flavor[] = ["oniguruma", "rust-regex"];

function property(name: string): CodePointSet {
  const leaf = propertyLeaf(name, true);
  if (leaf === undefined) throw new Error(`oniguruma tables: no \\p{${name}}`);
  return leaf.set;
}

export const ONIGURUMA_SOURCE: ClassSource = {
  flavor: "oniguruma",
  sets: () => ({
    Lu: property("Lu"), Ll: property("Ll"), Lt: property("Lt"), Lm: property("Lm"), Lo: property("Lo"), M: property("M"),
    N: property("N"), P: property("P"), S: property("S"), White_Space: escapeLeaf("s", true).set, Han: property("Han"),
  }),
};

export const RUST_REGEX_SOURCE: ClassSource = {
  flavor: "rust-regex",
  sets: () => {
    const out = {} as Record<ClassName, CodePointSet>;
    for (const [name, encoded] of Object.entries(RUST_REGEX_SETS)) out[name as ClassName] = decodeRanges(encoded);
    return out;
  },
};

const tables = new Map<Flavor, ClassTable>();

/** The class table of a flavor (built on first use, then shared). */
export function classTable(flavor: Flavor): ClassTable {
  let t = tables.get(flavor);
  if (t === undefined) {
    t = buildClassTable(flavor === "oniguruma" ? ONIGURUMA_SOURCE : RUST_REGEX_SOURCE);
    tables.set(flavor, t);
  }
  return t;
}
