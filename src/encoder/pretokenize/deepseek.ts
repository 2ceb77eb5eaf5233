/**
 * The DeepSeek V3 family, scanned: its pre-tokenizer is a Sequence of three Isolated Splits, each
 * cutting every piece of the one before it:
 *
 *   1. \p{N}{1,3}                       numbers, in threes from the start of each run
 *   2. [一-龥぀-ゟ゠-ヿ]+                  runs of CJK ideographs (U+4E00..U+9FA5), hiragana, katakana
 *   3. [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
 *      | ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *
 * The third pattern does not match everything (numbers, controls, format characters, lone
 * surrogates...): at a code point where no alternative matches, the search moves on one code point,
 * and what lies between two matches is a piece of its own (Isolated). Each piece of the second
 * split is the whole input of the third (`(?!\S)` sees its end). At p, in order: an ASCII
 * punctuation or symbol and an ASCII letter run; a letter-or-mark run (one code point before it
 * that is no \r, \n, letter, punctuation or symbol); one optional space, a punctuation-or-symbol
 * run and any \r\n run; `\s` as in cl100k.ts.
 *
 * Layer: encoder.
 */

import { classOf, LETTER, MARK, NUM, PUNCT, SPACE, SYM } from "./classes.js";
import { asciiClassAt, classAt, codePointAt, countExamined, newlineRun, numbersEnd, runOf, spaceMatchEnd } from "./reading.js";
import { type Int32Sink, TableScanner } from "./scanner.js";

const isCjk = (c: number): boolean => (c >= 0x4e00 && c <= 0x9fa5) || (c >= 0x3040 && c <= 0x30ff);
const isAsciiLetter = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
/** The ASCII punctuation and symbols of the third pattern's first class. */
const isAsciiPunct = (c: number): boolean => (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e);

export class DeepSeekScanner extends TableScanner {

  scan(text: string, start: number, end: number, ends: Int32Sink): void {
    // splits 1 and 2 in one pass: what lies before the next number or CJK code point is a piece of
    // both (the CJK ranges hold no number), a group of up to three numbers is a piece of both, a
    // CJK run (which a number ends) is one of split 2; split 3 cuts each
    const t = this.t;
    const bmp = t.bmp;
    let p = start;
    while (p < end) {
      let q = p;
      while (q < end) {
        const c = text.charCodeAt(q);
        if (c < 0xd800) {
          if (((bmp[c] as number) & NUM) !== 0 || isCjk(c)) break;
          q++;
        } else {
          const cp = codePointAt(text, q, end);
          if ((classOf(t, cp) & NUM) !== 0) break;
          q += cp > 0xffff ? 2 : 1;
        }
      }
      countExamined(q - p + 1);
      if (q > p) this.#third(text, p, q, ends);
      if (q >= end) break;
      let r: number;
      if (isCjk(text.charCodeAt(q))) {
        r = q + 1;
        while (r < end && isCjk(text.charCodeAt(r))) r++;
        countExamined(r - q);
      } else r = numbersEnd(t, text, q, end, 3);
      this.#third(text, q, r, ends);
      p = r;
    }
  }

  /** Split 3 on text[a, b): its matches, and the gaps between them, as pieces. */
  #third(text: string, a: number, b: number, ends: Int32Sink): void {
    let gap = a;
    let p = a;
    while (p < b) {
      const m = this.#match(text, p, b);
      if (m < 0) {
        p += codePointAt(text, p, b) > 0xffff ? 2 : 1;
        continue;
      }
      if (p > gap) ends.push(p);
      ends.push(m);
      p = gap = m;
    }
    if (gap < b) ends.push(b);
  }

  /** End of the run of ASCII letters from `i`. */
  #asciiLetters(text: string, i: number, end: number): number {
    const from = i;
    while (i < end && isAsciiLetter(text.charCodeAt(i))) i++;
    countExamined(i - from + 1);
    return i;
  }

  /** End of the third pattern's match at `p`, or -1. */
  #match(text: string, p: number, end: number): number {
    const t = this.t;
    const c0 = text.charCodeAt(p);
    if (c0 < 0x80) {
      // fast paths for ASCII starts that an ASCII character follows (or the end)
      const b0 = t.bmp[c0] as number;
      const bd = asciiClassAt(t.bmp, text, p + 1, end); // 0: the end, -1: not ASCII
      if ((b0 & LETTER) !== 0) return runOf(t, text, p + 1, end, LETTER | MARK, 0);
      if (bd >= 0 && (bd & LETTER) !== 0) {
        if ((b0 & (PUNCT | SYM)) !== 0) return this.#asciiLetters(text, p + 2, end);
        if (c0 !== 0x0a && c0 !== 0x0d) return runOf(t, text, p + 2, end, LETTER | MARK, 0);
      } else if (bd >= 0) {
        if ((b0 & (PUNCT | SYM)) !== 0) return newlineRun(text, runOf(t, text, p + 1, end, PUNCT | SYM, 0), end, false);
        if (c0 === 0x20 && (bd & (PUNCT | SYM)) !== 0) return newlineRun(text, runOf(t, text, p + 2, end, PUNCT | SYM, 0), end, false);
        if ((b0 & SPACE) !== 0) return spaceMatchEnd(t, text, p, end, true);
      }
    }
    const c = codePointAt(text, p, end);
    const w = c > 0xffff ? 2 : 1;
    const b = classAt(t, text, p, end);
    if (isAsciiPunct(c) && p + 1 < end && isAsciiLetter(text.charCodeAt(p + 1))) return this.#asciiLetters(text, p + 2, end);
    if ((b & (LETTER | MARK)) !== 0) return runOf(t, text, p + w, end, LETTER | MARK, 0);
    if ((b & (LETTER | PUNCT | SYM)) === 0 && c !== 0x0a && c !== 0x0d && p + w < end && (classAt(t, text, p + w, end) & (LETTER | MARK)) !== 0) {
      return runOf(t, text, p + w, end, LETTER | MARK, 0);
    }
    if ((b & (PUNCT | SYM)) !== 0) return newlineRun(text, runOf(t, text, p + w, end, PUNCT | SYM, 0), end, false);
    if (c === 0x20 && p + 1 < end && (classAt(t, text, p + 1, end) & (PUNCT | SYM)) !== 0) {
      return newlineRun(text, runOf(t, text, p + 1, end, PUNCT | SYM, 0), end, false);
    }
    if ((b & SPACE) !== 0) return spaceMatchEnd(t, text, p, end, true);
    return -1;
  }
}
