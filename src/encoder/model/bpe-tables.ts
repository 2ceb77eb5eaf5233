/**
 * A BPE model's vocabulary and merges as flat typed arrays over SharedArrayBuffers: built once
 * from tokenizer.json's `model.vocab` and `model.merges` (or from another format's ranks), read
 * by any number of threads, never written after the build.
 *
 * - Token strings by id (UTF-8 arena + starts), for `id_to_token` and decoding.
 * - The unit bytes of each token: what its symbols stand for. A byte-level model (ByteLevel
 *   pre-tokenizer) spells bytes in GPT-2's alphabet, so its units are the bytes behind the
 *   spelling; any other model's units are the UTF-8 of the string itself. A byte-level token
 *   whose spelling leaves the alphabet can never be formed from bytes: it is kept for decoding
 *   but left out of the lookup by bytes.
 * - A lookup of token ids by unit bytes (open addressing, FNV-1a), for whole-word hits
 *   (`ignore_merges`), the initial symbols of a word, and other formats' loaders.
 * - A lookup of merges by pair of ids: (left, right) → (rank, merged id), open addressing over
 *   Int32 quadruples. A pair listed twice keeps the rank of its last listing, as the Rust crate's
 *   map does.
 * - `byteIds[b]`: the id of the one-byte token of byte b (byte-level models), or -1.
 *
 * Layer: encoder.
 */

import { BYTE_OF_CHAR, bytesOfSpelling, CHAR_OF_BYTE } from "./byte-alphabet.js";

/** The tables as they cross to a worker thread (structured clone keeps SharedArrayBuffers shared). */
export interface BpeTableBuffers {
  readonly format: "deltatok-bpe/2";
  /** Largest token id + 1. */
  readonly idLimit: number;
  /** Number of tokens in the model's vocabulary (the Rust crate's `get_vocab_size`). */
  readonly tokenCount: number;
  /** Number of merges (ranks 0 … merges − 1). */
  readonly merges: number;
  /** How tokenizer.json listed its merges: `"a b"` strings or `[a, b]` pairs. */
  readonly mergeFormat: "strings" | "pairs";
  readonly byteLevel: boolean;
  /** UTF-8 of every token string; `strStarts` (Uint32 × idLimit + 1) delimits them. */
  readonly strBytes: SharedArrayBuffer;
  readonly strStarts: SharedArrayBuffer;
  /** Uint8 × idLimit: 1 where the id has a token, 2 where it also is reachable by bytes. */
  readonly present: SharedArrayBuffer;
  /** Unit bytes of every token (byte-level models; others read `strBytes`). */
  readonly unitBytes: SharedArrayBuffer | null;
  readonly unitStarts: SharedArrayBuffer | null;
  /** Int32 open-addressing table of ids by unit bytes (-1: empty), a power of two long. */
  readonly tokenSlots: SharedArrayBuffer;
  /** Int32 × 4 per slot (left, right, rank, merged id; left -1: empty), a power of two of slots. */
  readonly pairSlots: SharedArrayBuffer;
  /** Int32 × 256. */
  readonly byteIds: SharedArrayBuffer;
  /**
   * Uint8 × 65536 for a model whose vocabulary has "▁" and is not byte-level: 1 where the unit may
   * stand right before "▁" inside a token (see `spaceCuts` in bpe.ts); null when cutting at "▁"
   * is not proven for the model (byte-level, no "▁", or merges of byte-fallback pieces).
   */
  readonly spacePredecessors: SharedArrayBuffer | null;
}

/** A tokenizer.json model the tables cannot be built from; the message says why. */
export class BpeTablesError extends Error {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = "BpeTablesError";
  }
}

const utf8 = new TextEncoder();

export function hashBytes(b: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ (b[i] as number), 0x01000193);
  return h >>> 0;
}

export function hashPair(a: number, b: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}

const pow2Above = (n: number): number => {
  let c = 16;
  while (c < n) c *= 2;
  return c;
};

function sharedInt32(n: number, fill: number): { buf: SharedArrayBuffer; view: Int32Array } {
  const buf = new SharedArrayBuffer(n * 4);
  const view = new Int32Array(buf);
  if (fill !== 0) view.fill(fill);
  return { buf, view };
}

/** What a BPE model is built from, after its file format was read. */
export interface BpeSource {
  /** Token string → id. */
  readonly vocab: ReadonlyMap<string, number>;
  /** Number of merges. */
  readonly mergeCount: number;
  /** Calls `f` with each merge in rank order: its two token strings. */
  forEachMerge(f: (a: string, b: string, rank: number) => void): void;
  /**
   * The same merges by ids (left, right, rank, merged token), for sources that know them without
   * building strings (rank files); used instead of `forEachMerge` when present.
   */
  forEachMergeIds?(f: (a: number, b: number, rank: number, merged: number) => void): void;
  /** Spell bytes in GPT-2's alphabet (a ByteLevel pre-tokenizer feeds the model). */
  readonly byteLevel: boolean;
  /** BPE `continuing_subword_prefix`: stripped from a merge's right side to name its result. */
  readonly continuingSubwordPrefix: string | null;
  /** How the file listed the merges (kept for views of the model). */
  readonly mergeFormat: "strings" | "pairs";
}

/** tokenizer.json's `model.vocab` (object) and `model.merges` ("a b" strings or [a, b] pairs). */
export function bpeSourceFromJson(model: Record<string, unknown>, byteLevel: boolean): BpeSource {
  const rawVocab = model["vocab"];
  if (rawVocab === null || typeof rawVocab !== "object" || Array.isArray(rawVocab)) throw new BpeTablesError("model.vocab must be an object of token ids", "model.vocab");
  const vocab = new Map<string, number>();
  const obj = rawVocab as Record<string, unknown>;
  for (const t in obj) {
    const id = obj[t];
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id > 0x7ffffffe) {
      throw new BpeTablesError(`model.vocab[${JSON.stringify(t)}] must be a token id (an integer ≥ 0), got ${String(id)}`, `model.vocab`);
    }
    vocab.set(t, id);
  }
  const rawMerges = model["merges"] ?? [];
  if (!Array.isArray(rawMerges)) throw new BpeTablesError("model.merges must be a list", "model.merges");
  const list = rawMerges as readonly unknown[];
  const mergeFormat: "strings" | "pairs" = list.some((m) => typeof m === "string") ? "strings" : "pairs";
  const prefix = model["continuing_subword_prefix"];
  return {
    vocab,
    mergeCount: list.length,
    forEachMerge(f) {
      for (let i = 0; i < list.length; i++) {
        const m = list[i];
        if (typeof m === "string") {
          // the crate splits on every space and wants exactly two parts
          const sp = m.indexOf(" ");
          if (sp < 0 || m.indexOf(" ", sp + 1) >= 0) throw new BpeTablesError(`model.merges[${i}] must be two tokens separated by one space`, `model.merges[${i}]`);
          f(m.slice(0, sp), m.slice(sp + 1), i);
        } else if (Array.isArray(m) && m.length === 2 && typeof m[0] === "string" && typeof m[1] === "string") {
          f(m[0], m[1], i);
        } else throw new BpeTablesError(`model.merges[${i}] must be "a b" or ["a", "b"]`, `model.merges[${i}]`);
      }
    },
    byteLevel,
    continuingSubwordPrefix: typeof prefix === "string" ? prefix : null,
    mergeFormat,
  };
}

/** Builds the tables. Throws BpeTablesError where the Rust crate refuses the model. */
export function buildBpeTables(src: BpeSource): BpeTableBuffers {
  let idLimit = 0;
  let strTotal = 0;
  for (const [t, id] of src.vocab) {
    if (id + 1 > idLimit) idLimit = id + 1;
    strTotal += t.length * 3;
  }
  const tokenById: Array<string | undefined> = new Array(idLimit);
  for (const [t, id] of src.vocab) tokenById[id] = t; // two tokens on one id: the last listed names it
  // token strings
  const scratch = new Uint8Array(Math.max(16, strTotal));
  const strStartsBuf = new SharedArrayBuffer((idLimit + 1) * 4);
  const strStarts = new Uint32Array(strStartsBuf);
  const presentBuf = new SharedArrayBuffer(Math.max(1, idLimit));
  const present = new Uint8Array(presentBuf);
  let at = 0;
  for (let id = 0; id < idLimit; id++) {
    strStarts[id] = at;
    const t = tokenById[id];
    if (t === undefined) continue;
    present[id] = 1;
    at += utf8.encodeInto(t, scratch.subarray(at)).written;
  }
  strStarts[idLimit] = at;
  const strBytesBuf = new SharedArrayBuffer(Math.max(1, at));
  new Uint8Array(strBytesBuf).set(scratch.subarray(0, at));

  // unit bytes: for a byte-level model the bytes behind the spelling
  let unitBytesBuf: SharedArrayBuffer | null = null;
  let unitStartsBuf: SharedArrayBuffer | null = null;
  let units: Uint8Array;
  let unitStarts: Uint32Array;
  if (src.byteLevel) {
    unitStartsBuf = new SharedArrayBuffer((idLimit + 1) * 4);
    unitStarts = new Uint32Array(unitStartsBuf);
    const buf = new Uint8Array(Math.max(16, strTotal));
    let u = 0;
    for (let id = 0; id < idLimit; id++) {
      unitStarts[id] = u;
      const t = tokenById[id];
      if (t === undefined) continue;
      let ok = true;
      for (let i = 0; i < t.length && ok; i++) {
        const c = t.charCodeAt(i);
        const b = c < 324 ? (BYTE_OF_CHAR[c] as number) : -1;
        if (b < 0) ok = false;
        else buf[u + i] = b;
      }
      if (ok) {
        u += t.length;
        present[id] = 2;
      } else {
        // not reachable from bytes: its units are its UTF-8 (what the ByteLevel decoder emits)
        u += utf8.encodeInto(t, buf.subarray(u)).written;
      }
    }
    unitStarts[idLimit] = u;
    unitBytesBuf = new SharedArrayBuffer(Math.max(1, u));
    units = new Uint8Array(unitBytesBuf);
    units.set(buf.subarray(0, u));
  } else {
    units = new Uint8Array(strBytesBuf);
    unitStarts = strStarts;
    for (let id = 0; id < idLimit; id++) if (present[id] === 1) present[id] = 2;
  }

  // ids by unit bytes
  const tokCap = pow2Above(src.vocab.size * 2);
  const tok = sharedInt32(tokCap, -1);
  const tmask = tokCap - 1;
  for (let id = 0; id < idLimit; id++) {
    if (present[id] !== 2) continue;
    const s = unitStarts[id] as number;
    const e = unitStarts[id + 1] as number;
    let slot = hashBytes(units, s, e) & tmask;
    for (;;) {
      const other = tok.view[slot] as number;
      if (other < 0) {
        tok.view[slot] = id;
        break;
      }
      if (sameUnits(units, unitStarts, other, s, e)) break; // an earlier id spells the same bytes: it wins
      slot = (slot + 1) & tmask;
    }
  }

  // merges by pair
  const pairCap = pow2Above(Math.ceil(src.mergeCount * 1.5) + 1);
  const pairs = sharedInt32(pairCap * 4, -1);
  const pmask = pairCap - 1;
  const prefixLen = src.continuingSubwordPrefix?.length ?? 0;
  const view = pairs.view;
  let byteMerges = false; // a merge of byte-fallback pieces (`<0xXX>`)
  /** The id of the reachable token whose units are ia's followed by ib's, or -1. */
  const joinedId = (ia: number, ib: number): number => {
    const as = unitStarts[ia] as number;
    const ae = unitStarts[ia + 1] as number;
    const bs = unitStarts[ib] as number;
    const be = unitStarts[ib + 1] as number;
    let h = 0x811c9dc5;
    for (let i = as; i < ae; i++) h = Math.imul(h ^ (units[i] as number), 0x01000193);
    for (let i = bs; i < be; i++) h = Math.imul(h ^ (units[i] as number), 0x01000193);
    const n = ae - as + (be - bs);
    let slot = (h >>> 0) & tmask;
    for (;;) {
      const id = tok.view[slot] as number;
      if (id < 0) return -1;
      const s = unitStarts[id] as number;
      if ((unitStarts[id + 1] as number) - s === n) {
        let i = 0;
        while (i < ae - as && units[s + i] === units[as + i]) i++;
        if (i === ae - as) {
          let j = 0;
          while (j < be - bs && units[s + i + j] === units[bs + j]) j++;
          if (j === be - bs) return id;
        }
      }
      slot = (slot + 1) & tmask;
    }
  };
  const insert = (ia: number, ib: number, rank: number, ij: number): void => {
    let slot = hashPair(ia, ib) & pmask;
    for (;;) {
      const k = slot * 4;
      const l = view[k] as number;
      if (l < 0 || (l === ia && view[k + 1] === ib)) {
        view[k] = ia;
        view[k + 1] = ib;
        view[k + 2] = rank;
        view[k + 3] = ij;
        break;
      }
      slot = (slot + 1) & pmask;
    }
  };
  if (src.forEachMergeIds !== undefined) src.forEachMergeIds(insert);
  else
    src.forEachMerge((a, b, rank) => {
      if ((a.charCodeAt(0) === 0x3c && BYTE_PIECE.test(a)) || (b.charCodeAt(0) === 0x3c && BYTE_PIECE.test(b))) byteMerges = true;
      const ia = src.vocab.get(a);
      if (ia === undefined) throw new BpeTablesError(`merge ${rank} names ${JSON.stringify(a)}, which is not in model.vocab`, `model.merges[${rank}]`);
      const ib = src.vocab.get(b);
      if (ib === undefined) throw new BpeTablesError(`merge ${rank} names ${JSON.stringify(b)}, which is not in model.vocab`, `model.merges[${rank}]`);
      // the merged token: its units are a's then b's (looked up without building the string), unless
      // a subword prefix is cut off b, or a side is not reachable by units
      let ij = prefixLen === 0 && present[ia] === 2 && present[ib] === 2 ? joinedId(ia, ib) : -1;
      if (ij < 0) ij = src.vocab.get(a + b.slice(prefixLen)) ?? -1;
      if (ij < 0) throw new BpeTablesError(`merge ${rank} makes ${JSON.stringify(a + b.slice(prefixLen))}, which is not in model.vocab`, `model.merges[${rank}]`);
      insert(ia, ib, rank, ij);
    });

  const spacePredecessors = src.byteLevel || byteMerges ? null : spacePredecessorTable(src);
  const bytes = sharedInt32(256, -1);
  if (src.byteLevel) {
    for (let b = 0; b < 256; b++) {
      const id = src.vocab.get(String.fromCharCode(CHAR_OF_BYTE[b] as number));
      if (id !== undefined && present[id] === 2) bytes.view[b] = id;
    }
  }
  return Object.freeze({
    format: "deltatok-bpe/2",
    idLimit,
    tokenCount: src.vocab.size,
    merges: src.mergeCount,
    mergeFormat: src.mergeFormat,
    byteLevel: src.byteLevel,
    strBytes: strBytesBuf,
    strStarts: strStartsBuf,
    present: presentBuf,
    unitBytes: unitBytesBuf,
    unitStarts: unitStartsBuf,
    tokenSlots: tok.buf,
    pairSlots: pairs.buf,
    byteIds: bytes.buf,
    spacePredecessors,
  });
}

const SPACE_MARK = "\u2581";
const BYTE_PIECE = /^<0x[0-9A-Fa-f]{2}>$/;

/**
 * The units that precede "▁" inside a vocabulary token or a merge result. A merge joins two
 * adjacent symbols into one token, so when no token holds "u▁", no merge ever joins a symbol
 * ending in u with one starting with "▁": the word can be cut there and each side merged alone,
 * in the same order (ties go to the leftmost pair on both paths). Byte-fallback pieces spell
 * other units than the text's, so a model merging them gets no table (the caller checks).
 */
function spacePredecessorTable(src: BpeSource): SharedArrayBuffer | null {
  if (!src.vocab.has(SPACE_MARK)) return null;
  const buf = new SharedArrayBuffer(65536);
  const table = new Uint8Array(buf);
  const scan = (t: string): void => {
    for (let i = t.indexOf(SPACE_MARK, 1); i > 0; i = t.indexOf(SPACE_MARK, i + 1)) table[t.charCodeAt(i - 1)] = 1;
  };
  // every merge result is a vocabulary token (buildBpeTables refuses one that is not)
  for (const t of src.vocab.keys()) scan(t);
  return buf;
}

function sameUnits(units: Uint8Array, starts: Uint32Array, id: number, s: number, e: number): boolean {
  const os = starts[id] as number;
  if ((starts[id + 1] as number) - os !== e - s) return false;
  for (let i = 0; i < e - s; i++) if (units[os + i] !== units[s + i]) return false;
  return true;
}

/** Bytes of every SharedArrayBuffer of the tables. */
export function bpeTableBytes(t: BpeTableBuffers): number {
  let n = t.strBytes.byteLength + t.strStarts.byteLength + t.present.byteLength + t.tokenSlots.byteLength + t.pairSlots.byteLength + t.byteIds.byteLength;
  if (t.unitBytes !== null) n += t.unitBytes.byteLength;
  if (t.unitStarts !== null) n += t.unitStarts.byteLength;
  if (t.spacePredecessors !== null) n += t.spacePredecessors.byteLength;
  return n;
}

const utf8d = new TextDecoder("utf-8", { ignoreBOM: true });

/** Read access to the tables, in any thread. */
export class BpeTables {
  readonly buffers: BpeTableBuffers;
  readonly idLimit: number;
  readonly byteLevel: boolean;
  readonly strBytes: Uint8Array;
  readonly strStarts: Uint32Array;
  readonly present: Uint8Array;
  readonly units: Uint8Array;
  readonly unitStarts: Uint32Array;
  readonly tokenSlots: Int32Array;
  readonly tokenMask: number;
  readonly pairs: Int32Array;
  readonly pairMask: number;
  readonly byteIds: Int32Array;
  readonly spacePredecessors: Uint8Array | null;
  #strings: Array<string | undefined> | null = null;

  constructor(b: BpeTableBuffers) {
    if (b === null || typeof b !== "object" || b.format !== "deltatok-bpe/2") throw new Error("BPE tables of an unknown format");
    this.buffers = b;
    this.idLimit = b.idLimit;
    this.byteLevel = b.byteLevel;
    this.strBytes = new Uint8Array(b.strBytes);
    this.strStarts = new Uint32Array(b.strStarts);
    this.present = new Uint8Array(b.present);
    this.units = b.unitBytes === null ? this.strBytes : new Uint8Array(b.unitBytes);
    this.unitStarts = b.unitStarts === null ? this.strStarts : new Uint32Array(b.unitStarts);
    this.tokenSlots = new Int32Array(b.tokenSlots);
    this.tokenMask = this.tokenSlots.length - 1;
    this.pairs = new Int32Array(b.pairSlots);
    this.pairMask = this.pairs.length / 4 - 1;
    this.byteIds = new Int32Array(b.byteIds);
    this.spacePredecessors = b.spacePredecessors === null ? null : new Uint8Array(b.spacePredecessors);
  }

  /** Slot index × 4 of the merge of (a, b), or -1. */
  pairSlot(a: number, b: number): number {
    const pairs = this.pairs;
    const mask = this.pairMask;
    let slot = hashPair(a, b) & mask;
    for (;;) {
      const k = slot << 2;
      const l = pairs[k] as number;
      if (l === a && pairs[k + 1] === b) return k;
      if (l < 0) return -1;
      slot = (slot + 1) & mask;
    }
  }

  /** Id of the token whose unit bytes are `b[from, to)`, or -1. */
  idOfUnits(b: Uint8Array, from: number, to: number): number {
    return this.idOfUnitsHashed(b, from, to, hashBytes(b, from, to));
  }

  /** `idOfUnits` with `hashBytes(b, from, to)` already known (`h`). */
  idOfUnitsHashed(b: Uint8Array, from: number, to: number, h: number): number {
    const slots = this.tokenSlots;
    const units = this.units;
    const starts = this.unitStarts;
    const n = to - from;
    let slot = h & this.tokenMask;
    for (;;) {
      const id = slots[slot] as number;
      if (id < 0) return -1;
      const s = starts[id] as number;
      if ((starts[id + 1] as number) - s === n) {
        let i = 0;
        while (i < n && units[s + i] === b[from + i]) i++;
        if (i === n) return id;
      }
      slot = (slot + 1) & this.tokenMask;
    }
  }

  /** The id of a token string, or -1 (a lookup by units, else a scan: for settings, not for text). */
  idOfToken(token: string): number {
    const units = this.byteLevel ? bytesOfSpelling(token) : utf8.encode(token);
    if (units !== null) {
      const id = this.idOfUnits(units, 0, units.length);
      if (id >= 0 && this.tokenOf(id) === token) return id;
    }
    for (const [t, id] of this.entries()) if (t === token) return id;
    return -1;
  }

  /** The token string of `id`, or undefined. */
  tokenOf(id: number): string | undefined {
    if (!(id >= 0 && id < this.idLimit) || this.present[id] === 0) return undefined;
    if (this.#strings === null) this.#strings = new Array(this.idLimit);
    let s = this.#strings[id];
    if (s === undefined) {
      s = utf8d.decode(this.strBytes.subarray(this.strStarts[id] as number, this.strStarts[id + 1] as number));
      this.#strings[id] = s;
    }
    return s;
  }

  /** Number of unit bytes of `id` (0 for an id without a token). */
  unitLength(id: number): number {
    if (!(id >= 0 && id < this.idLimit)) return 0;
    return (this.unitStarts[id + 1] as number) - (this.unitStarts[id] as number);
  }

  /** Every (token, id) of the vocabulary, ascending ids. */
  *entries(): Generator<[string, number]> {
    for (let id = 0; id < this.idLimit; id++) if (this.present[id] !== 0) yield [this.tokenOf(id) as string, id];
  }
}
