/**
 * SentencePiece's precompiled normalization rules (`NormalizerSpec.precompiled_charsmap`, also
 * what tokenizers' `Precompiled` normalizer holds): a darts-clone double-array trie whose keys are
 * input byte strings and whose values are offsets of NUL-terminated replacement strings.
 *
 * Blob layout (little-endian): `u32 trieSize`, `trieSize` bytes of 32-bit double-array units,
 * then the replacement strings. A unit packs: bit 8 = has a leaf child, bits 0–7 (+ bit 31) =
 * label, bits 10–31 shifted by 0 or 8 (bit 9) = offset to the children; a leaf unit holds the
 * value in bits 0–30 with bit 31 set, so its label never equals a byte.
 *
 * `longestRule` is darts' commonPrefixSearch keeping the longest match, as sentencepiece's
 * normalizer does; `shortestRule` keeps the first, as the Rust crate's `Precompiled` does.
 * Every index is bounds-checked: a unit index outside the trie ends the search (no match there),
 * and a replacement offset outside the strings is refused with DT_TOKENIZER_INVALID.
 *
 * Layer: encoder. Imports only `errors`.
 */

import { DeltatokError } from "../../errors.js";

export class PrecompiledCharsmap {
  readonly #units: Uint32Array;
  readonly #strings: Uint8Array;
  /** Cached replacement for each rule value (offset into the strings). */
  readonly #replacements = new Map<number, Uint8Array>();
  /** Out parameter of `longestRule`: the replacement bytes of the match. */
  replacement: Uint8Array = new Uint8Array(0);

  /** Decodes a blob (already checked by the model reader: header present, trie fits). */
  constructor(blob: Uint8Array) {
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const trieSize = blob.length >= 4 ? view.getUint32(0, true) : 0;
    if (blob.length <= 4 || trieSize > blob.length - 4) {
      throw new DeltatokError("DT_TOKENIZER_INVALID", "the precompiled charsmap is truncated");
    }
    const unitCount = Math.floor(trieSize / 4);
    const units = new Uint32Array(unitCount);
    for (let i = 0; i < unitCount; i++) units[i] = view.getUint32(4 + 4 * i, true);
    this.#units = units;
    this.#strings = blob.slice(4 + trieSize);
  }

  /**
   * Length of the longest rule matching a prefix of `bytes[start, end)` (0 when none does);
   * on a match `replacement` holds what it normalizes to (possibly empty).
   */
  longestRule(bytes: Uint8Array, start: number, end: number): number {
    const units = this.#units;
    const n = units.length;
    if (n === 0) return 0;
    let nodePos = offsetOf(units[0] as number);
    let bestLength = 0;
    let bestValue = 0;
    for (let i = start; i < end; i++) {
      const c = bytes[i] as number;
      nodePos = (nodePos ^ c) >>> 0;
      if (nodePos >= n) break;
      const unit = units[nodePos] as number;
      if (((unit & 0x800000ff) >>> 0) !== c) break;
      nodePos = (nodePos ^ offsetOf(unit)) >>> 0;
      if (((unit >>> 8) & 1) === 1) {
        if (nodePos >= n) break;
        bestLength = i + 1 - start;
        bestValue = (units[nodePos] as number) & 0x7fffffff;
      }
    }
    if (bestLength > 0) this.replacement = this.#replacementAt(bestValue);
    return bestLength;
  }

  /**
   * Length of the shortest rule matching a prefix of `bytes[start, end)` (0 when none does; the
   * search stops at a NUL byte), with `replacement` set on a match: the first result of darts'
   * commonPrefixSearch, which the Rust crate's `Precompiled::transform` takes.
   */
  shortestRule(bytes: Uint8Array, start: number, end: number): number {
    const units = this.#units;
    const n = units.length;
    if (n === 0) return 0;
    let nodePos = offsetOf(units[0] as number);
    for (let i = start; i < end; i++) {
      const c = bytes[i] as number;
      if (c === 0) return 0;
      nodePos = (nodePos ^ c) >>> 0;
      if (nodePos >= n) return 0;
      const unit = units[nodePos] as number;
      if (((unit & 0x800000ff) >>> 0) !== c) return 0;
      nodePos = (nodePos ^ offsetOf(unit)) >>> 0;
      if (((unit >>> 8) & 1) === 1) {
        if (nodePos >= n) return 0;
        this.replacement = this.#replacementAt((units[nodePos] as number) & 0x7fffffff);
        return i + 1 - start;
      }
    }
    return 0;
  }

  #replacementAt(offset: number): Uint8Array {
    const cached = this.#replacements.get(offset);
    if (cached !== undefined) return cached;
    const strings = this.#strings;
    if (offset >= strings.length) {
      throw new DeltatokError(
        "DT_TOKENIZER_INVALID",
        `the precompiled charsmap points at replacement offset ${offset}, past its ${strings.length} bytes of strings`,
      );
    }
    let e = offset;
    while (e < strings.length && strings[e] !== 0) e++;
    const out = strings.subarray(offset, e);
    this.#replacements.set(offset, out);
    return out;
  }
}

function offsetOf(unit: number): number {
  return ((unit >>> 10) << ((unit & 0x200) >>> 6)) >>> 0;
}
