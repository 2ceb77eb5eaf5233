/**
 * Encoding with add_special_tokens=False, whole or segmented at boundary tokens.
 *
 * `encodeWhole` is the reference path: one call into @huggingface/tokenizers over the whole
 * text, exactly what a full render + tokenize does.
 *
 * `encodeFrom` encodes `text[from:]` piece by piece, cutting at every boundary token
 * (see added-tokens.ts) and recording, for each cut, the UTF-16 offset just after the token and
 * how many tokens precede that offset. Each piece after a cut is encoded with the boundary
 * token's own text in front and its id dropped from the result, so the piece is tokenized as a
 * non-first section, exactly as inside the whole text (pre-tokenizers and normalizers that treat
 * the start of the input differently — Metaspace `prepend_scheme: first`, ByteLevel
 * `add_prefix_space` — see the same context they see in a whole-text encode).
 */
import type { Tokenizer } from "@huggingface/tokenizers";
import { DeltatokError } from "../errors.js";
import { AddedTokenScanner, type AddedTokenSpec } from "./added-tokens.js";

/** A growable list of 32-bit values (token ids or offsets). */
export class U32List {
  data: Uint32Array;
  length = 0;
  constructor(capacity = 256) {
    this.data = new Uint32Array(Math.max(16, capacity));
  }
  push(v: number): void {
    if (this.length === this.data.length) this.#grow(this.length + 1);
    this.data[this.length++] = v;
  }
  pushAll(src: ArrayLike<number>, from = 0, to = src.length): void {
    const n = to - from;
    if (n <= 0) return;
    if (this.length + n > this.data.length) this.#grow(this.length + n);
    if (src instanceof Uint32Array) this.data.set(src.subarray(from, to), this.length);
    else for (let i = from; i < to; i++) this.data[this.length + i - from] = src[i] as number;
    this.length += n;
  }
  /** An exact-size copy. */
  toArray(): Uint32Array {
    return this.data.slice(0, this.length);
  }
  #grow(min: number): void {
    let cap = this.data.length * 2;
    while (cap < min) cap *= 2;
    const d = new Uint32Array(cap);
    d.set(this.data.subarray(0, this.length));
    this.data = d;
  }
}

/** Cut points in a rendered text: parallel arrays, ascending. */
export interface Boundaries {
  /** UTF-16 offset just after each boundary token. */
  ends: U32List;
  /** Number of tokens up to and including each boundary token. */
  tokenCounts: U32List;
  /** Id of each boundary token. */
  ids: U32List;
}

export function newBoundaries(capacity = 64): Boundaries {
  return { ends: new U32List(capacity), tokenCounts: new U32List(capacity), ids: new U32List(capacity) };
}

/** What the encoder needs from a loaded tokenizer. */
export interface EncoderSource {
  tokenizer: Tokenizer;
  tokenizerJson: { added_tokens: readonly AddedTokenSpec[]; normalizer?: unknown };
}

export class TokenEncoder {
  readonly #tok: Tokenizer;
  readonly scanner: AddedTokenScanner;

  constructor(source: EncoderSource) {
    this.#tok = source.tokenizer;
    const hasNormalizer = source.tokenizerJson.normalizer !== null && source.tokenizerJson.normalizer !== undefined;
    this.scanner = new AddedTokenScanner(source.tokenizerJson.added_tokens, hasNormalizer);
  }

  /** Token ids of `text`, add_special_tokens=False, in one call: the reference path. */
  encodeWhole(text: string): number[] {
    try {
      return this.#tok.encode(text, { add_special_tokens: false }).ids;
    } catch (e) {
      throw new DeltatokError("DT_TOKENIZE_FAILED", `tokenizer failed: ${(e as Error)?.message ?? e}`, { cause: e });
    }
  }

  /**
   * Encodes `text[from:]` segmented at boundary tokens, appending ids to `ids` (when given) and
   * cuts to `bounds`. Returns the number of tokens appended.
   *
   * @param seamId the id of the boundary token that ends exactly where `text[from:]` starts in
   *   the whole text, or null when `text[from:]` starts the whole text.
   * @param tokenBase number of tokens before `from` in the whole text.
   * @param charBase offset of `text[0]` in the whole text (cut offsets in `bounds` are absolute).
   */
  encodeFrom(
    text: string,
    from: number,
    seamId: number | null,
    tokenBase: number,
    ids: U32List | null,
    bounds: Boundaries,
    charBase = 0,
  ): number {
    const matches = this.scanner.scan(text, from);
    let count = 0;
    let pos = from;
    let seam = seamId;
    for (let m = 0; m <= matches.length; m++) {
      const match = matches[m];
      const pieceEnd = match === undefined ? text.length : match.start;
      if (pieceEnd > pos) count += this.#encodePiece(text.slice(pos, pieceEnd), seam, ids);
      if (match === undefined) break;
      // the boundary token is its own section: its id, no encoding needed
      if (ids !== null) ids.push(match.id);
      count++;
      bounds.ends.push(charBase + match.end);
      bounds.tokenCounts.push(tokenBase + count);
      bounds.ids.push(match.id);
      pos = match.end;
      seam = match.id;
    }
    return count;
  }

  #encodePiece(piece: string, seam: number | null, ids: U32List | null): number {
    if (seam === null) {
      const out = this.encodeWhole(piece);
      if (ids !== null) ids.pushAll(out);
      return out.length;
    }
    const seamText = this.scanner.contentOf(seam);
    if (seamText === undefined) throw new DeltatokError("DT_INTERNAL", `seam token ${seam} is not a raw added token`);
    const out = this.encodeWhole(seamText + piece);
    if (out[0] !== seam) {
      // The tokenizer did not keep the boundary token whole: the invariant this module rests
      // on does not hold for this tokenizer. Callers treat this as a fallback, never as a result.
      throw new SeamError(seam, out[0]);
    }
    if (ids !== null) ids.pushAll(out, 1);
    return out.length - 1;
  }
}

/** Thrown when a boundary token is not tokenized as itself at a seam (never expected). */
export class SeamError extends Error {
  constructor(expected: number, got: number | undefined) {
    super(`seam token ${expected} was tokenized as ${got}`);
    this.name = "SeamError";
  }
}
