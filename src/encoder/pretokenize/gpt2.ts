/**
 * The GPT-2 family, scanned: the ByteLevel pre-tokenizer's built-in pattern (Claude's tokenizer,
 * every ByteLevel with `use_regex`), and tiktoken's r50k_base / p50k_base (possessive quantifiers
 * and `\s++$|...|\s`, the same pieces):
 *
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *
 * The matches tile the text. At p: an apostrophe and a contraction (case-sensitive); else one
 * optional space (U+0020 only) and the run of the class of the next code point (letters, numbers,
 * or others: no `\s`, letter or number); else `\s`: the run when it reaches the end of the input,
 * else the run but its last `\s` (which then leads the next piece), unless that is all of it.
 *
 * Layer: encoder.
 */

import { LETTER, NUM, SPACE } from "./classes.js";
import { classAt, codePointAt, contractionAt, runOf, runWithout, spaceMatchEnd } from "./reading.js";
import { type Int32Sink, TableScanner } from "./scanner.js";

/** The ByteLevel pre-tokenizer's pattern (tokenizers, pre_tokenizers/byte_level.rs). */
export const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

export class Gpt2Scanner extends TableScanner {

  scan(text: string, start: number, end: number, ends: Int32Sink): void {
    const t = this.t;
    const bmp = t.bmp;
    let p = start;
    while (p < end) {
      // fast paths for the common ASCII starts; #next, the general path, gives the same ends
      const c = text.charCodeAt(p);
      let q = -1;
      if (c < 0x80 && c !== 0x27) {
        let b = bmp[c] as number;
        let i = p;
        if (c === 0x20 && p + 1 < end) {
          const d = text.charCodeAt(p + 1);
          const bd = d < 0x80 ? (bmp[d] as number) : -1;
          if (bd >= 0 && (bd & SPACE) === 0) {
            i = p + 1;
            b = bd;
          } else if (bd < 0) b = -1;
        }
        if (b < 0) q = -1;
        else if ((b & LETTER) !== 0) q = runOf(t, text, i + 1, end, LETTER, 0);
        else if ((b & NUM) !== 0) q = runOf(t, text, i + 1, end, NUM, 0);
        else if ((b & SPACE) === 0) q = runWithout(t, text, i + 1, end, LETTER | NUM | SPACE);
        else q = spaceMatchEnd(t, text, p, end, false);
      }
      if (q < 0) q = this.#next(text, p, end);
      ends.push(q);
      p = q;
    }
  }

  #next(text: string, p: number, end: number): number {
    const t = this.t;
    const c = codePointAt(text, p, end);
    if (c === 0x27) {
      const n = contractionAt(text, p, end, false);
      if (n > 0) return p + n;
    }
    let i = p;
    let b = classAt(t, text, p, end);
    if (c === 0x20 && p + 1 < end) {
      const next = classAt(t, text, p + 1, end);
      if ((next & SPACE) === 0) {
        i = p + 1;
        b = next;
      }
    }
    if ((b & LETTER) !== 0) return runOf(t, text, i, end, LETTER, 0);
    if ((b & NUM) !== 0) return runOf(t, text, i, end, NUM, 0);
    if ((b & SPACE) === 0) return runWithout(t, text, i, end, LETTER | NUM | SPACE);
    return spaceMatchEnd(t, text, p, end, false);
  }
}
