/**
 * Code point sets with Oniguruma's Unicode membership: decoding the generated tables
 * (oniguruma-tables.ts), the set algebra a character class needs (union, intersection,
 * complement), and the lookup of the names Oniguruma accepts after `\p{`.
 *
 * A set is a sorted list of disjoint, non-adjacent inclusive ranges, flattened:
 * `[start0, end0, start1, end1, ...]`.
 *
 * Layer: encoder.
 */

import { GC_GROUPS, GC_RUNS, GC_VALUES, SCRIPT_ALIASES, SCRIPT_RUNS, SCRIPT_VALUES, SET_ALIASES, SETS } from "./oniguruma-tables.js";

export type CodePointSet = readonly number[];

export const MAX_CODE_POINT = 0x10ffff;
export const EMPTY: CodePointSet = Object.freeze([]);
export const EVERYTHING: CodePointSet = Object.freeze([0, MAX_CODE_POINT]);

/** The set of the given code points and inclusive ranges, in any order. */
export function setOf(...items: Array<number | readonly [number, number]>): CodePointSet {
  const pairs: Array<[number, number]> = items.map((x) => (typeof x === "number" ? [x, x] : [x[0], x[1]]));
  pairs.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [s, e] of pairs) {
    const last = out.length - 1;
    if (last > 0 && s <= (out[last] as number) + 1) out[last] = Math.max(out[last] as number, e);
    else out.push(s, e);
  }
  return out;
}

export function union(a: CodePointSet, b: CodePointSet): CodePointSet {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let s: number;
    let e: number;
    if (j >= b.length || (i < a.length && (a[i] as number) <= (b[j] as number))) {
      s = a[i] as number;
      e = a[i + 1] as number;
      i += 2;
    } else {
      s = b[j] as number;
      e = b[j + 1] as number;
      j += 2;
    }
    const last = out.length - 1;
    if (last > 0 && s <= (out[last] as number) + 1) out[last] = Math.max(out[last] as number, e);
    else out.push(s, e);
  }
  return out;
}

export function complement(a: CodePointSet): CodePointSet {
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < a.length; i += 2) {
    const s = a[i] as number;
    if (s > next) out.push(next, s - 1);
    next = (a[i + 1] as number) + 1;
  }
  if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
  return out;
}

export function intersect(a: CodePointSet, b: CodePointSet): CodePointSet {
  return complement(union(complement(a), complement(b)));
}

export function has(a: CodePointSet, cp: number): boolean {
  // binary search over range starts
  let lo = 0;
  let hi = a.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < (a[mid * 2] as number)) hi = mid - 1;
    else if (cp > (a[mid * 2 + 1] as number)) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Whether every member is below U+0080. */
export function isAscii(a: CodePointSet): boolean {
  return a.length === 0 || (a[a.length - 1] as number) < 0x80;
}

// ---- the tables ---------------------------------------------------------------------------------

export function decodeRanges(encoded: string): CodePointSet {
  const out: number[] = [];
  if (encoded === "") return out;
  const nums = encoded.split(",");
  let prev = -1;
  for (let i = 0; i < nums.length; i += 2) {
    const s = prev + 1 + parseInt(nums[i] as string, 36);
    const e = s + parseInt(nums[i + 1] as string, 36);
    out.push(s, e);
    prev = e;
  }
  return out;
}

/** Decodes a partition: value → its set. `valueLength` is the width of a run's value (0 = up to ':'). */
function decodePartition(encoded: string, valueLength: number): Map<string, number[]> {
  const byValue = new Map<string, number[]>();
  let at = 0;
  for (const run of encoded.split(",")) {
    const cut = valueLength > 0 ? valueLength : run.indexOf(":") + 1;
    const value = valueLength > 0 ? run.slice(0, cut) : run.slice(0, cut - 1);
    const end = at + parseInt(run.slice(cut), 36);
    let list = byValue.get(value);
    if (list === undefined) byValue.set(value, (list = []));
    list.push(at, end);
    at = end + 1;
  }
  if (at !== MAX_CODE_POINT + 1) throw new Error("oniguruma-tables: a partition does not cover the code space");
  return byValue;
}

/** Oniguruma's name normalization: case-insensitive, spaces, hyphens and underscores ignored. */
export function propertyKey(name: string): string {
  return name.toLowerCase().replace(/[ _-]/g, "");
}

/** A named set of Oniguruma's, with a JavaScript class to try for it (runtime-classes.ts). */
export interface Leaf {
  readonly key: string;
  readonly set: CodePointSet;
  /** A JavaScript (`v`-flag) class that has, or nearly has, the same members; null: none. */
  readonly base: string | null;
}

/** JavaScript classes to try for the sets that are not a General_Category or Script value. */
const BASES: Readonly<Record<string, string>> = {
  "\\s": "\\p{White_Space}",
  "rx:\\s": "\\p{White_Space}",
  "rx:\\w": "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]",
  "\\d": "\\p{Nd}",
  "\\w": "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}]",
  "[:alnum:]": "[\\p{Alphabetic}\\p{M}\\p{Nd}]",
  "[:alpha:]": "\\p{Alphabetic}",
  "[:ascii:]": "\\p{ASCII}",
  "[:cntrl:]": "\\p{Cc}",
  "[:graph:]": "[^\\p{White_Space}\\p{Cc}\\p{Cn}\\p{Cs}]",
  "[:lower:]": "\\p{Lowercase}",
  "[:print:]": "[^\\p{Cc}\\p{Cn}\\p{Cs}\\p{Zl}\\p{Zp}]",
  "[:punct:]": "[\\p{P}\\p{S}]",
  "[:upper:]": "\\p{Uppercase}",
  "[:word:]": "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}]",
  punct: "\\p{P}",
  assigned: "\\p{Assigned}",
  cased: "\\p{Cased}",
  dash: "\\p{Dash}",
  emoji: "\\p{Emoji}",
  emojicomponent: "\\p{Emoji_Component}",
  emojimodifier: "\\p{Emoji_Modifier}",
  emojimodifierbase: "\\p{Emoji_Modifier_Base}",
  emojipresentation: "\\p{Emoji_Presentation}",
  extendedpictographic: "\\p{Extended_Pictographic}",
  hexdigit: "\\p{Hex_Digit}",
  ideographic: "\\p{Ideographic}",
  unifiedideograph: "\\p{Unified_Ideograph}",
  joincontrol: "\\p{Join_Control}",
  math: "\\p{Math}",
  patternwhitespace: "\\p{Pattern_White_Space}",
  quotationmark: "\\p{Quotation_Mark}",
  regionalindicator: "\\p{Regional_Indicator}",
  variationselector: "\\p{Variation_Selector}",
  defaultignorablecodepoint: "\\p{Default_Ignorable_Code_Point}",
};

let named: Map<string, Leaf> | null = null;

function namedSets(): Map<string, Leaf> {
  if (named !== null) return named;
  const m = new Map<string, Leaf>();
  const define = (key: string, set: CodePointSet, base: string | null): void => {
    const before = m.get(key);
    if (before !== undefined && before.set !== set) throw new Error(`oniguruma-tables: ${key} names two sets`);
    m.set(key, { key, set, base });
  };
  const gc = decodePartition(GC_RUNS, 2);
  for (const [short, long] of GC_VALUES) {
    const set = gc.get(short) ?? [];
    define(propertyKey(short), set, `\\p{${short}}`);
    define(propertyKey(long), set, `\\p{${short}}`);
  }
  for (const [short, [long, leaves]] of Object.entries(GC_GROUPS)) {
    let set: CodePointSet = EMPTY;
    for (const leaf of leaves) set = union(set, gc.get(leaf) ?? []);
    define(propertyKey(short), set, `\\p{${short}}`);
    define(propertyKey(long), set, `\\p{${short}}`);
  }
  const scripts = decodePartition(SCRIPT_RUNS, 0);
  SCRIPT_VALUES.forEach(([long, short], i) => {
    const set = scripts.get(i.toString(36)) ?? [];
    define(propertyKey(long), set, `\\p{sc=${long}}`);
    define(propertyKey(short), set, `\\p{sc=${long}}`);
  });
  for (const [alias, long] of Object.entries(SCRIPT_ALIASES)) {
    const leaf = m.get(propertyKey(long));
    if (leaf === undefined) throw new Error(`oniguruma-tables: script alias ${alias} of unknown ${long}`);
    define(propertyKey(alias), leaf.set, leaf.base);
  }
  const baseOf = (key: string): string | null => BASES[key.startsWith("in:") ? key.slice(3) : key] ?? null;
  for (const [key, encoded] of Object.entries(SETS)) define(key, decodeRanges(encoded), baseOf(key));
  for (const [key, target] of Object.entries(SET_ALIASES)) {
    const leaf = m.get(target);
    if (leaf === undefined) throw new Error(`oniguruma-tables: alias ${key} of unknown ${target}`);
    define(key, leaf.set, baseOf(key) ?? leaf.base);
  }
  named = m;
  return m;
}

/**
 * `\p{name}` as Oniguruma resolves the name, outside a bracket or inside one (`inClass`), or
 * undefined when it is not in the tables.
 */
export function propertyLeaf(name: string, inClass: boolean): Leaf | undefined {
  const key = propertyKey(name);
  // the escape and POSIX keys are not property names
  if (key.startsWith("\\") || key.startsWith("[") || key.startsWith("in:")) return undefined;
  const sets = namedSets();
  return (inClass ? sets.get(`in:${key}`) : undefined) ?? sets.get(key);
}

/** `\s`, `\w`, `\d` or `\h`, outside a bracket or inside one. */
export function escapeLeaf(letter: "s" | "w" | "d" | "h", inClass: boolean): Leaf {
  return namedSets().get(`${inClass ? "in:" : ""}\\${letter}`) as Leaf;
}

/** The `regex` crate's `\w` or `\s` (what tokenizers' Whitespace pre-tokenizer runs). */
export function regexCrateLeaf(letter: "w" | "s"): Leaf {
  return namedSets().get(`rx:\\${letter}`) as Leaf;
}

/** The POSIX bracket `[:name:]`, or undefined for an unknown name. */
export function posixLeaf(name: string): Leaf | undefined {
  return namedSets().get(`[:${name}:]`);
}
