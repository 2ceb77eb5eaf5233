/**
 * The o200k family, scanned: GPT-4o and gpt-oss (tokenizer.json and tiktoken's o200k_base), and
 * Kimi K2 (`han`: a Han run first, Han out of the letter classes, `[\r\n]*` after others):
 *
 *   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...|'d)?
 *   |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...|'d)?
 *   |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *
 * The matches tile the text (cl100k.ts says why). Call the first word class U, the second W; Lm,
 * Lo and marks are in both. The first alternative, from i (after the prefix, or at p without it):
 * greedy U* backs off until W+ can start, so it ends after the W run at the end of the U run when
 * one follows it, else right after the last character of the U run that is also in W, else fails;
 * then a contraction may follow. The prefix is tried first (it is taken when it can be), the bare
 * start second (it differs only on a mark, which is in the prefix class and in U and W). The second
 * alternative (the whole U run, then the W run after it) is tried only when the first fails both
 * ways. Each start's U run is read once.
 *
 * Layer: encoder.
 */

import { type ClassTable, classOf, HAN, LETTER, LL, LOWERISH, LU, NUM, SPACE, UPPERISH } from "./classes.js";
import { asciiClassAt, classAt, codePointAt, contractionAt, countExamined, newlineRun, numbersEnd, runOf, runWithout, spaceMatchEnd } from "./reading.js";
import { type Int32Sink, TableScanner } from "./scanner.js";

export interface O200kOptions {
  /** Kimi: `[\p{Han}]+` first, and Han taken out of both word classes. */
  readonly han: boolean;
  /** `[\r\n/]*` after a run of others (o200k) rather than `[\r\n]*` (Kimi). */
  readonly slash: boolean;
}

export class O200kScanner extends TableScanner {
  readonly #exclude: number;
  readonly #slash: boolean;
  /** Start of the last U run's last code point that is also in W (-1: none), and its width. */
  #lastBoth = -1;
  #lastBothWidth = 1;

  constructor(family: string, table: ClassTable, options: O200kOptions) {
    super(family, table);
    this.#exclude = options.han ? HAN : 0;
    this.#slash = options.slash;
  }

  scan(text: string, start: number, end: number, ends: Int32Sink): void {
    const bmp = this.t.bmp;
    let p = start;
    while (p < end) {
      // fast paths for the common ASCII starts; #next, the general path, gives the same ends
      const c = text.charCodeAt(p);
      let q = -1;
      if (c < 0x80) {
        const b = bmp[c] as number;
        const bd = asciiClassAt(bmp, text, p + 1, end); // 0: the end, -1: not ASCII
        if ((b & LL) !== 0) q = this.#lowerWord(text, p + 1, end);
        else if (bd > 0 && (bd & LL) !== 0) {
          // an uppercase letter, or a prefix, then a lowercase one
          if ((b & LU) !== 0 || (b & (NUM | SPACE)) === 0 || c === 0x20 || c === 0x09) q = this.#lowerWord(text, p + 2, end);
        } else if ((b & LU) !== 0) {
          if (bd >= 0 && (bd & LETTER) === 0) q = this.#contraction(text, p + 1, end); // alone: the second alternative
        } else if (c === 0x20) {
          if (bd >= 0 && (bd & (LETTER | NUM | SPACE)) === 0 && p + 1 < end) {
            q = newlineRun(text, runWithout(this.t, text, p + 2, end, LETTER | NUM | SPACE), end, this.#slash);
          } else if (bd >= 0 && (bd & LU) === 0) q = spaceMatchEnd(this.t, text, p, end, true);
          else if (bd > 0 && (bd & LU) !== 0 && p + 2 < end) {
            const e = text.charCodeAt(p + 2);
            const be = e < 0x80 ? (bmp[e] as number) : -1;
            if (be >= 0 && (be & LL) !== 0) q = this.#lowerWord(text, p + 3, end);
            else if (be >= 0 && (be & LETTER) === 0) q = this.#contraction(text, p + 2, end);
          }
        } else if ((b & SPACE) !== 0) {
          if (c === 0x0a || c === 0x0d || (bd >= 0 && (bd & LETTER) === 0)) q = spaceMatchEnd(this.t, text, p, end, true);
        } else if ((b & NUM) !== 0) {
          q = numbersEnd(this.t, text, p, end, 3);
        } else if (bd >= 0 && (bd & LETTER) === 0) {
          // an other that no letter follows: the run of others, and the newlines and slashes after it
          q = newlineRun(text, runWithout(this.t, text, p + 1, end, LETTER | NUM | SPACE), end, this.#slash);
        }
      }
      if (q < 0) q = this.#next(text, p, end);
      ends.push(q);
      p = q;
    }
  }

  /** The W run from `i` (its first code point read at the caller's), then a contraction. */
  #lowerWord(text: string, i: number, end: number): number {
    // runOf's loop, inlined: the hottest loop of this scanner
    const bmp = this.t.bmp;
    const ex = this.#exclude;
    const from = i;
    while (i < end) {
      const c = text.charCodeAt(i);
      if (c >= 0xd800) {
        i = runOf(this.t, text, i, end, LOWERISH, ex);
        break;
      }
      const b = bmp[c] as number;
      if ((b & LOWERISH) === 0 || (b & ex) !== 0) break;
      i++;
    }
    countExamined(i - from + 1);
    return this.#contraction(text, i, end);
  }

  #next(text: string, p: number, end: number): number {
    const t = this.t;
    const ex = this.#exclude;
    const c = codePointAt(text, p, end);
    const w = c > 0xffff ? 2 : 1;
    const b = c < 0x10000 ? (t.bmp[c] as number) : classOf(t, c);
    countExamined(1);
    if ((b & ex) !== 0) return runOf(t, text, p + w, end, HAN, 0);
    const prefix = (b & (LETTER | NUM)) === 0 && c !== 0x0a && c !== 0x0d;
    const inU = (b & UPPERISH) !== 0 && (b & ex) === 0;
    const inW = (b & LOWERISH) !== 0 && (b & ex) === 0;
    // first alternative, with the prefix, then without
    let uEndPrefixed = -1;
    let uEndBare = -1;
    if (prefix && p + w < end) {
      uEndPrefixed = this.#upperRun(text, p + w, end);
      const r = this.#lowerTail(text, uEndPrefixed, end);
      if (r >= 0) return this.#contraction(text, r, end);
    }
    if (inU || inW) {
      uEndBare = this.#upperRun(text, p, end);
      const r = this.#lowerTail(text, uEndBare, end);
      if (r >= 0) return this.#contraction(text, r, end);
    }
    // second alternative: U+ W*
    if (uEndPrefixed > p + w) return this.#contraction(text, runOf(t, text, uEndPrefixed, end, LOWERISH, ex), end);
    if (uEndBare > p) return this.#contraction(text, runOf(t, text, uEndBare, end, LOWERISH, ex), end);
    if ((b & NUM) !== 0) {
      return numbersEnd(t, text, p, end, 3);
    }
    if ((b & (LETTER | NUM | SPACE)) === 0) return newlineRun(text, runWithout(t, text, p + w, end, LETTER | NUM | SPACE), end, this.#slash);
    if (c === 0x20 && p + 1 < end && (classAt(t, text, p + 1, end) & (LETTER | NUM | SPACE)) === 0) {
      return newlineRun(text, runWithout(t, text, p + 1, end, LETTER | NUM | SPACE), end, this.#slash);
    }
    return spaceMatchEnd(t, text, p, end, true);
  }

  /** End of the U run from `i`; notes its last code point that is also in W. */
  #upperRun(text: string, i: number, end: number): number {
    const t = this.t;
    const ex = this.#exclude;
    const from = i;
    let lastBoth = -1;
    let lastBothWidth = 1;
    while (i < end) {
      const c = text.charCodeAt(i);
      let b: number;
      let w = 1;
      if (c < 0xd800) b = t.bmp[c] as number;
      else {
        const cp = codePointAt(text, i, end);
        b = classOf(t, cp);
        if (cp > 0xffff) w = 2;
      }
      if ((b & UPPERISH) === 0 || (b & ex) !== 0) break;
      if ((b & LOWERISH) !== 0) {
        lastBoth = i;
        lastBothWidth = w;
      }
      i += w;
    }
    countExamined(i - from + 1);
    this.#lastBoth = lastBoth;
    this.#lastBothWidth = lastBothWidth;
    return i;
  }

  /** Where W+ ends after U* backed off from `uEnd` (the last #upperRun's end), or -1. */
  #lowerTail(text: string, uEnd: number, end: number): number {
    const t = this.t;
    const ex = this.#exclude;
    if (uEnd < end) {
      const b = classAt(t, text, uEnd, end);
      if ((b & LOWERISH) !== 0 && (b & ex) === 0) return runOf(t, text, uEnd, end, LOWERISH, ex);
    }
    return this.#lastBoth >= 0 ? this.#lastBoth + this.#lastBothWidth : -1;
  }

  #contraction(text: string, i: number, end: number): number {
    return i < end && text.charCodeAt(i) === 0x27 ? i + contractionAt(text, i, end, true) : i;
  }
}
