/**
 * Short JavaScript forms of Oniguruma's character classes, checked against the running Node.
 *
 * A class written out as ranges is exact whatever Node's Unicode version, but long: `\p{L}` alone
 * is 2,200 code units, and V8 stops optimizing a RegExp whose source passes 20 K code units (the
 * o200k pattern of GPT-4o and gpt-oss would then run 10× slower). So each named set also gets a
 * JavaScript base (`\p{Lu}`, `\p{sc=Han}`, `\p{White_Space}`, ...) and, once per process, the base
 * is compared with Oniguruma's set over every code point: equal, the base is used as it is;
 * different in a few places (a Node whose Unicode is newer or older than Oniguruma's 16.0), it is
 * corrected (`[\p{L}--[...]]`, `v` flag); too different, or unknown to this Node, the caller writes
 * the ranges. Either way the class has exactly Oniguruma's members.
 *
 * Layer: encoder.
 */

import { type CodePointSet, complement, intersect, MAX_CODE_POINT, union } from "./unicode-sets.js";

/** Corrections longer than this many ranges are not worth it: the ranges are written instead. */
const MAX_CORRECTION_RANGES = 48;

/** Every Unicode scalar value once, in order (about 4 MB, built on the first check and kept for later ones). */
let everyScalar: string | null = null;

function scalars(): string {
  if (everyScalar !== null) return everyScalar;
  const units = new Uint16Array(0x10000 - 0x800 + (MAX_CODE_POINT - 0xffff) * 2);
  let n = 0;
  for (let c = 0; c < 0x10000; c++) if (c < 0xd800 || c > 0xdfff) units[n++] = c;
  for (let c = 0x10000; c <= MAX_CODE_POINT; c++) {
    const v = c - 0x10000;
    units[n++] = 0xd800 + (v >> 10);
    units[n++] = 0xdc00 + (v & 0x3ff);
  }
  everyScalar = new TextDecoder("utf-16le").decode(units.subarray(0, n));
  return everyScalar;
}

/** A code point inside a `v`-flag class: itself where that is safe, else an escape. */
export function classCharV(cp: number): string {
  if (cp < 0x20 || cp === 0x7f || (cp >= 0xd800 && cp <= 0xdfff)) return `\\u{${cp.toString(16)}}`;
  if (cp < 0x80 && /[!#$%&()*+,\-./:;<=>?@[\\\]^`{|}~]/.test(String.fromCharCode(cp))) return "\\" + String.fromCharCode(cp);
  return String.fromCodePoint(cp);
}

/** The members of `set` as `v`-flag class contents (no brackets). */
export function rangesV(set: CodePointSet): string {
  let out = "";
  for (let i = 0; i < set.length; i += 2) {
    const s = set[i] as number;
    const e = set[i + 1] as number;
    out += s === e ? classCharV(s) : e === s + 1 ? classCharV(s) + classCharV(e) : `${classCharV(s)}-${classCharV(e)}`;
  }
  return out;
}

function rangeCount(set: CodePointSet): number {
  return set.length / 2;
}

/** Code points matched by the (global, `v`) class `re` in every scalar value, as a set. */
function membersOf(re: RegExp): CodePointSet {
  const all = scalars();
  const out: number[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(all); m !== null; m = re.exec(all)) {
    const cp = m[0].codePointAt(0) as number;
    const last = out.length - 1;
    if (last > 0 && out[last] === cp - 1) out[last] = cp;
    else out.push(cp, cp);
  }
  return out;
}

const checked = new Map<string, string | null>();

/**
 * A short `v`-flag class (with brackets, or a bare `\p{..}`) with exactly the members of `set`,
 * built on the JavaScript class `base`; null when `base` is unknown to this Node or differs from
 * `set` in too many places. `key` names the set for the cache.
 */
export function correctedClass(key: string, set: CodePointSet, base: string): string | null {
  const cacheKey = `${key}\u0000${base}`;
  const known = checked.get(cacheKey);
  if (known !== undefined) return known;
  let result: string | null = null;
  try {
    const setClass = `[${rangesV(set)}]`;
    const extra = membersOf(new RegExp(`[${base}--${setClass}]`, "gv"));
    const missing = membersOf(new RegExp(`[${setClass}--${base}]`, "gv"));
    if (rangeCount(extra) + rangeCount(missing) <= MAX_CORRECTION_RANGES) {
      // the surrogates are not in the scan; they must not be in `base` alone either
      const surrogates = [0xd800, 0xdfff];
      const baseHasSurrogate = new RegExp(`^[${base}]$`, "v").test("\ud800");
      const wantSurrogate = intersect(set, surrogates).length > 0;
      let fixedMissing = missing;
      let fixedExtra = extra;
      if (wantSurrogate && !baseHasSurrogate) fixedMissing = union(missing, intersect(set, surrogates));
      if (!wantSurrogate && baseHasSurrogate) fixedExtra = union(extra, intersect(complement(set), surrogates));
      let cls = fixedExtra.length === 0 ? base : `[${base}--[${rangesV(fixedExtra)}]]`;
      if (fixedMissing.length > 0) cls = `[${cls}${rangesV(fixedMissing)}]`;
      result = cls;
    }
  } catch {
    result = null; // a property this Node does not know
  }
  checked.set(cacheKey, result);
  return result;
}
