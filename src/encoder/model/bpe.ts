/**
 * The BPE model: one pre-token in, its ids appended to a U32List, exactly as the Rust crate's
 * `BPE::tokenize` (models/bpe/model.rs, word.rs) answers.
 *
 * - A word's initial symbols are its characters (with `continuing_subword_prefix` before every
 *   one but the first and `end_of_word_suffix` after the last), or for a byte-level model its
 *   bytes. A character the vocabulary lacks becomes its UTF-8 bytes as `<0xXX>` pieces
 *   (`byte_fallback`, when all of them exist), else the unknown token (consecutive ones fused
 *   with `fuse_unk`), else it is dropped.
 * - With `ignore_merges`, a word that is itself a token is that token.
 * - Merging: repeatedly join the adjacent pair with the lowest merge rank, the leftmost among
 *   equal ranks (the crate's priority queue pops (rank, position) in that order, and a stale entry
 *   never matches because a rank names one pair). Short words use a linear scan over a rank array;
 *   long ones a binary heap over a linked list, O(n log n).
 * - Every word of at most `memo.maxKey` units is memoized by its units (piece-memo.ts).
 * - A character-level model whose vocabulary has "▁" cuts a word before each "▁" that no token
 *   joins to the unit before it (bpe-tables.ts, `spacePredecessors`) and merges the parts alone:
 *   SentencePiece-style models (Llama 2, Gemma, Gemini) feed a whole section as one word.
 *
 * Layer: encoder.
 */

import type { U32List } from "../u32-list.js";
import { CHAR_OF_BYTE } from "./byte-alphabet.js";
import type { BpeTables } from "./bpe-tables.js";
import { PieceMemo } from "./piece-memo.js";
import { utf8Into } from "./utf8.js";

export interface BpeOptions {
  /** The id of `unk_token`, or -1 (no unknown token: unknown characters are dropped). */
  readonly unkId: number;
  /**
   * An `unk_token` the vocabulary lacks (else null): the Rust crate loads such a model and fails
   * the encode of a text with an unknown character ("Unk token … not found"); so does this one.
   */
  readonly missingUnk?: string | null;
  readonly fuseUnk: boolean;
  readonly byteFallback: boolean;
  readonly ignoreMerges: boolean;
  /** `continuing_subword_prefix` when non-empty, else null. */
  readonly prefix: string | null;
  /** `end_of_word_suffix` when non-empty, else null. */
  readonly suffix: string | null;
}

/** Words of more symbols than this merge with the heap. */
const LINEAR_MAX = 40;
const NO_RANK = 0x7fffffff;
const SPACE_MARK = 0x2581;
const utf8 = new TextEncoder();

function missingUnkError(unk: string): Error {
  return new Error(`an unknown character needs the unknown token ${JSON.stringify(unk)}, which is not in the vocabulary`);
}

export class BpeModel {
  readonly tables: BpeTables;
  readonly options: BpeOptions;
  readonly memo: PieceMemo;
  /** Units of the words merged (memo misses), for the work-bound tests. */
  mergedUnits = 0;
  /** Pair lookups and heap operations of the merges, for the work-bound tests. */
  mergeSteps = 0;
  /**
   * Where the last word `tokenize` merged starts (an offset into the text it read) and the
   * output's length before its ids: a character-level model cuts a pre-token at "▁" into words
   * (below), and the streaming counter's open run grows the last one (tokenize/stream-run.ts).
   */
  lastWordStart = 0;
  lastWordAt = 0;
  #bytes = new Uint8Array(256);
  #sym = new Int32Array(256);
  #rank = new Int32Array(256);
  #next = new Int32Array(256);
  #prev = new Int32Array(256);
  #heap = new Float64Array(256);
  readonly #byteFallbackIds: Int32Array | null;
  readonly #spaceCuts: Uint8Array | null;
  #tokenIds: Map<string, number> | null = null;

  constructor(tables: BpeTables, options: BpeOptions, memo = new PieceMemo()) {
    this.tables = tables;
    this.options = options;
    this.memo = memo;
    if (options.byteFallback) {
      const ids = new Int32Array(256);
      const hex = "0123456789ABCDEF";
      for (let b = 0; b < 256; b++) ids[b] = this.idOfString(`<0x${hex[b >> 4]}${hex[b & 15]}>`);
      this.#byteFallbackIds = ids;
    } else this.#byteFallbackIds = null;
    this.#spaceCuts = tables.byteLevel || options.prefix !== null || options.suffix !== null ? null : tables.spacePredecessors;
  }

  /** The ids of the byte-fallback pieces `<0x00>` … `<0xFF>` (-1 where missing), or null without byte_fallback. */
  get byteFallbackIds(): Int32Array | null {
    return this.#byteFallbackIds;
  }

  /** The id of a token string of the vocabulary, or -1. */
  idOfString(token: string): number {
    if (this.#tokenIds === null) {
      const m = new Map<string, number>();
      for (const [t, id] of this.tables.entries()) if (!m.has(t)) m.set(t, id);
      this.#tokenIds = m;
    }
    return this.#tokenIds.get(token) ?? -1;
  }

  /** Appends the ids of the word text[s, e) to `out`. */
  tokenize(text: string, s: number, e: number, out: U32List): void {
    if (e <= s) return;
    const cuts = this.#spaceCuts;
    if (cuts !== null) {
      let from = s;
      for (let i = s + 1; i < e; i++) {
        if (text.charCodeAt(i) !== SPACE_MARK) continue;
        const u = text.charCodeAt(i - 1);
        if (u === SPACE_MARK || cuts[u] === 1) continue;
        this.#word(text, from, i, out);
        from = i;
      }
      this.lastWordStart = from;
      this.lastWordAt = out.length;
      this.#word(text, from, e, out);
      return;
    }
    this.lastWordStart = s;
    this.lastWordAt = out.length;
    this.#word(text, s, e, out);
  }

  #word(text: string, s: number, e: number, out: U32List): void {
    const memo = this.memo;
    if (e - s > memo.maxKey) {
      this.#merge(text, s, e, out);
      return;
    }
    const h = PieceMemo.hash(text, s, e);
    const k = memo.find(text, s, e, h);
    if (k >= 0) {
      memo.appendIds(k, out);
      return;
    }
    const before = out.length;
    this.#merge(text, s, e, out);
    memo.add(text, s, e, h, out.data, before, out.length);
  }

  /** The BPE of text[s, e), without the memo. */
  #merge(text: string, s: number, e: number, out: U32List): void {
    this.mergedUnits += e - s;
    const t = this.tables;
    const o = this.options;
    if (o.prefix !== null || o.suffix !== null) {
      this.#mergeStrings(text.slice(s, e), out);
      return;
    }
    // the word's units: bytes for a byte-level model, else the UTF-8 of its characters
    const nb = this.#utf8(text, s, e);
    const bytes = this.#bytes;
    if (o.ignoreMerges) {
      const id = t.idOfUnits(bytes, 0, nb);
      if (id >= 0) {
        out.push(id);
        return;
      }
    }
    let sym = this.#sym;
    if (sym.length < nb) sym = this.#sym = new Int32Array(nb * 2);
    let m = 0;
    if (t.byteLevel) {
      const byteIds = t.byteIds;
      for (let i = 0; i < nb; i++) {
        const id = byteIds[bytes[i] as number] as number;
        if (id < 0) {
          this.#mergeStrings(text.slice(s, e), out);
          return;
        }
        sym[m++] = id;
      }
    } else {
      let unk = -1;
      let i = 0;
      while (i < nb) {
        const b0 = bytes[i] as number;
        const len = b0 < 0x80 ? 1 : b0 < 0xe0 ? 2 : b0 < 0xf0 ? 3 : 4;
        const id = t.idOfUnits(bytes, i, i + len);
        if (id >= 0) {
          if (unk >= 0) sym[m++] = unk;
          unk = -1;
          sym[m++] = id;
        } else if (this.#byteFallbackIds !== null && this.#allFallback(bytes, i, i + len)) {
          if (unk >= 0) sym[m++] = unk;
          unk = -1;
          for (let j = i; j < i + len; j++) sym[m++] = this.#byteFallbackIds[bytes[j] as number] as number;
        } else if (o.unkId >= 0) {
          if (unk >= 0 && !o.fuseUnk) sym[m++] = unk;
          unk = o.unkId;
        } else if (o.missingUnk != null) throw missingUnkError(o.missingUnk);
        i += len;
      }
      if (unk >= 0) sym[m++] = unk;
    }
    this.#mergeSymbols(m, out);
  }

  #allFallback(bytes: Uint8Array, from: number, to: number): boolean {
    const ids = this.#byteFallbackIds as Int32Array;
    for (let j = from; j < to; j++) if ((ids[bytes[j] as number] as number) < 0) return false;
    return true;
  }

  /** UTF-8 of text[s, e) into #bytes (lone surrogates as U+FFFD, as they reach the Rust crate); returns its length. */
  #utf8(text: string, s: number, e: number): number {
    let b = this.#bytes;
    if (b.length < (e - s) * 3) b = this.#bytes = new Uint8Array((e - s) * 3 * 2);
    return utf8Into(text, s, e, b);
  }

  /** Merges the m symbols in #sym and appends the result. */
  #mergeSymbols(m: number, out: U32List): void {
    if (m <= 1) {
      if (m === 1) out.push(this.#sym[0] as number);
      return;
    }
    if (m <= LINEAR_MAX) this.#mergeLinear(m, out);
    else this.#mergeHeap(m, out);
  }

  #mergeLinear(m: number, out: U32List): void {
    const t = this.tables;
    const pairs = t.pairs;
    const sym = this.#sym;
    let rank = this.#rank;
    if (rank.length < m) rank = this.#rank = new Int32Array(m * 2);
    if (this.#next.length < m) this.#next = new Int32Array(m * 2);
    const nid = this.#next; // merged id of each pair
    for (let i = 0; i < m - 1; i++) {
      const k = t.pairSlot(sym[i] as number, sym[i + 1] as number);
      if (k < 0) rank[i] = NO_RANK;
      else {
        rank[i] = pairs[k + 2] as number;
        nid[i] = pairs[k + 3] as number;
      }
    }
    let steps = m;
    for (;;) {
      let best = NO_RANK;
      let bi = -1;
      steps += m;
      for (let i = 0; i < m - 1; i++) {
        const r = rank[i] as number;
        if (r < best) {
          best = r;
          bi = i;
        }
      }
      if (bi < 0) break;
      sym[bi] = nid[bi] as number;
      for (let i = bi + 1; i < m - 1; i++) sym[i] = sym[i + 1] as number;
      for (let i = bi + 1; i < m - 2; i++) {
        rank[i] = rank[i + 1] as number;
        nid[i] = nid[i + 1] as number;
      }
      m--;
      if (bi < m - 1) {
        const k = t.pairSlot(sym[bi] as number, sym[bi + 1] as number);
        if (k < 0) rank[bi] = NO_RANK;
        else {
          rank[bi] = pairs[k + 2] as number;
          nid[bi] = pairs[k + 3] as number;
        }
      }
      if (bi > 0) {
        const k = t.pairSlot(sym[bi - 1] as number, sym[bi] as number);
        if (k < 0) rank[bi - 1] = NO_RANK;
        else {
          rank[bi - 1] = pairs[k + 2] as number;
          nid[bi - 1] = pairs[k + 3] as number;
        }
      }
    }
    this.mergeSteps += steps;
    out.reserve(m);
    const d = out.data;
    for (let i = 0; i < m; i++) d[out.length + i] = sym[i] as number;
    out.length += m;
  }

  #mergeHeap(m: number, out: U32List): void {
    const t = this.tables;
    const pairs = t.pairs;
    const sym = this.#sym;
    if (this.#next.length < m) this.#next = new Int32Array(m * 2);
    if (this.#prev.length < m) this.#prev = new Int32Array(m * 2);
    const next = this.#next;
    const prev = this.#prev;
    for (let i = 0; i < m; i++) {
      next[i] = i + 1 < m ? i + 1 : -1;
      prev[i] = i - 1;
    }
    let heap = this.#heap;
    let size = 0;
    let steps = 0;
    const push = (key: number): void => {
      steps++;
      if (size === heap.length) {
        const h = new Float64Array(heap.length * 2);
        h.set(heap);
        heap = this.#heap = h;
      }
      let i = size++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if ((heap[p] as number) <= key) break;
        heap[i] = heap[p] as number;
        i = p;
      }
      heap[i] = key;
    };
    const pop = (): number => {
      const top = heap[0] as number;
      const last = heap[--size] as number;
      let i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= size) break;
        if (c + 1 < size && (heap[c + 1] as number) < (heap[c] as number)) c++;
        if ((heap[c] as number) >= last) break;
        heap[i] = heap[c] as number;
        i = c;
      }
      heap[i] = last;
      return top;
    };
    const SHIFT = 4294967296; // key = rank × 2^32 + position
    for (let i = 0; i < m - 1; i++) {
      const k = t.pairSlot(sym[i] as number, sym[i + 1] as number);
      if (k >= 0) push((pairs[k + 2] as number) * SHIFT + i);
    }
    while (size > 0) {
      steps++;
      const key = pop();
      const pos = key % SHIFT;
      const r = (key - pos) / SHIFT;
      const right = next[pos] as number;
      if (sym[pos] as number < 0 || right < 0) continue;
      const k = t.pairSlot(sym[pos] as number, sym[right] as number);
      if (k < 0 || pairs[k + 2] !== r) continue; // stale: the pair at pos changed
      sym[pos] = pairs[k + 3] as number;
      sym[right] = -1;
      const after = next[right] as number;
      next[pos] = after;
      if (after >= 0) prev[after] = pos;
      const before = prev[pos] as number;
      if (before >= 0) {
        const kb = t.pairSlot(sym[before] as number, sym[pos] as number);
        if (kb >= 0) push((pairs[kb + 2] as number) * SHIFT + before);
      }
      if (after >= 0) {
        const ka = t.pairSlot(sym[pos] as number, sym[after] as number);
        if (ka >= 0) push((pairs[ka + 2] as number) * SHIFT + pos);
      }
    }
    this.mergeSteps += steps;
    for (let i = 0; i >= 0; i = next[i] as number) out.push(sym[i] as number);
  }

  /**
   * The general path, on token strings: subword affixes, or a byte-level word with a byte the
   * vocabulary lacks. Rare; exact over speed.
   */
  #mergeStrings(word: string, out: U32List): void {
    const t = this.tables;
    const o = this.options;
    if (t.byteLevel) {
      let spelled = "";
      const b = utf8.encode(word);
      for (let i = 0; i < b.length; i++) spelled += String.fromCharCode(CHAR_OF_BYTE[b[i] as number] as number);
      word = spelled;
    }
    if (o.ignoreMerges) {
      const id = this.idOfString(word);
      if (id >= 0) {
        out.push(id);
        return;
      }
    }
    const chars = Array.from(word);
    let sym = this.#sym;
    if (sym.length < word.length * 4 + 8) sym = this.#sym = new Int32Array(word.length * 8 + 16);
    let m = 0;
    let unk = -1;
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i] as string;
      const symbol = (i > 0 && o.prefix !== null ? o.prefix : "") + c + (i === chars.length - 1 && o.suffix !== null ? o.suffix : "");
      const id = this.idOfString(symbol);
      if (id >= 0) {
        if (unk >= 0) sym[m++] = unk;
        unk = -1;
        sym[m++] = id;
        continue;
      }
      if (this.#byteFallbackIds !== null) {
        const bytes = utf8.encode(symbol);
        if (this.#allFallback(bytes, 0, bytes.length)) {
          if (unk >= 0) sym[m++] = unk;
          unk = -1;
          for (let j = 0; j < bytes.length; j++) sym[m++] = this.#byteFallbackIds[bytes[j] as number] as number;
          continue;
        }
      }
      if (o.unkId >= 0) {
        if (unk >= 0 && !o.fuseUnk) sym[m++] = unk;
        unk = o.unkId;
      } else if (o.missingUnk != null) throw missingUnkError(o.missingUnk);
    }
    if (unk >= 0) sym[m++] = unk;
    this.#mergeSymbols(m, out);
  }
}
