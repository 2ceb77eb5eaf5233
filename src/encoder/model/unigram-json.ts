/**
 * tokenizer.json's Unigram model: one pre-token in, its ids appended to a U32List, exactly as the
 * Rust crate's `Unigram::tokenize` (models/unigram/model.rs, `encode_optimized`) answers. The
 * crate's rules differ from sentencepiece's own (unigram.ts) and govern here:
 *
 * - Every vocabulary entry is a candidate, whatever sentencepiece called it (control, user-defined
 *   and unused pieces score what the vocabulary lists); positions are UTF-8 byte offsets and a
 *   path advances one character at a time.
 * - Where no piece covers exactly the one character at a position, an unknown node of that
 *   character scores `min_score − 10` (min over every entry, in f64); with no `unk_id` that node
 *   is an error when it would be taken (`DT_TOKENIZE_FAILED`, the crate's `MissingUnkId`).
 * - The best path ending at each position is kept in f64; a candidate replaces it only when
 *   strictly better, so the earliest-starting candidate wins a tie.
 * - Backtracking, consecutive nodes whose id is `unk_id` (unknown nodes, and the unknown piece
 *   itself when the text spells it) fuse into one string. Each string of the path is looked up in
 *   the vocabulary (a piece listed twice answers its last id); a string it lacks becomes its
 *   bytes' `<0xXX>` pieces with `byte_fallback` (all of them present), else `unk_id`.
 *
 * Tables, all in SharedArrayBuffers built once: the pieces and their ids by bytes (the BPE tables
 * without merges), the scores, and a set of the FNV-1a hashes of every piece's proper prefixes.
 * The candidates at a position are found by extending the byte string one byte at a time with
 * its running hash: a length whose hash is a piece's is looked up, and the walk stops at the first
 * length no piece extends (a hash collision only costs a probe more; a piece is always verified
 * byte for byte), so nothing is rebuilt per thread.
 *
 * Layer: encoder.
 */

import { DeltatokError } from "../../errors.js";
import type { U32List } from "../u32-list.js";
import { BpeTables, BpeTablesError, buildBpeTables, type BpeTableBuffers } from "./bpe-tables.js";
import { PieceMemo } from "./piece-memo.js";
import { serdeJsonF64 } from "./serde-float.js";
import { utf8Into } from "./utf8.js";

const UNK_PENALTY = 10;
/** Best-path arrays longer than this many positions are dropped after the text (16 bytes each). */
const KEEP_POSITIONS = 1 << 20;

/** What a Unigram model is built from, after its file was read. */
export interface UnigramSource {
  /** Pieces by id. */
  readonly pieces: readonly string[];
  /** Scores by id, as the file (or the in-memory conversion) gives them. */
  readonly scores: ArrayLike<number>;
  /** Read scores as serde_json reads their JSON spelling (a tokenizer.json), or as given. */
  readonly serdeScores: boolean;
}

/** The Unigram tables as they cross to a worker thread. */
export interface UnigramTableBuffers {
  readonly format: "deltatok-unigram/1";
  readonly tables: BpeTableBuffers;
  /** Float64 × 2 × pieces: the scores as listed, then as the crate computes with them. */
  readonly scores: SharedArrayBuffer;
  /** Uint32 open-addressing set (a power of two long, 0 = empty) of the hashes of every piece's proper prefixes. */
  readonly prefixes: SharedArrayBuffer;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** A prefix hash as stored (0 marks an empty slot). */
const stored = (h: number): number => (h === 0 ? 1 : h);

function hasPrefix(set: Uint32Array, mask: number, h: number): boolean {
  const v = stored(h);
  for (let slot = Math.imul(v, 0x9e3779b1) >>> 0 & mask; ; slot = (slot + 1) & mask) {
    const x = set[slot] as number;
    if (x === v) return true;
    if (x === 0) return false;
  }
}

/** tokenizer.json's `model.vocab` of a Unigram model: `[[piece, score], …]`. */
export function unigramSourceFromJson(model: Record<string, unknown>): UnigramSource {
  const vocab = model["vocab"];
  if (!Array.isArray(vocab)) throw new BpeTablesError("model.vocab of a Unigram model must be a list of [piece, score]", "model.vocab");
  const pieces: string[] = new Array(vocab.length);
  const scores = new Float64Array(vocab.length);
  for (let i = 0; i < vocab.length; i++) {
    const e = vocab[i] as unknown;
    if (!Array.isArray(e) || e.length !== 2 || typeof e[0] !== "string" || typeof e[1] !== "number") {
      throw new BpeTablesError(`model.vocab[${i}] must be [piece, score]`, `model.vocab[${i}]`);
    }
    pieces[i] = e[0];
    scores[i] = e[1];
  }
  return { pieces, scores, serdeScores: true };
}

/** Builds the shared tables. Throws BpeTablesError where the crate refuses the model. */
export function buildUnigramTables(src: UnigramSource): UnigramTableBuffers {
  const vocab = new Map<string, number>();
  src.pieces.forEach((p, id) => vocab.set(p, id));
  const tables = buildBpeTables({
    vocab,
    mergeCount: 0,
    forEachMerge: () => {},
    byteLevel: false,
    continuingSubwordPrefix: null,
    mergeFormat: "pairs",
  });
  const n = src.pieces.length;
  // proper prefixes' hashes
  const t = new BpeTables(tables);
  let total = 0;
  for (let id = 0; id < n; id++) total += (t.strStarts[id + 1] as number) - (t.strStarts[id] as number);
  let cap = 16;
  while (cap < total * 2) cap *= 2;
  const prefixes = new SharedArrayBuffer(cap * 4);
  const set = new Uint32Array(prefixes);
  const mask = cap - 1;
  for (let id = 0; id < n; id++) {
    const s = t.strStarts[id] as number;
    const e = t.strStarts[id + 1] as number;
    let h = FNV_OFFSET;
    for (let i = s; i < e - 1; i++) {
      h = Math.imul(h ^ (t.strBytes[i] as number), FNV_PRIME);
      const v = stored(h >>> 0);
      for (let slot = Math.imul(v, 0x9e3779b1) >>> 0 & mask; ; slot = (slot + 1) & mask) {
        const x = set[slot] as number;
        if (x === v) break;
        if (x === 0) {
          set[slot] = v;
          break;
        }
      }
    }
  }
  const buf = new SharedArrayBuffer(Math.max(8, n * 16));
  const view = new Float64Array(buf);
  for (let id = 0; id < n; id++) {
    const s = src.scores[id] as number;
    view[id] = s;
    view[n + id] = src.serdeScores ? serdeJsonF64(s) : s;
  }
  return Object.freeze({ format: "deltatok-unigram/1", tables, scores: buf, prefixes });
}

export interface UnigramOptions {
  /** `unk_id`, or -1 (none). */
  readonly unkId: number;
  readonly byteFallback: boolean;
}

export class UnigramModel {
  readonly kind = "unigram" as const;
  readonly tables: BpeTables;
  readonly buffers: UnigramTableBuffers;
  readonly options: UnigramOptions;
  readonly memo: PieceMemo;
  /** Scores as listed (views of the model), by id. */
  readonly listedScores: Float64Array;
  readonly #scores: Float64Array;
  readonly #prefixes: Uint32Array;
  readonly #prefixMask: number;
  readonly #unkScore: number;
  readonly #byteIds: Int32Array | null;
  #bytes = new Uint8Array(256);
  #bestScore = new Float64Array(256);
  #bestStart = new Int32Array(256);
  #bestId = new Int32Array(256);
  #tokenIds: Map<string, number> | null = null;

  constructor(buffers: UnigramTableBuffers, options: UnigramOptions, memo = new PieceMemo()) {
    if (buffers === null || typeof buffers !== "object" || buffers.format !== "deltatok-unigram/1") throw new Error("Unigram tables of an unknown format");
    this.buffers = buffers;
    this.tables = new BpeTables(buffers.tables);
    this.options = options;
    this.memo = memo;
    const n = this.tables.idLimit;
    this.listedScores = new Float64Array(buffers.scores, 0, n);
    this.#scores = new Float64Array(buffers.scores, n * 8, n);
    let min = Infinity;
    for (let id = 0; id < n; id++) if ((this.#scores[id] as number) < min) min = this.#scores[id] as number;
    this.#unkScore = min - UNK_PENALTY;
    this.#prefixes = new Uint32Array(buffers.prefixes);
    this.#prefixMask = this.#prefixes.length - 1;
    if (options.byteFallback) {
      const b = new Int32Array(256);
      const hex = "0123456789ABCDEF";
      for (let i = 0; i < 256; i++) b[i] = this.idOfString(`<0x${hex[i >> 4]}${hex[i & 15]}>`);
      this.#byteIds = b;
    } else this.#byteIds = null;
  }

  /** The id of a piece, or -1. */
  idOfString(token: string): number {
    if (this.#tokenIds === null) {
      const m = new Map<string, number>();
      for (const [p, id] of this.tables.entries()) m.set(p, id);
      this.#tokenIds = m;
    }
    return this.#tokenIds.get(token) ?? -1;
  }

  /** Appends the ids of the pre-token text[s, e) to `out`. */
  tokenize(text: string, s: number, e: number, out: U32List): void {
    if (e <= s) return;
    const memo = this.memo;
    if (e - s > memo.maxKey) {
      this.#encode(text, s, e, out);
      return;
    }
    const h = PieceMemo.hash(text, s, e);
    const k = memo.find(text, s, e, h);
    if (k >= 0) {
      memo.appendIds(k, out);
      return;
    }
    const before = out.length;
    this.#encode(text, s, e, out);
    memo.add(text, s, e, h, out.data, before, out.length);
  }

  #encode(text: string, s: number, e: number, out: U32List): void {
    const size = this.#utf8(text, s, e);
    const bytes = this.#bytes;
    if (this.#bestScore.length < size + 1) {
      const cap = (size + 1) * 2;
      this.#bestScore = new Float64Array(cap);
      this.#bestStart = new Int32Array(cap);
      this.#bestId = new Int32Array(cap);
    }
    const bestScore = this.#bestScore;
    const bestStart = this.#bestStart;
    const bestId = this.#bestId;
    bestScore.fill(0, 0, size + 1);
    bestStart.fill(-1, 0, size + 1);
    const tables = this.tables;
    const prefixes = this.#prefixes;
    const prefixMask = this.#prefixMask;
    const scores = this.#scores;
    const unkId = this.options.unkId;
    const unkScore = this.#unkScore;
    for (let at = 0; at < size; ) {
      const tillHere = bestScore[at] as number;
      const lead = bytes[at] as number;
      const mblen = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
      let single = false;
      let h = FNV_OFFSET;
      for (let p = at; p < size; ) {
        h = Math.imul(h ^ (bytes[p] as number), FNV_PRIME);
        p++;
        const id = tables.idOfUnitsHashed(bytes, at, p, h >>> 0);
        if (id >= 0) {
          const candidate = (scores[id] as number) + tillHere;
          if ((bestStart[p] as number) < 0 || candidate > (bestScore[p] as number)) {
            bestScore[p] = candidate;
            bestStart[p] = at;
            bestId[p] = id;
          }
          if (p - at === mblen) single = true;
        }
        // no piece is longer than this and starts the same way
        if (!hasPrefix(prefixes, prefixMask, h >>> 0)) break;
      }
      if (!single) {
        const target = at + mblen;
        const candidate = unkScore + tillHere;
        if ((bestStart[target] as number) < 0 || candidate > (bestScore[target] as number)) {
          if (unkId < 0) throw new DeltatokError("DT_TOKENIZE_FAILED", "the Unigram model met a character it has no piece for and has no unk_id (the Rust crate's MissingUnkId)");
          bestScore[target] = candidate;
          bestStart[target] = at;
          bestId[target] = unkId;
        }
      }
      at += mblen;
    }
    // backtrack: the path's segments, end to start, written at the end of `out` then reversed
    const first = out.length;
    for (let end = size; end > 0; ) {
      let start = bestStart[end] as number;
      const id = bestId[end] as number;
      if (unkId >= 0 && id === unkId) {
        while (start > 0 && bestId[start] === unkId) start = bestStart[start] as number;
        this.#pushUnknownReversed(start, end, out);
      } else out.push(id);
      end = start;
    }
    out.data.subarray(first, out.length).reverse();
    if (this.#bestScore.length > KEEP_POSITIONS) {
      this.#bestScore = new Float64Array(256);
      this.#bestStart = new Int32Array(256);
      this.#bestId = new Int32Array(256);
      this.#bytes = new Uint8Array(256);
    }
  }

  /** A fused unknown string bytes[a, b): its piece, else its byte pieces, else unk_id; pushed in reverse. */
  #pushUnknownReversed(a: number, b: number, out: U32List): void {
    const bytes = this.#bytes;
    const id = this.tables.idOfUnits(bytes, a, b);
    if (id >= 0) {
      out.push(id);
      return;
    }
    const byteIds = this.#byteIds;
    if (byteIds !== null) {
      let all = true;
      for (let i = a; i < b && all; i++) if ((byteIds[bytes[i] as number] as number) < 0) all = false;
      if (all) {
        for (let i = b - 1; i >= a; i--) out.push(byteIds[bytes[i] as number] as number);
        return;
      }
    }
    out.push(this.options.unkId);
  }

  /** UTF-8 of text[s, e) into `#bytes` (a lone surrogate as U+FFFD); returns the length. */
  #utf8(text: string, s: number, e: number): number {
    let b = this.#bytes;
    if (b.length < (e - s) * 3) b = this.#bytes = new Uint8Array((e - s) * 3 * 2);
    return utf8Into(text, s, e, b);
  }
}
