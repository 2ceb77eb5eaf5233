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
import { spaceMarkPredecessors, splitAtSpaceMarks } from "./space-mark.js";

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

// ---- tokenizer tuning -----------------------------------------------------------------------
//
// Three pieces of @huggingface/tokenizers' pipeline dominate what an encode allocates and
// spends outside the actual merging (src/tokenize/README.md, "Tuning"; figures in bench/README.md):
//
// - the ByteLevel pre-tokenizer turns every pre-token into bytes with `TextEncoder.encode`, a
//   fresh off-heap ArrayBuffer per pre-token (malloc, registration, a background sweep, free),
//   then maps them with `Array.from`, one iterator result object per byte, and joins the chars;
// - the BPE model memoizes `bpe(word)` in an LRU built on a Map whose every hit deletes and
//   re-inserts the key (four hash operations and a tombstone; Map.set alone was ~16% of a worker's
//   CPU on ISL replay).
//
// All are pure functions of their input, so equivalent stand-ins give the same ids: a text
// encoder that writes into one scratch buffer and hands out a (non-iterable, so Array.from reads
// it by index) view of exactly the encoded bytes, consumed before the next call; the same split
// and byte mapping with the mapped form of short pre-tokens memoized; and a two-generation memo
// for BPE (hits are one lookup; a full generation becomes the old one). They are installed only
// into components whose shape is recognized, and only after a probe encodes the same ids with and
// without them; otherwise the tokenizer is left as it was. The tokenizer object is changed in
// place (it is shared by the engines of one thread), once.

const tuned = new WeakMap<object, boolean>();

/** A TextEncoder stand-in whose result views one scratch buffer: valid until the next call. */
class ScratchUtf8 {
  readonly #te = new TextEncoder();
  readonly #buf = new Uint8Array(1 << 16);
  readonly #views: Uint8Array[] = [];

  encode(s: string): Uint8Array {
    // UTF-8 takes at most 3 bytes per UTF-16 unit, so a short string always fits whole.
    if (s.length * 3 > this.#buf.length) return this.#te.encode(s);
    return this.#view(this.#te.encodeInto(s, this.#buf).written);
  }

  #view(n: number): Uint8Array {
    let v = this.#views[n];
    if (v === undefined) {
      v = this.#buf.subarray(0, n);
      // not iterable: Array.from then reads indices instead of creating an iterator result per byte
      Object.defineProperty(v, Symbol.iterator, { value: undefined });
      this.#views[n] = v;
    }
    return v;
  }
}

/** A memo with the LRU cache's interface: hits cost one lookup; at most 2 × capacity entries. */
class GenerationalMemo {
  #cur = new Map<string, unknown>();
  #old = new Map<string, unknown>();
  constructor(readonly capacity: number) {}
  get(k: string): unknown {
    const v = this.#cur.get(k);
    if (v !== undefined) return v;
    const o = this.#old.get(k);
    if (o !== undefined) this.put(k, o);
    return o;
  }
  put(k: string, v: unknown): void {
    this.#cur.set(k, v);
    if (this.#cur.size >= this.capacity) {
      this.#old = this.#cur;
      this.#cur = new Map();
    }
  }
  clear(): void {
    this.#cur.clear();
    this.#old.clear();
  }
}

/**
 * Pre-tokens longer than this are mapped without being memoized. The pre-tokens are substrings
 * of the text being encoded; V8 copies substrings this short but makes longer ones views that
 * keep the whole text alive, and a memo key must not pin a conversation's render in memory.
 */
const MEMO_KEY_MAX = 12;
const PRETOKEN_MEMO = 1 << 16;

/**
 * ByteLevel's pre_tokenize_text (split by its pattern, then map each pre-token's UTF-8 bytes to
 * its printable alphabet), with the byte mapping memoized per pre-token: most pre-tokens of a
 * conversation are words seen before, and the mapping of a string is a pure function of it.
 *
 * The pattern is read from the component on every call: the loader has replaced the library's
 * with the Oniguruma translation (src/load/exact-patterns.ts), so this path cuts exactly where
 * the library's own method and the Rust crate cut. The GPT-2 pattern matches every character and
 * never matches empty, so its matches are all the pieces (no gap is dropped by `match`).
 */
function byteLevelMemo(n: Record<string, unknown>, utf8: ScratchUtf8): (text: string) => string[] {
  const memo = new GenerationalMemo(PRETOKEN_MEMO);
  const table = n.byte_encoder as Record<number, string>;
  const map = (token: string): string => {
    const bytes = utf8.encode(token);
    let out = "";
    for (let i = 0; i < bytes.length; i++) out += table[bytes[i] as number];
    return out;
  };
  return (text: string): string[] => {
    if (n.add_prefix_space === true && !text.startsWith(" ")) text = " " + text;
    const tokens: string[] = n.use_regex === true ? (text.match(n.pattern as RegExp) ?? []) : [text];
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i] as string;
      if (t.length > MEMO_KEY_MAX) {
        tokens[i] = map(t);
        continue;
      }
      let m = memo.get(t) as string | undefined;
      if (m === undefined) {
        m = map(t);
        memo.put(t, m);
      }
      tokens[i] = m;
    }
    return tokens;
  };
}

type Slot = { owner: Record<string, unknown>; key: string; original: unknown; replacement: unknown };

function findSlots(tok: Tokenizer): Slot[] {
  const slots: Slot[] = [];
  const t = tok as unknown as Record<string, unknown>;
  const seen = new Set<unknown>();
  const visit = (node: unknown): void => {
    // pipeline components are callable objects (functions) in @huggingface/tokenizers
    if ((typeof node !== "object" && typeof node !== "function") || node === null || seen.has(node)) return;
    seen.add(node);
    const n = node as Record<string, unknown>;
    if (Array.isArray(n.tokenizers)) for (const c of n.tokenizers) visit(c); // Sequence
    if (
      n.text_encoder instanceof TextEncoder &&
      typeof n.byte_encoder === "object" &&
      n.byte_encoder !== null &&
      typeof n.pre_tokenize_text === "function" &&
      Object.getOwnPropertyDescriptor(n, "text_encoder")?.writable === true
    ) {
      const utf8 = new ScratchUtf8();
      slots.push({ owner: n, key: "text_encoder", original: n.text_encoder, replacement: utf8 });
      if (typeof n.use_regex === "boolean" && n.pattern instanceof RegExp && typeof n.add_prefix_space === "boolean") {
        slots.push({ owner: n, key: "pre_tokenize_text", original: n.pre_tokenize_text, replacement: byteLevelMemo(n, utf8) });
      }
    }
  };
  visit(t.pre_tokenizer);
  const model = t.model as Record<string, unknown> | undefined;
  const cache = model?.cache as Record<string, unknown> | undefined;
  if (
    model !== undefined &&
    cache !== undefined &&
    typeof model.bpe === "function" &&
    typeof cache.get === "function" &&
    typeof cache.put === "function" &&
    typeof cache.clear === "function" &&
    typeof model.cache_capacity === "number" &&
    model.cache_capacity >= 16 &&
    Object.getOwnPropertyDescriptor(model, "cache")?.writable === true
  ) {
    slots.push({ owner: model, key: "cache", original: cache, replacement: new GenerationalMemo(model.cache_capacity) });
  }
  // SentencePiece-style BPE (spaces as "▁", whole sections as words): BPE per piece between the
  // cuts no merge can cross (space-mark.ts), so long sections stop costing one BPE each
  const vocab = model?.tokens_to_ids;
  if (
    model !== undefined &&
    typeof model.bpe === "function" &&
    !model.end_of_word_suffix &&
    !model.continuing_subword_suffix &&
    vocab instanceof Map &&
    vocab.has("▁") &&
    Object.getOwnPropertyDescriptor(model, "bpe") === undefined
  ) {
    const before = spaceMarkPredecessors(model);
    const original = model.bpe as (word: string) => string[];
    if (before !== null) slots.push({ owner: model, key: "bpe", original, replacement: splitAtSpaceMarks(original, before) });
  }
  return slots;
}

/** Texts the tuned pipeline must encode exactly as the stock one before it is kept. */
const PROBES = [
  "Hello, world! It's 2026-11-30; x = [1, 2.5e-3]\n\n\tdone.  ",
  "naïve café — Größe ÆØÅ 東京都 中文字 한국어 العربية עברית 😀👍🏽 \u00a0\u2028 a \u0085b\ufeff'll end",
  '{"name": "get_user", "arguments": {"user_id": "omar_rossi_1241", "n": 42}}\n</tool_call>',
  "    def f(x):\n        return x ** 2  # squares\r\n" + "ab".repeat(200) + " " + "9".repeat(40),
  // a long run of words: one BPE word per section in SentencePiece-style models
  "The quick brown fox, it said, jumps over the lazy dog again and again; 1 2 3 — naïve ▁x ▁▁y  z 1> </a\n".repeat(12),
];

/**
 * Installs the allocation-free stand-ins into `tok` when its components are recognized and a
 * probe encodes identically; returns whether any is installed. Idempotent.
 */
export function tuneTokenizer(tok: Tokenizer): boolean {
  const known = tuned.get(tok);
  if (known !== undefined) return known;
  const slots = findSlots(tok);
  let ok = slots.length > 0;
  if (ok) {
    try {
      const stock = PROBES.map((p) => tok.encode(p, { add_special_tokens: false }).ids);
      for (const s of slots) s.owner[s.key] = s.replacement;
      // twice: the second round is answered from the memo
      for (let round = 0; round < 2 && ok; round++) {
        for (let i = 0; i < PROBES.length && ok; i++) {
          const got = tok.encode(PROBES[i] as string, { add_special_tokens: false }).ids;
          const want = stock[i] as number[];
          ok = got.length === want.length && got.every((x: number, j: number) => x === want[j]);
        }
      }
    } catch {
      ok = false;
    }
    if (!ok) for (const s of slots) s.owner[s.key] = s.original;
  }
  tuned.set(tok, ok);
  return ok;
}

export class TokenEncoder {
  readonly #tok: Tokenizer;
  readonly scanner: AddedTokenScanner;
  /** Whether tuneTokenizer installed its stand-ins into this tokenizer. */
  readonly tuned: boolean;

  constructor(source: EncoderSource, options: { tune?: boolean } = {}) {
    this.#tok = source.tokenizer;
    this.tuned = options.tune === false ? false : tuneTokenizer(source.tokenizer);
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
