/**
 * Kimi's long-text rule (tokenization_kimi.py `encode`): before tiktoken runs, the text is cut
 * into slices of at most 400,000 characters, and each slice wherever a run of white space or of
 * non-white space would exceed 25,000 characters; each piece is encoded on its own, so a
 * pre-tokenizer match never crosses a cut. Characters are Unicode code points and white space is
 * Python's `str.isspace()`, as the Python code counts them. An empty text has no pieces.
 *
 * The cuts depend only on the text given to `encode`; a caller that splits text at special
 * tokens first (transformers' slow path) applies the rule to each part.
 *
 * Layer: encoder. Imports `template/jinja/pystr` (Python's `str.isspace`).
 */

import { isPySpace } from "../../template/jinja/pystr.js";

/** Slice size in code points (`TIKTOKEN_MAX_ENCODE_CHARS`). */
export const KIMI_MAX_ENCODE_CHARS = 400_000;
/** Longest run of white space or non-white space kept in one piece (`MAX_NO_WHITESPACES_CHARS`). */
export const KIMI_MAX_RUN_CHARS = 25_000;

/**
 * The pieces Kimi encodes separately, as `[start, end)` UTF-16 offsets into `text`, in order
 * and covering it. `maxChars` / `maxRun` default to Kimi's constants (smaller values for tests).
 */
export function kimiChunks(text: string, maxChars = KIMI_MAX_ENCODE_CHARS, maxRun = KIMI_MAX_RUN_CHARS): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const n = text.length;
  let pos = 0;
  while (pos < n) {
    // One slice: up to maxChars code points from pos.
    const sliceStart = pos;
    let runLength = 0;
    let runIsSpace = isPySpace(text.codePointAt(pos) as number);
    let pieceStart = pos;
    let chars = 0;
    while (pos < n && chars < maxChars) {
      const cp = text.codePointAt(pos) as number;
      const space = isPySpace(cp);
      if (space !== runIsSpace) {
        runLength = 1;
        runIsSpace = space;
      } else {
        runLength++;
        if (runLength > maxRun) {
          out.push([pieceStart, pos]);
          pieceStart = pos;
          runLength = 1;
        }
      }
      pos += cp > 0xffff ? 2 : 1;
      chars++;
    }
    out.push([pieceStart, pos]);
    if (pos === sliceStart) break;
  }
  return out;
}
