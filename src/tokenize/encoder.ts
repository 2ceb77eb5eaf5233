/**
 * Encoding with add_special_tokens=False, whole or segmented at boundary tokens.
 *
 * `encodeWhole` is the reference path: one call of the encoder over the whole text, exactly what
 * a full render + tokenize does.
 *
 * `encodeFrom` encodes `text[from:]` piece by piece, cutting at every boundary token
 * (see added-tokens.ts) and recording, for each cut, the UTF-16 offset just after the token and
 * how many tokens precede that offset. Each piece after a cut is encoded with the boundary
 * token's own text in front and its id dropped from the result, so the piece is tokenized as a
 * non-first section, exactly as inside the whole text (pre-tokenizers and normalizers that treat
 * the start of the input differently — Metaspace `prepend_scheme: first`, ByteLevel
 * `add_prefix_space` — see the same context they see in a whole-text encode); the boundary token
 * must come back as its own first id, else the piece is refused (SeamError).
 *
 * Layer: tokenize.
 */
import type { Encoder } from "../encoder/types.js";
import { U32List } from "../encoder/u32-list.js";
import { DeltatokError } from "../errors.js";
import { AddedTokenScanner, type AddedTokenSpec } from "./added-tokens.js";

export { U32List };

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
  tokenizer: Encoder;
  tokenizerJson: { added_tokens: readonly AddedTokenSpec[]; normalizer?: unknown };
}

export class TokenEncoder {
  readonly #tok: Encoder;
  readonly #scratch = new U32List(1024);
  readonly scanner: AddedTokenScanner;

  constructor(source: EncoderSource) {
    this.#tok = source.tokenizer;
    const hasNormalizer = source.tokenizerJson.normalizer !== null && source.tokenizerJson.normalizer !== undefined;
    this.scanner = new AddedTokenScanner(source.tokenizerJson.added_tokens, hasNormalizer);
  }

  /** Token ids of `text`, add_special_tokens=False, in one call: the reference path. */
  encodeWhole(text: string): number[] {
    try {
      return this.#tok.encode(text);
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
   * @param stopAbove stop once more than this many tokens are appended (after the piece or
   *   boundary token that passes it): the result is then more than `stopAbove` but not the count.
   *   Pieces are encoded independently, so the pieces not encoded can only add tokens.
   */
  encodeFrom(
    text: string,
    from: number,
    seamId: number | null,
    tokenBase: number,
    ids: U32List | null,
    bounds: Boundaries,
    charBase = 0,
    stopAbove = Infinity,
  ): number {
    const matches = this.scanner.scan(text, from);
    let count = 0;
    let pos = from;
    let seam = seamId;
    for (let m = 0; m <= matches.length; m++) {
      const match = matches[m];
      const pieceEnd = match === undefined ? text.length : match.start;
      if (pieceEnd > pos) count += this.#encodePiece(text.slice(pos, pieceEnd), seam, ids);
      if (match === undefined || count > stopAbove) break;
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
    const out = this.#scratch;
    out.clear();
    let skip = 0;
    try {
      if (seam === null) this.#tok.encodeInto(piece, out);
      else {
        const seamText = this.scanner.contentOf(seam);
        if (seamText === undefined) throw new DeltatokError("DT_INTERNAL", `seam token ${seam} is not a raw added token`);
        this.#tok.encodeInto(seamText + piece, out);
        if (out.length === 0 || out.data[0] !== seam) {
          // The tokenizer did not keep the boundary token whole: the invariant this module rests
          // on does not hold for this tokenizer. Callers treat this as a fallback, never as a result.
          throw new SeamError(seam, out.length === 0 ? undefined : out.data[0]);
        }
        skip = 1;
      }
    } catch (e) {
      if (e instanceof SeamError || e instanceof DeltatokError) throw e;
      throw new DeltatokError("DT_TOKENIZE_FAILED", `tokenizer failed: ${(e as Error)?.message ?? e}`, { cause: e });
    }
    if (ids !== null) ids.pushAll(out.data, skip, out.length);
    return out.length - skip;
  }
}

/** Thrown when a boundary token is not tokenized as itself at a seam (never expected). */
export class SeamError extends Error {
  constructor(expected: number, got: number | undefined) {
    super(`seam token ${expected} was tokenized as ${got}`);
    this.name = "SeamError";
  }
}
