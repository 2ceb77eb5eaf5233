/**
 * SentencePiece's normalizer (normalizer.cc `Normalize`), byte for byte: at each position the
 * longest user-defined symbol is kept as is, else the longest precompiled rule is applied, else
 * one UTF-8 character is copied (a malformed byte becomes U+FFFD); then
 * - `remove_extra_whitespaces`: leading spaces (after rules) dropped, runs of spaces collapsed to
 *   one, trailing spaces dropped;
 * - `add_dummy_prefix`: one space symbol before the text (after it with
 *   `treat_whitespace_as_suffix`), unless the text normalizes to nothing;
 * - `escape_whitespaces`: every " " written as "▁" (U+2581).
 * Only U+0020 counts as a space here; other white space is whatever the rules make of it.
 *
 * Works on UTF-8 bytes (what the models consume). Pure and allocation-light: one output buffer
 * grown as needed.
 *
 * Layer: encoder.
 */

import type { ByteTrie } from "../model/byte-trie.js";
import { oneCharLen } from "../model/byte-trie.js";
import type { SentencePieceNormalizerSpec } from "../model/sentencepiece-model.js";
import { PrecompiledCharsmap } from "./precompiled-charsmap.js";

const SPACE = 0x20;
const ESCAPED_SPACE = Uint8Array.of(0xe2, 0x96, 0x81);
const REPLACEMENT_CHAR = Uint8Array.of(0xef, 0xbf, 0xbd);

const encoder = new TextEncoder();

export interface SentencePieceNormalizerOptions {
  readonly spec: SentencePieceNormalizerSpec;
  /** `trainer_spec.treat_whitespace_as_suffix` (false for a denormalizer). */
  readonly treatWhitespaceAsSuffix: boolean;
  /** The model's USER_DEFINED pieces, which rules never touch (null: none). */
  readonly userDefined: ByteTrie | null;
}

export class SentencePieceNormalizer {
  readonly #spec: SentencePieceNormalizerSpec;
  readonly #suffix: boolean;
  readonly #userDefined: ByteTrie | null;
  readonly #charsmap: PrecompiledCharsmap | null;
  #out = new Uint8Array(256);
  #length = 0;
  // normalizePrefix results: the bytes it yields are src[from, to); it consumed `consumed` input bytes.
  #src: Uint8Array = ESCAPED_SPACE;
  #from = 0;
  #to = 0;

  constructor(options: SentencePieceNormalizerOptions) {
    this.#spec = options.spec;
    this.#suffix = options.treatWhitespaceAsSuffix;
    this.#userDefined = options.userDefined !== null && options.userDefined.size > 0 ? options.userDefined : null;
    this.#charsmap = options.spec.precompiledCharsmap.length > 0 ? new PrecompiledCharsmap(options.spec.precompiledCharsmap) : null;
  }

  /** Normalizes a string; the result is UTF-8 (a fresh copy). */
  normalize(text: string): Uint8Array {
    return this.normalizeBytes(encoder.encode(text));
  }

  /** Normalizes UTF-8 bytes; the result is a fresh copy. */
  normalizeBytes(input: Uint8Array): Uint8Array {
    this.#length = 0;
    const n = input.length;
    if (n === 0) return new Uint8Array(0);
    const spec = this.#spec;
    const removeExtra = spec.removeExtraWhitespaces;
    const escape = spec.escapeWhitespaces;
    let pos = 0;
    if (removeExtra) {
      while (pos < n) {
        const consumed = this.#prefix(input, pos, n);
        if (!(this.#to - this.#from === 1 && this.#src[this.#from] === SPACE)) break;
        pos += consumed;
      }
    }
    if (pos >= n) return new Uint8Array(0);
    if (!this.#suffix && spec.addDummyPrefix) this.#pushSpace(escape);
    let isPrevSpace = removeExtra;
    while (pos < n) {
      const consumed = this.#prefix(input, pos, n);
      const src = this.#src;
      let k = this.#from;
      const to = this.#to;
      if (isPrevSpace) while (k < to && src[k] === SPACE) k++;
      if (k < to) {
        for (; k < to; k++) {
          const b = src[k] as number;
          if (escape && b === SPACE) this.#pushBytes(ESCAPED_SPACE);
          else this.#pushByte(b);
        }
        isPrevSpace = src[to - 1] === SPACE;
      }
      pos += consumed;
      if (!removeExtra) isPrevSpace = false;
    }
    if (removeExtra) {
      const out = this.#out;
      if (escape) {
        while (
          this.#length >= 3 &&
          out[this.#length - 3] === 0xe2 &&
          out[this.#length - 2] === 0x96 &&
          out[this.#length - 1] === 0x81
        ) {
          this.#length -= 3;
        }
      } else {
        while (this.#length >= 1 && out[this.#length - 1] === SPACE) this.#length--;
      }
    }
    if (this.#suffix && spec.addDummyPrefix) this.#pushSpace(escape);
    return this.#out.slice(0, this.#length);
  }

  /** NormalizePrefix: sets src/from/to to what the input at `pos` normalizes to; returns input bytes consumed. */
  #prefix(input: Uint8Array, pos: number, end: number): number {
    if (this.#userDefined !== null) {
      const length = this.#userDefined.longestPrefix(input, pos, end);
      if (length > 0) {
        this.#src = input;
        this.#from = pos;
        this.#to = pos + length;
        return length;
      }
    }
    if (this.#charsmap !== null) {
      const length = this.#charsmap.longestRule(input, pos, end);
      if (length > 0) {
        const r = this.#charsmap.replacement;
        this.#src = r;
        this.#from = 0;
        this.#to = r.length;
        return length;
      }
    }
    const length = validCharLength(input, pos, end);
    if (length === 0) {
      this.#src = REPLACEMENT_CHAR;
      this.#from = 0;
      this.#to = 3;
      return 1;
    }
    this.#src = input;
    this.#from = pos;
    this.#to = pos + length;
    return length;
  }

  #pushSpace(escape: boolean): void {
    if (escape) this.#pushBytes(ESCAPED_SPACE);
    else this.#pushByte(SPACE);
  }

  #pushByte(b: number): void {
    if (this.#length === this.#out.length) this.#grow(1);
    this.#out[this.#length++] = b;
  }

  #pushBytes(bytes: Uint8Array): void {
    if (this.#length + bytes.length > this.#out.length) this.#grow(bytes.length);
    this.#out.set(bytes, this.#length);
    this.#length += bytes.length;
  }

  #grow(extra: number): void {
    const next = new Uint8Array(Math.max(this.#out.length * 2, this.#length + extra));
    next.set(this.#out.subarray(0, this.#length));
    this.#out = next;
  }
}

/**
 * Byte length of the well-formed UTF-8 character at `pos` (sentencepiece's IsValidDecodeUTF8:
 * shortest form, no surrogates, at most U+10FFFF), or 0 when it is malformed or truncated.
 */
export function validCharLength(bytes: Uint8Array, pos: number, end: number): number {
  const b0 = bytes[pos] as number;
  if (b0 < 0x80) return 1;
  const need = oneCharLen(b0);
  if (need === 1 || pos + need > end) return 0;
  const b1 = bytes[pos + 1] as number;
  if ((b1 & 0xc0) !== 0x80) return 0;
  if (need === 2) return b0 >= 0xc2 ? 2 : 0;
  const b2 = bytes[pos + 2] as number;
  if ((b2 & 0xc0) !== 0x80) return 0;
  if (need === 3) {
    const cp = ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
    return cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff) ? 3 : 0;
  }
  if (b0 >= 0xf8) return 0;
  const b3 = bytes[pos + 3] as number;
  if ((b3 & 0xc0) !== 0x80) return 0;
  const cp = ((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f);
  return cp >= 0x10000 && cp <= 0x10ffff ? 4 : 0;
}
