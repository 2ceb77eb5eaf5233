/**
 * Where each token of an encoded text came from: [start, end) UTF-16 offsets into the text,
 * rebuilt from the ids:
 *
 * 1. The text is cut into sections at raw added tokens exactly as the tokenizer cuts it
 *    (leftmost-longest); an added-token section is one token covering its own text.
 * 2. Any other section is normalized as the tokenizer normalizes it; its tokens' bytes
 *    concatenate to the UTF-8 of the normalized section. A token's byte length is known from
 *    the vocabulary: byte-level BPE (GPT-2 alphabet: one character per byte), or the token
 *    string's UTF-8 (Metaspace / SentencePiece style), `<0xNN>` byte-fallback tokens one byte,
 *    added tokens their content.
 * 3. Normalized offsets map back to the original text: unchanged when the normalizer leaves the
 *    section as it is (or replaces one UTF-16 unit by one, like ' ' → '▁'); otherwise grapheme by
 *    grapheme (each normalized grapheme maps to the original grapheme it came from, as NFC works
 *    within grapheme clusters).
 *
 * When the byte lengths of a section's tokens do not add up to its normalized text (a normalizer
 * or flag this module does not model), the section's tokens get proportional offsets and the
 * result says `exact: false` — counted, never silent.
 */
import type { Encoder } from "../encoder/types.js";
import { AddedTokenScanner, type AddedTokenSpec } from "./added-tokens.js";

export interface OffsetSource {
  tokenizer: Encoder;
  tokenizerJson: {
    added_tokens: readonly AddedTokenSpec[];
    normalizer?: unknown;
    pre_tokenizer?: unknown;
    decoder?: unknown;
    model?: unknown;
  };
}

export interface TokenOffsets {
  /** Start (UTF-16) of each token. */
  starts: Uint32Array;
  /** End (UTF-16) of each token. */
  ends: Uint32Array;
  /** False when some section's offsets had to be approximated. */
  exact: boolean;
  /** Sections approximated. */
  inexactSections: number;
}

function mentionsType(node: unknown, type: string): boolean {
  if (node === null || typeof node !== "object") return false;
  if ((node as { type?: unknown }).type === type) return true;
  for (const v of Object.values(node as Record<string, unknown>)) {
    if (Array.isArray(v) ? v.some((x) => mentionsType(x, type)) : mentionsType(v, type)) return true;
  }
  return false;
}

const BYTE_FALLBACK = /^<0x[0-9A-Fa-f]{2}>$/;
const utf8 = new TextEncoder();
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

export class OffsetMapper {
  readonly #tok: Encoder;
  readonly #byteLevel: boolean;
  readonly #byteFallback: boolean;
  readonly #addedContent = new Map<number, string>();
  readonly #rawScanner: AddedTokenScanner;
  readonly #normalize: ((s: string) => string) | null;
  readonly #lenCache = new Map<number, number>();

  constructor(src: OffsetSource) {
    this.#tok = src.tokenizer;
    const j = src.tokenizerJson;
    this.#byteLevel = mentionsType(j.pre_tokenizer, "ByteLevel") || mentionsType(j.decoder, "ByteLevel");
    this.#byteFallback = (j.model as { byte_fallback?: boolean } | undefined)?.byte_fallback === true;
    for (const t of j.added_tokens) this.#addedContent.set(t.id, t.content);
    const hasNormalizer = j.normalizer !== null && j.normalizer !== undefined;
    // every raw added token is a section cut, so make them all "boundaries" for this scan
    this.#rawScanner = new AddedTokenScanner(
      j.added_tokens.map((t) => ({ ...t, special: true, lstrip: false, rstrip: false, single_word: false })),
      hasNormalizer,
    );
    const tok = this.#tok;
    this.#normalize = hasNormalizer ? (s) => tok.normalize(s) : null;
  }

  /** Bytes of normalized text a (non-raw-added) token stands for. */
  #byteLength(id: number): number {
    const cached = this.#lenCache.get(id);
    if (cached !== undefined) return cached;
    const added = this.#addedContent.get(id);
    const s = added ?? this.#tok.idToToken(id) ?? "";
    let n: number;
    if (added !== undefined) n = utf8.encode(added).length;
    else if (this.#byteLevel) n = s.length;
    else if (this.#byteFallback && BYTE_FALLBACK.test(s)) n = 1;
    else n = utf8.encode(s).length;
    this.#lenCache.set(id, n);
    return n;
  }

  /** Offsets of `ids`, the encoding of `text` (add_special_tokens=False). */
  offsets(text: string, ids: ArrayLike<number>): TokenOffsets {
    const starts = new Uint32Array(ids.length);
    const ends = new Uint32Array(ids.length);
    let inexact = 0;
    let t = 0; // next token
    const raw = this.#rawScanner.scan(text);
    let pos = 0;
    const section = (from: number, to: number) => {
      if (to <= from) return;
      const piece = text.slice(from, to);
      const norm = this.#normalize === null ? piece : this.#normalize(piece);
      if (norm.length === 0) return;
      const bytes = utf8.encode(norm).length;
      // consume tokens covering `bytes`
      const first = t;
      let sum = 0;
      while (t < ids.length && sum < bytes) sum += this.#byteLength(ids[t++] as number);
      if (sum !== bytes) {
        inexact++;
        spread(first, t, from, to);
        return;
      }
      const map = alignment(piece, norm, this.#normalize);
      if (map === null) {
        inexact++;
        spread(first, t, from, to);
        return;
      }
      // normalized byte offset → normalized UTF-16 offset → original UTF-16 offset
      // A token holding only some bytes of a character spans the whole character (as Rust's
      // offsets do): start = the character of its first byte, end = after its last byte's.
      const b2u = byteToUnit(norm);
      let b = 0;
      for (let k = first; k < t; k++) {
        const len = this.#byteLength(ids[k] as number);
        starts[k] = from + (map[b2u[b] as number] as number);
        b += len;
        const lastUnit = b2u[b - 1] as number;
        const cp = norm.codePointAt(lastUnit) as number;
        ends[k] = from + (map[len === 0 ? (b2u[b] as number) : lastUnit + (cp >= 0x10000 ? 2 : 1)] as number);
      }
    };
    const spread = (first: number, last: number, from: number, to: number) => {
      const n = last - first;
      for (let k = 0; k < n; k++) {
        starts[first + k] = from + Math.floor(((to - from) * k) / n);
        ends[first + k] = from + Math.floor(((to - from) * (k + 1)) / n);
      }
    };
    for (const m of raw) {
      section(pos, m.start);
      if (t < ids.length && ids[t] === m.id) {
        starts[t] = m.start;
        ends[t] = m.end;
        t++;
      } else inexact++;
      pos = m.end;
    }
    section(pos, text.length);
    if (t !== ids.length) {
      inexact++;
      for (; t < ids.length; t++) starts[t] = ends[t] = text.length;
    }
    return { starts, ends, exact: inexact === 0, inexactSections: inexact };
  }
}

/** For each UTF-8 byte offset of `s` (0..len), the UTF-16 offset of the character holding it. */
function byteToUnit(s: string): Uint32Array {
  const out = new Uint32Array(utf8.encode(s).length + 1);
  let b = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.codePointAt(i) as number;
    const n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    for (let k = 0; k < n; k++) out[b++] = i;
    if (c >= 0x10000) i++;
  }
  out[b] = s.length;
  return out;
}

/**
 * For each UTF-16 offset of the normalized text (0..len), the offset in the original it comes
 * from; null when the normalized text cannot be aligned grapheme by grapheme.
 */
function alignment(orig: string, norm: string, normalize: ((s: string) => string) | null): Uint32Array | null {
  const out = new Uint32Array(norm.length + 1);
  if (orig.length === norm.length || normalize === null) {
    // same length: unchanged, or one-for-one replacements such as ' ' → '▁'
    if (orig.length !== norm.length) return null;
    for (let i = 0; i <= norm.length; i++) out[i] = i;
    return out;
  }
  let n = 0;
  for (const g of graphemes.segment(orig)) {
    const ng = normalize(g.segment);
    // the normalizer must act grapheme by grapheme for this alignment to hold (NFC does)
    if (norm.substr(n, ng.length) !== ng) return null;
    for (let k = 0; k < ng.length; k++) out[n + k] = g.index;
    n += ng.length;
  }
  if (n !== norm.length) return null;
  out[n] = orig.length;
  return out;
}
