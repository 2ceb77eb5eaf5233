/**
 * What every scanner reads with: one code point at a time, the way the `v`-flag regex path reads a
 * JavaScript string (a surrogate pair is one code point, a lone surrogate is itself and in no
 * class), runs of a class, and the work counter the linear-work tests read (each run adds the
 * characters it examined, the one that ended it included).
 *
 * Layer: encoder.
 */

import { type ClassTable, classOf, NUM, SPACE } from "./classes.js";

/** The code point at `i` (< end): a surrogate pair inside [.., end) is one, a lone surrogate itself. */
export function codePointAt(text: string, i: number, end: number): number {
  const c = text.charCodeAt(i);
  if ((c & 0xfc00) !== 0xd800 || i + 1 >= end) return c;
  const d = text.charCodeAt(i + 1);
  return (d & 0xfc00) === 0xdc00 ? ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000 : c;
}

/** Class bits of the code point at `i` (< end). */
export function classAt(t: ClassTable, text: string, i: number, end: number): number {
  work.n++;
  const c = text.charCodeAt(i);
  return c < 0xd800 ? (t.bmp[c] as number) : classOf(t, codePointAt(text, i, end));
}

/** For the scanners' ASCII fast paths: the class bits of the code unit at `i` when it is ASCII, 0 at the end, -1 otherwise. */
export function asciiClassAt(bmp: Uint16Array, text: string, i: number, end: number): number {
  if (i >= end) return 0;
  const c = text.charCodeAt(i);
  return c < 0x80 ? (bmp[c] as number) : -1;
}

/** End of the run from `i` of code points having a bit of `any` and none of `none`. */
export function runOf(t: ClassTable, text: string, i: number, end: number, any: number, none: number): number {
  const from = i;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c < 0xd800) {
      const b = t.bmp[c] as number;
      if ((b & any) === 0 || (b & none) !== 0) break;
      i++;
    } else {
      const cp = codePointAt(text, i, end);
      const b = classOf(t, cp);
      if ((b & any) === 0 || (b & none) !== 0) break;
      i += cp > 0xffff ? 2 : 1;
    }
  }
  work.n += i - from + 1;
  return i;
}

/** End of the run from `i` of code points having no bit of `none`. */
export function runWithout(t: ClassTable, text: string, i: number, end: number, none: number): number {
  const from = i;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c < 0xd800) {
      if (((t.bmp[c] as number) & none) !== 0) break;
      i++;
    } else {
      const cp = codePointAt(text, i, end);
      if ((classOf(t, cp) & none) !== 0) break;
      i += cp > 0xffff ? 2 : 1;
    }
  }
  work.n += i - from + 1;
  return i;
}

/** End of up to `max` numbers from `i` (`\p{N}{1,max}` where `i` holds one; 0 numbers if it does not). */
export function numbersEnd(t: ClassTable, text: string, i: number, end: number, max: number): number {
  const from = i;
  for (let k = 0; k < max && i < end; k++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800) {
      if (((t.bmp[c] as number) & NUM) === 0) break;
      i++;
    } else {
      const cp = codePointAt(text, i, end);
      if ((classOf(t, cp) & NUM) === 0) break;
      i += cp > 0xffff ? 2 : 1;
    }
  }
  work.n += i - from + 1;
  return i;
}

/** End of the run from `i` of \r and \n (and `/` when `slash`). */
export function newlineRun(text: string, i: number, end: number, slash: boolean): number {
  const from = i;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c !== 0x0a && c !== 0x0d && !(slash && c === 0x2f)) break;
    i++;
  }
  work.n += i - from + 1;
  return i;
}

/**
 * Where `\s*[\r\n]+|\s+(?!\S)|\s+` (`crlf`) or `\s+(?!\S)|\s+` (not `crlf`) ends a match that
 * starts at the `\s` at `p`: the run through its last \r or \n; else the run when it reaches the
 * end of the input; else the run but its last character, unless that leaves nothing. (Every `\s`
 * is below U+10000, so the last character is one code unit.) `tail`: tiktoken's cl100k_base puts
 * `\s++$` first, so a run that reaches the end is whole even when it holds a newline.
 */
export function spaceMatchEnd(t: ClassTable, text: string, p: number, end: number, crlf: boolean, tail = false): number {
  let q = p;
  let lastNewline = -1;
  while (q < end) {
    const c = text.charCodeAt(q);
    if (((t.bmp[c] as number) & SPACE) === 0) break; // a surrogate code unit has no bits
    if (c === 0x0a || c === 0x0d) lastNewline = q;
    q++;
  }
  work.n += q - p + 1;
  if (crlf && lastNewline >= 0 && !(tail && q === end)) return lastNewline + 1;
  if (q === end || q - 1 === p) return q;
  return q - 1;
}

/**
 * Length (code units) of the contraction `'s|'t|'re|'ve|'m|'ll|'d` at `i` (an apostrophe), or 0.
 * `fold`: case-insensitive as Oniguruma and the `regex` crate fold (`S`, and `ſ` U+017F for s).
 */
export function contractionAt(text: string, i: number, end: number, fold: boolean): number {
  if (i + 1 >= end) return 0;
  work.n += 2;
  const a = letter(text.charCodeAt(i + 1), fold);
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return 2; // s t m d
  if (i + 2 >= end || (a !== 0x72 && a !== 0x76 && a !== 0x6c)) return 0; // r v l
  work.n++;
  const b = letter(text.charCodeAt(i + 2), fold);
  return (a === 0x6c ? b === 0x6c : b === 0x65) ? 3 : 0; // ll, re, ve
}

function letter(c: number, fold: boolean): number {
  if (!fold) return c;
  if (c >= 0x41 && c <= 0x5a) return c | 0x20;
  return c === 0x17f ? 0x73 : c;
}

// ---- work counter (tests) --------------------------------------------------------------------------

/** Characters examined (a number field: adding to it allocates nothing once it holds a double). */
const work = { n: 0 };

/** Adds to the work counter (a scanner's own loops). */
export function countExamined(n: number): void {
  work.n += n;
}

/** @internal Characters examined by every scan since the last reset (one read twice counts twice). */
export function examinedCount(): number {
  return work.n;
}

/** @internal */
export function resetExaminedCount(): void {
  work.n = 0;
}
