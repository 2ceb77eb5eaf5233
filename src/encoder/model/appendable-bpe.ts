/**
 * Appendable BPE: the exact BPE of one pre-token that grows at its end, at a cost per appended
 * byte bounded by the candidate tokens ending there, instead of a re-merge of the whole word.
 *
 * The idea (known as the "appendable encoder"; the argument below is ours, for the Rust crate's
 * BPE): keep, for every prefix w[0, i) of the word, only the last token of its BPE. The BPE of
 * w[0, i) is then the BPE of w[0, j) followed by that token t = w[j, i) (j = i − |t|), and t is
 * the one token ending at i that is *compatible* with the last token p of w[0, j): the BPE of
 * bytes(p) + bytes(t) is [p, t] (for j = 0: the BPE of bytes(t) is [t]).
 *
 * Why (no assumption on the order of the merge list). The crate's loop: while some adjacent pair
 * of symbols has a merge, join the pair of the lowest merge rank, the leftmost among equal ranks.
 * Call a split of a text into tokens *valid* when it is the BPE of that text, and a segment of
 * the text (a byte range) *uncrossed* up to a step when no merge so far joined a symbol inside it
 * to one outside. Lemma: while a segment S stays uncrossed, the whole loop's merges inside S are,
 * step for step, the loop over S's bytes alone. By induction: both hold the same symbols in S; a
 * merge outside S changes no pair inside it; a merge inside S is the lowest-ranked pair of the
 * whole text, so of S too, and the leftmost of that rank there, which is the step the loop over S
 * takes next; and when the whole loop stops, S has no pair left, so the loop over S has stopped
 * too, at the same symbols.
 * 1. Any run of consecutive tokens of a valid split is the valid split of its bytes: symbols
 *    only grow, so no merge ever crossed a token edge, the run is uncrossed to the end, and the
 *    lemma gives its symbols. So the last token p of a prefix's BPE and the token t after it form
 *    a compatible pair, and w[0, j)'s BPE is the rest.
 * 2. If s = (…, p) is the valid split of w[0, j) and (p, t) is valid, then (…, p, t) is the valid
 *    split of w[0, i): suppose a merge first crosses an edge of (…, p, t), at step k. Until k,
 *    w[0, j) and bytes(p) + bytes(t) are uncrossed (their edges are among those edges). An edge
 *    inside w[0, j): the merge joins two symbols inside w[0, j), so by the lemma it is a step of
 *    the loop over w[0, j) alone, which would then cross an edge of its own result s — impossible,
 *    symbols never split. The edge between p and t: likewise a step of the loop over p + t alone,
 *    against (p, t) being valid. So no merge crosses, and by the lemma w[0, j) ends as s and
 *    p + t as (p, t).
 * So exactly one candidate t ending at i is compatible with its predecessor (by 1 the true one
 * is; by 2 any compatible one gives a valid split, and the valid split is unique): the order in
 * which candidates are tried does not matter. `ignore_merges` (a word that is itself a token is
 * that token) applies to the whole word only, after this. No rank order is needed: tiktoken's
 * ranks converted to merges (Llama 3, gpt-oss), where a merge can rank below one making its part,
 * are covered as any list is (an earlier version refused words meeting such a token).
 *
 * Candidates ending at i are found by extending a hash of the bytes right to left (FNV-1a over
 * the reversed bytes) through a bit filter of every token's suffixes: the walk stops at the first
 * length no token ends with. Compatibility is decided by merging the two tokens' bytes with
 * `referenceMerge`, a plain quadratic BPE (the crate's rule, no memo, no ignore_merges), cached.
 *
 * Layer: encoder.
 */

import type { BpeModel } from "./bpe.js";
import type { BpeTables } from "./bpe-tables.js";

/** Why the model's BPE cannot be appended to exactly (checked once), or "" when it can. */
export function appendableReason(model: BpeModel): string {
  const t = model.tables;
  const o = model.options;
  if (!t.byteLevel) return "the model is not byte-level";
  if (o.prefix !== null || o.suffix !== null) return "the model has subword affixes";
  for (let b = 0; b < 256; b++) if ((t.byteIds[b] as number) < 0) return `the vocabulary lacks the byte 0x${b.toString(16)}`;
  const pairs = t.pairs;
  for (let k = 0; k < pairs.length; k += 4) {
    if ((pairs[k] as number) < 0) continue;
    const ids = [pairs[k] as number, pairs[k + 1] as number, pairs[k + 3] as number];
    if (ids.some((id) => id < 0 || id >= t.idLimit)) return "a merge names a token outside the vocabulary";
  }
  return "";
}

/** FNV-1a step over one more byte (the hash runs over a suffix's bytes from its end). */
const step = (h: number, b: number): number => Math.imul(h ^ b, 0x01000193);
const FNV = 0x811c9dc5;
/** Bits of the suffix filter (a power of two): 2 MiB. */
const FILTER_BITS = 1 << 24;
/** Slots of the compatibility cache (direct-mapped: a new pair takes its slot over). */
const COMPAT_SLOTS = 1 << 16;

/**
 * A model's lookup of tokens by their bytes read backwards, its suffix filter and its
 * compatibility cache: built on first use, per model and thread (about 2 MiB of filter plus 4
 * bytes per slot, twice the tokens), never changed after but for the bounded cache.
 */
export class AppendableIndex {
  readonly tables: BpeTables;
  readonly ignoreMerges: boolean;
  /** Bytes of the longest token. */
  readonly maxLength: number;
  readonly #slots: Int32Array;
  readonly #mask: number;
  readonly #filter: Uint8Array;
  /** Compatibility cache: the pair (p + 1, t) of each slot and its answer (0 empty, 1 no, 2 yes). */
  readonly #compatP = new Int32Array(COMPAT_SLOTS);
  readonly #compatT = new Int32Array(COMPAT_SLOTS);
  readonly #compatA = new Uint8Array(COMPAT_SLOTS);
  #sym = new Int32Array(64);

  constructor(model: BpeModel) {
    const t = model.tables;
    this.tables = t;
    this.ignoreMerges = model.options.ignoreMerges;
    const units = t.units;
    const starts = t.unitStarts;
    let n = 0;
    let maxLength = 0;
    for (let id = 0; id < t.idLimit; id++) if (t.present[id] === 2) n++;
    let size = 16;
    while (size < n * 2) size *= 2;
    this.#slots = new Int32Array(size).fill(-1);
    this.#mask = size - 1;
    this.#filter = new Uint8Array(FILTER_BITS / 8);
    for (let id = 0; id < t.idLimit; id++) {
      if (t.present[id] !== 2) continue;
      const s = starts[id] as number;
      const e = starts[id + 1] as number;
      // the id the bytes name (two ids with one spelling: the one the encoder's lookup gives)
      if (e === s || t.idOfUnits(units, s, e) !== id) continue;
      if (e - s > maxLength) maxLength = e - s;
      let h = FNV;
      for (let i = e - 1; i >= s; i--) {
        h = step(h, units[i] as number);
        const bit = (h >>> 0) & (FILTER_BITS - 1);
        this.#filter[bit >>> 3] = (this.#filter[bit >>> 3] as number) | (1 << (bit & 7));
      }
      let slot = (h >>> 0) & this.#mask;
      while ((this.#slots[slot] as number) >= 0) slot = (slot + 1) & this.#mask;
      this.#slots[slot] = id;
    }
    this.maxLength = maxLength;
  }

  /**
   * Writes the id and length of each token that is a suffix of b[0, i), shortest first, to `ids`
   * and `lens` (at least maxLength long); returns how many, plus the lookups made × 65536.
   */
  suffixTokens(b: Uint8Array, i: number, ids: Int32Array, lens: Int32Array): number {
    const t = this.tables;
    const units = t.units;
    const starts = t.unitStarts;
    let h = FNV;
    let steps = 0;
    let n = 0;
    const limit = Math.min(i, this.maxLength);
    for (let len = 1; len <= limit; len++) {
      h = step(h, b[i - len] as number);
      steps++;
      const bit = (h >>> 0) & (FILTER_BITS - 1);
      if (((this.#filter[bit >>> 3] as number) & (1 << (bit & 7))) === 0) break;
      let slot = (h >>> 0) & this.#mask;
      for (;;) {
        const id = this.#slots[slot] as number;
        if (id < 0) break;
        const s = starts[id] as number;
        if ((starts[id + 1] as number) - s === len) {
          let k = 0;
          while (k < len && units[s + k] === b[i - len + k]) k++;
          if (k === len) {
            ids[n] = id;
            lens[n++] = len;
            break;
          }
        }
        slot = (slot + 1) & this.#mask;
      }
    }
    return n + steps * 65536;
  }

  /** Whether the BPE of bytes(p) + bytes(t) is [p, t] (p < 0: whether the BPE of bytes(t) is [t]). */
  compatible(p: number, t: number): boolean {
    const slot = (Math.imul(p + 1, 0x9e3779b1) ^ Math.imul(t, 0x85ebca77)) >>> 16;
    if (this.#compatA[slot] !== 0 && this.#compatP[slot] === p + 1 && this.#compatT[slot] === t) return this.#compatA[slot] === 2;
    const tb = this.tables;
    const bytes: number[] = [];
    const pushUnits = (id: number): void => {
      for (let k = tb.unitStarts[id] as number; k < (tb.unitStarts[id + 1] as number); k++) bytes.push(tb.units[k] as number);
    };
    if (p >= 0) pushUnits(p);
    const left = bytes.length;
    pushUnits(t);
    const got = this.referenceMerge(bytes, left);
    const ok = p >= 0 ? got.length === 2 && got[0] === p && got[1] === t : got.length === 1 && got[0] === t;
    this.#compatP[slot] = p + 1;
    this.#compatT[slot] = t;
    this.#compatA[slot] = ok ? 2 : 1;
    return ok;
  }

  /**
   * The BPE of a byte string by the crate's rule, plainly: join the adjacent pair of the lowest
   * rank, the leftmost among equal ranks, until none is left (no memo, no ignore_merges). The
   * reference the appendable encoder's compatibility rests on; quadratic, for short inputs.
   * With `edge` (0 < edge < length), a merge joining the bytes before it to those after stops
   * the loop early: the answer then only has to show that the two sides were joined (its symbols
   * so far, fewer than the sides would give).
   */
  referenceMerge(bytes: readonly number[], edge = 0): number[] {
    const t = this.tables;
    if (this.#sym.length < bytes.length) this.#sym = new Int32Array(bytes.length * 2);
    const sym = this.#sym;
    let m = bytes.length;
    // symbols before the edge (the edge moves left as they merge)
    let cut = edge > 0 && edge < m ? edge : -1;
    for (let i = 0; i < m; i++) sym[i] = t.byteIds[bytes[i] as number] as number;
    for (;;) {
      let best = 0x7fffffff;
      let at = -1;
      let merged = -1;
      for (let i = 0; i + 1 < m; i++) {
        const k = t.pairSlot(sym[i] as number, sym[i + 1] as number);
        if (k >= 0 && (t.pairs[k + 2] as number) < best) {
          best = t.pairs[k + 2] as number;
          at = i;
          merged = t.pairs[k + 3] as number;
        }
      }
      if (at < 0) break;
      if (cut > 0) {
        if (at === cut - 1) return [merged];
        if (at < cut - 1) cut--;
      }
      sym[at] = merged;
      for (let i = at + 1; i + 1 < m; i++) sym[i] = sym[i + 1] as number;
      m--;
    }
    return Array.from(sym.subarray(0, m));
  }

  /** The id of the token whose bytes are b[0, n), or -1. */
  tokenOf(b: Uint8Array, n: number): number {
    return n > 0 && n <= this.maxLength ? this.tables.idOfUnits(b, 0, n) : -1;
  }
}

/**
 * One growing word: its bytes, and for each byte offset i > 0 the last token of the BPE of the
 * first i bytes and that BPE's length. O(bytes) memory; `push` costs the candidates it tries.
 */
export class AppendableBpe {
  readonly index: AppendableIndex;
  #bytes = new Uint8Array(64);
  #last = new Int32Array(64);
  #count = new Int32Array(64);
  #n = 0;
  /** Suffix lookups and compatibility checks made, in total. */
  steps = 0;
  readonly #cand: Int32Array;
  readonly #candLen: Int32Array;

  constructor(index: AppendableIndex) {
    this.index = index;
    this.#cand = new Int32Array(index.maxLength + 1);
    this.#candLen = new Int32Array(index.maxLength + 1);
  }

  /** Bytes so far. */
  get length(): number {
    return this.#n;
  }

  /**
   * Appends bytes b[from, to). Returns "ok"; or, leaving the word as it was, "none" when some
   * offset has no compatible candidate — by the argument only when the BPE there is a token whose
   * bytes another id also spells (the lookup offers one id per spelling). The caller then
   * encodes the word whole and counts the event.
   */
  push(b: ArrayLike<number>, from: number, to: number): "ok" | "none" {
    const need = this.#n + (to - from) + 1;
    if (this.#bytes.length < need) {
      const size = Math.max(need, this.#bytes.length * 2);
      const bytes = new Uint8Array(size);
      bytes.set(this.#bytes.subarray(0, this.#n));
      this.#bytes = bytes;
      const last = new Int32Array(size);
      last.set(this.#last.subarray(0, this.#n + 1));
      this.#last = last;
      const count = new Int32Array(size);
      count.set(this.#count.subarray(0, this.#n + 1));
      this.#count = count;
    }
    const index = this.index;
    const n0 = this.#n;
    for (let x = from; x < to; x++) {
      this.#bytes[this.#n++] = b[x] as number;
      const i = this.#n;
      const r = index.suffixTokens(this.#bytes, i, this.#cand, this.#candLen);
      const nc = r & 0xffff;
      this.steps += (r - nc) / 65536;
      let found = false;
      // longest first: usually the answer
      for (let c = nc - 1; c >= 0; c--) {
        const id = this.#cand[c] as number;
        const j = i - (this.#candLen[c] as number);
        this.steps++;
        if (index.compatible(j === 0 ? -1 : (this.#last[j] as number), id)) {
          this.#last[i] = id;
          this.#count[i] = (j === 0 ? 0 : (this.#count[j] as number)) + 1;
          found = true;
          break;
        }
      }
      if (!found) {
        this.#n = n0;
        return "none";
      }
    }
    return "ok";
  }

  /** The number of tokens of the word so far (ignore_merges applied). */
  count(): number {
    if (this.#n === 0) return 0;
    if (this.index.ignoreMerges && this.index.tokenOf(this.#bytes, this.#n) >= 0) return 1;
    return this.#count[this.#n] as number;
  }

  /** The ids of the word so far, appended to `out` (ignore_merges applied). */
  ids(out: number[]): void {
    if (this.#n === 0) return;
    if (this.index.ignoreMerges) {
      const whole = this.index.tokenOf(this.#bytes, this.#n);
      if (whole >= 0) {
        out.push(whole);
        return;
      }
    }
    const at = out.length;
    const t = this.index.tables;
    for (let i = this.#n; i > 0; ) {
      const id = this.#last[i] as number;
      out.push(id);
      i -= t.unitLength(id);
    }
    // the chain runs from the end: reverse the part just added
    for (let a = at, z = out.length - 1; a < z; a++, z--) {
      const x = out[a] as number;
      out[a] = out[z] as number;
      out[z] = x;
    }
  }
}
