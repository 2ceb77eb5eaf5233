/**
 * The cl100k family, scanned: Llama 3 / 3.1, GPT-3.5 (cl100k as tokenizer.json spells it), Qwen
 * (single digits), GLM-4, and tiktoken's own cl100k_base (possessive quantifiers, and `\s++$` first:
 * see the constructor):
 *
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
 *   |\s*[\r\n]+|\s+(?!\S)|\s+
 *
 * Every code point starts a match of one alternative, so the matches tile the text and a piece is
 * the match at the end of the previous one. At p, in the alternatives' order:
 * - an apostrophe and a contraction (s, t, m, d, re, ve, ll in any case, and ſ for s);
 * - a letter run, with one code point before it that is no \r, \n, letter or number;
 * - up to `digits` numbers;
 * - a run of "others" (no `\s`, letter, number), one space before it allowed, then any \r\n run;
 * - `\s`: through its run's last \r or \n; else the run, but its last `\s` when a non-space
 *   follows (that one then goes with the next piece), unless the run is that one alone.
 *
 * Layer: encoder.
 */

import { type ClassTable, LETTER, NUM, SPACE } from "./classes.js";
import { asciiClassAt, classAt, codePointAt, contractionAt, countExamined, newlineRun, numbersEnd, runOf, runWithout, spaceMatchEnd } from "./reading.js";
import { type Int32Sink, TableScanner } from "./scanner.js";

export class Cl100kScanner extends TableScanner {
  readonly #digits: number;
  readonly #tail: boolean;

  /**
   * `digits`: the `\p{N}{1,digits}` of the pattern (3; Qwen's `\p{N}` is 1). `tail`: tiktoken's
   * cl100k_base, whose `\s++$` comes before `\s*[\r\n]`: a `\s` run that reaches the end of the
   * input is one piece, newlines and all.
   */
  constructor(family: string, table: ClassTable, digits: number, tail = false) {
    super(family, table);
    this.#digits = digits;
    this.#tail = tail;
  }

  scan(text: string, start: number, end: number, ends: Int32Sink): void {
    const t = this.t;
    const bmp = t.bmp;
    let p = start;
    while (p < end) {
      // fast paths for the common ASCII starts; #next, the general path, gives the same ends
      const c = text.charCodeAt(p);
      let q = -1;
      if (c < 0x80) {
        const b = bmp[c] as number;
        const bd = asciiClassAt(bmp, text, p + 1, end); // 0: the end, -1: not ASCII
        if ((b & LETTER) !== 0) q = this.#letters(text, p + 1, end);
        else if (bd > 0 && (bd & LETTER) !== 0) {
          // a prefix and a letter run (an apostrophe may start a contraction instead)
          if ((b & NUM) === 0 && c !== 0x0a && c !== 0x0d && c !== 0x27) q = this.#letters(text, p + 2, end);
        } else if ((b & NUM) !== 0) {
          q = numbersEnd(t, text, p, end, this.#digits);
        } else if (bd >= 0) {
          // no letter follows
          if ((b & SPACE) === 0) q = newlineRun(text, runWithout(t, text, p + 1, end, LETTER | NUM | SPACE), end, false);
          else if (c === 0x20 && p + 1 < end && (bd & (NUM | SPACE)) === 0) q = newlineRun(text, runWithout(t, text, p + 2, end, LETTER | NUM | SPACE), end, false);
          else q = spaceMatchEnd(t, text, p, end, true, this.#tail);
        }
      }
      if (q < 0) q = this.#next(text, p, end);
      ends.push(q);
      p = q;
    }
  }

  /** End of the letter run from `i`: runOf's loop, inlined (the hottest loop of this scanner). */
  #letters(text: string, i: number, end: number): number {
    const bmp = this.t.bmp;
    const from = i;
    while (i < end) {
      const c = text.charCodeAt(i);
      if (c >= 0xd800) {
        i = runOf(this.t, text, i, end, LETTER, 0);
        break;
      }
      if (((bmp[c] as number) & LETTER) === 0) break;
      i++;
    }
    countExamined(i - from + 1);
    return i;
  }

  #next(text: string, p: number, end: number): number {
    const t = this.t;
    const c = codePointAt(text, p, end);
    const w = c > 0xffff ? 2 : 1;
    const b = classAt(t, text, p, end);
    if (c === 0x27) {
      const n = contractionAt(text, p, end, true);
      if (n > 0) return p + n;
    }
    if ((b & LETTER) !== 0) return runOf(t, text, p + w, end, LETTER, 0);
    const other = (b & (LETTER | NUM | SPACE)) === 0;
    if ((b & NUM) === 0 && c !== 0x0a && c !== 0x0d && p + w < end && (classAt(t, text, p + w, end) & LETTER) !== 0) {
      return runOf(t, text, p + w, end, LETTER, 0);
    }
    if ((b & NUM) !== 0) {
      return numbersEnd(t, text, p, end, this.#digits);
    }
    if (other) return newlineRun(text, runWithout(t, text, p + w, end, LETTER | NUM | SPACE), end, false);
    if (c === 0x20 && p + 1 < end && (classAt(t, text, p + 1, end) & (LETTER | NUM | SPACE)) === 0) {
      return newlineRun(text, runWithout(t, text, p + 1, end, LETTER | NUM | SPACE), end, false);
    }
    return spaceMatchEnd(t, text, p, end, true, this.#tail);
  }
}
