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

import { type ClassTable, HAN, LETTER, LOWERISH, NUM, SPACE, UPPERISH } from "./classes.js";
import { classAt, codePointAt, contractionAt, newlineRun, runOf, runWithout, spaceMatchEnd } from "./reading.js";
import type { Int32Sink, PieceScanner } from "./scanner.js";

export interface O200kOptions {
  /** Kimi: `[\p{Han}]+` first, and Han taken out of both word classes. */
  readonly han: boolean;
  /** `[\r\n/]*` after a run of others (o200k) rather than `[\r\n]*` (Kimi). */
  readonly slash: boolean;
}

export class O200kScanner implements PieceScanner {
  readonly family: string;
  readonly #t: ClassTable;
  readonly #exclude: number;
  readonly #slash: boolean;
  /** Start of the last U run's last code point that is also in W (-1: none), and its width. */
  #lastBoth = -1;
  #lastBothWidth = 1;

  constructor(family: string, table: ClassTable, options: O200kOptions) {
    this.family = family;
    this.#t = table;
    this.#exclude = options.han ? HAN : 0;
    this.#slash = options.slash;
  }

  scan(text: string, start: number, end: number, ends: Int32Sink): void {
    let p = start;
    while (p < end) {
      p = this.#next(text, p, end);
      ends.push(p);
    }
  }

  #next(text: string, p: number, end: number): number {
    const t = this.#t;
    const ex = this.#exclude;
    const c = codePointAt(text, p, end);
    const w = c > 0xffff ? 2 : 1;
    const b = classAt(t, text, p, end);
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
      let q = p + w;
      for (let k = 1; k < 3 && q < end; k++) {
        const d = codePointAt(text, q, end);
        if ((classAt(t, text, q, end) & NUM) === 0) break;
        q += d > 0xffff ? 2 : 1;
      }
      return q;
    }
    if ((b & (LETTER | NUM | SPACE)) === 0) return newlineRun(text, runWithout(t, text, p + w, end, LETTER | NUM | SPACE), end, this.#slash);
    if (c === 0x20 && p + 1 < end && (classAt(t, text, p + 1, end) & (LETTER | NUM | SPACE)) === 0) {
      return newlineRun(text, runWithout(t, text, p + 1, end, LETTER | NUM | SPACE), end, this.#slash);
    }
    return spaceMatchEnd(t, text, p, end, true);
  }

  /** End of the U run from `i`; notes its last code point that is also in W. */
  #upperRun(text: string, i: number, end: number): number {
    const t = this.#t;
    const ex = this.#exclude;
    this.#lastBoth = -1;
    while (i < end) {
      const c = codePointAt(text, i, end);
      const b = classAt(t, text, i, end);
      if ((b & UPPERISH) === 0 || (b & ex) !== 0) break;
      const w = c > 0xffff ? 2 : 1;
      if ((b & LOWERISH) !== 0) {
        this.#lastBoth = i;
        this.#lastBothWidth = w;
      }
      i += w;
    }
    return i;
  }

  /** Where W+ ends after U* backed off from `uEnd` (the last #upperRun's end), or -1. */
  #lowerTail(text: string, uEnd: number, end: number): number {
    const t = this.#t;
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
