/**
 * The ids of pre-tokens seen before, keyed by their UTF-16 units, in fixed typed arrays: a hit
 * costs one hash over the piece, one probe and a compare, and allocates nothing (no substring,
 * no Map key). A piece's ids are a pure function of the piece for a given model, so a hit is
 * always the answer a miss would compute.
 *
 * Memory is bounded by construction: `entries` keys of at most `maxKey` units in a key arena of
 * `keyUnits` units and an id arena of `idUnits` ids. When any of them is full the memo starts over
 * (one fill of the slot table); a working set that fits is never evicted piecemeal. The default
 * sizes (2^17 entries, 2 M key units, 512 k ids, 2^18 slots: about 11 MB) hold the distinct
 * pre-tokens of several megabytes of prose or multilingual text (bench/README.md, "Encoder").
 *
 * Layer: encoder.
 */
import type { U32List } from "../u32-list.js";

export interface PieceMemoSizes {
  /** Most pieces held. @defaultValue 131072 */
  entries?: number;
  /** UTF-16 units of all keys. @defaultValue 2097152 */
  keyUnits?: number;
  /** Ids of all values. @defaultValue 524288 */
  idUnits?: number;
  /** Longest piece memoized, in UTF-16 units. @defaultValue 64 */
  maxKey?: number;
}

export class PieceMemo {
  readonly maxKey: number;
  readonly #slots: Int32Array;
  readonly #mask: number;
  readonly #hash: Int32Array;
  readonly #keyStart: Int32Array;
  readonly #keyLen: Int32Array;
  readonly #valStart: Int32Array;
  readonly #valLen: Int32Array;
  readonly #keys: Uint16Array;
  readonly #vals: Uint32Array;
  #count = 0;
  #keyUsed = 0;
  #valUsed = 0;
  /** Times the memo started over because it was full. */
  resets = 0;

  constructor(sizes: PieceMemoSizes = {}) {
    const entries = sizes.entries ?? 1 << 17;
    this.maxKey = sizes.maxKey ?? 64;
    let cap = 16;
    while (cap < entries * 2) cap *= 2;
    this.#slots = new Int32Array(cap).fill(-1);
    this.#mask = cap - 1;
    this.#hash = new Int32Array(entries);
    this.#keyStart = new Int32Array(entries);
    this.#keyLen = new Int32Array(entries);
    this.#valStart = new Int32Array(entries);
    this.#valLen = new Int32Array(entries);
    this.#keys = new Uint16Array(sizes.keyUnits ?? 1 << 21);
    this.#vals = new Uint32Array(sizes.idUnits ?? 1 << 19);
  }

  /** Bytes held by the memo's arrays (its bound). */
  get bytes(): number {
    return this.#slots.byteLength + this.#hash.byteLength * 5 + this.#keys.byteLength + this.#vals.byteLength;
  }

  /** Pieces held. */
  get size(): number {
    return this.#count;
  }

  /** The hash `find` and `add` use for text[s, e). */
  static hash(text: string, s: number, e: number): number {
    let h = 0x811c9dc5;
    for (let i = s; i < e; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return h;
  }

  /** The entry of text[s, e) with hash h, or -1. */
  find(text: string, s: number, e: number, h: number): number {
    const n = e - s;
    const slots = this.#slots;
    const keys = this.#keys;
    let slot = h & this.#mask;
    for (;;) {
      const k = slots[slot] as number;
      if (k < 0) return -1;
      if (this.#hash[k] === h && this.#keyLen[k] === n) {
        const ks = this.#keyStart[k] as number;
        let i = 0;
        while (i < n && keys[ks + i] === text.charCodeAt(s + i)) i++;
        if (i === n) return k;
      }
      slot = (slot + 1) & this.#mask;
    }
  }

  /** Appends the ids of entry k (from find) to `out`. */
  appendIds(k: number, out: U32List): void {
    const vs = this.#valStart[k] as number;
    const n = this.#valLen[k] as number;
    out.reserve(n);
    const data = out.data;
    const at = out.length;
    const vals = this.#vals;
    for (let i = 0; i < n; i++) data[at + i] = vals[vs + i] as number;
    out.length = at + n;
  }

  /** Remembers text[s, e) (hash h, not present) → ids[from, to). */
  add(text: string, s: number, e: number, h: number, ids: Uint32Array, from: number, to: number): void {
    const n = e - s;
    const m = to - from;
    if (n > this.maxKey || m > this.maxKey * 4) return;
    if (this.#count === this.#hash.length || this.#keyUsed + n > this.#keys.length || this.#valUsed + m > this.#vals.length) this.clear(true);
    const k = this.#count++;
    const keys = this.#keys;
    const ks = this.#keyUsed;
    for (let i = 0; i < n; i++) keys[ks + i] = text.charCodeAt(s + i);
    this.#keyUsed += n;
    const vals = this.#vals;
    const vs = this.#valUsed;
    for (let i = 0; i < m; i++) vals[vs + i] = ids[from + i] as number;
    this.#valUsed += m;
    this.#hash[k] = h;
    this.#keyStart[k] = ks;
    this.#keyLen[k] = n;
    this.#valStart[k] = vs;
    this.#valLen[k] = m;
    let slot = h & this.#mask;
    while ((this.#slots[slot] as number) >= 0) slot = (slot + 1) & this.#mask;
    this.#slots[slot] = k;
  }

  /** Forgets every piece. */
  clear(full = false): void {
    if (this.#count === 0) return;
    if (full) this.resets++;
    this.#slots.fill(-1);
    this.#count = 0;
    this.#keyUsed = 0;
    this.#valUsed = 0;
  }
}
