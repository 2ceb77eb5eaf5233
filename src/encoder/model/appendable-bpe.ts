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
 * Initial symbols. Nothing above reads what a symbol spells: only the crate's loop over a word's
 * initial symbols, and that those of a text are the concatenation of those of its parts. A
 * byte-level model's initial symbols are the word's bytes. A character-level model's
 * (SentencePiece-style BPE: Gemma, Llama 2, Gemini; no subword affixes) are its characters, each
 * the token spelling it, or for a character the vocabulary lacks the byte-fallback pieces
 * `<0xXX>` of its UTF-8 bytes; they depend on the character alone, so the concatenation holds.
 * Offsets i are UTF-8 byte offsets in both cases, and a token's bytes are its string's UTF-8: a
 * candidate ending at a character's end starts at a character boundary (UTF-8 is
 * self-synchronizing, a token's bytes begin with a lead byte), and offsets inside a character
 * hold no entry. The other character-level cases:
 * - a character without a token: its pieces are symbols no merge names (checked: a merge naming
 *   a byte-fallback piece refuses the model), so no merge ever crosses their edges, and by the
 *   lemma the BPE of the word is the BPE of the text before the character, its pieces, and the
 *   BPE of the text after it, each alone. The recurrence restarts after it (`floor`): there the
 *   first token t needs only the BPE of bytes(t) to be [t], and no candidate reaching back into
 *   or before the character is taken;
 * - a character with neither a token nor all its pieces (Gemini lacks `<0x09>`) is the unknown
 *   token, consecutive ones fused into one with fuse_unk (a byte-fallback character between them
 *   ends the fusion, as in the crate): no merge names it (checked), so it too is a symbol whose
 *   edges no merge crosses, and the recurrence restarts after it; a fused one extends the last
 *   token instead of adding one. A model whose unknown characters are dropped (no unk token, or
 *   one the vocabulary lacks) is refused unless all 256 pieces exist, so that none is;
 * - compatibility merges the two tokens' characters turned into symbols as the model turns a
 *   word's, byte-fallback pieces included.
 * Dropout is refused before (src/tokenize/stream.ts gives such a model no cut rule); a merge
 * naming the unknown token refuses the model too.
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
  if (o.prefix !== null || o.suffix !== null) return "the model has subword affixes";
  // symbols no merge may name: a character-level model's byte-fallback pieces and unknown token
  const fixed = new Set<number>();
  if (t.byteLevel) {
    for (let b = 0; b < 256; b++) if ((t.byteIds[b] as number) < 0) return `the vocabulary lacks the byte 0x${b.toString(16)}`;
  } else {
    const fb = model.byteFallbackIds;
    let pieces = 0;
    for (let b = 0; b < 256 && fb !== null; b++) {
      if ((fb[b] as number) < 0) continue;
      fixed.add(fb[b] as number);
      pieces++;
    }
    if (pieces < 256 && !(o.unkId >= 0 && o.missingUnk == null)) return "a character-level model that drops unknown characters (no unknown token, not every byte-fallback piece)";
    if (o.unkId >= 0) fixed.add(o.unkId);
  }
  const pairs = t.pairs;
  for (let k = 0; k < pairs.length; k += 4) {
    if ((pairs[k] as number) < 0) continue;
    const ids = [pairs[k] as number, pairs[k + 1] as number, pairs[k + 3] as number];
    if (ids.some((id) => id < 0 || id >= t.idLimit)) return "a merge names a token outside the vocabulary";
    if (fixed.has(ids[0] as number) || fixed.has(ids[1] as number)) return "a merge names a byte-fallback piece or the unknown token";
  }
  return "";
}

/** FNV-1a step over one more byte (the hash runs over a suffix's bytes from its end). */
const step = (h: number, b: number): number => Math.imul(h ^ b, 0x01000193);
const FNV = 0x811c9dc5;
/** Bits of the suffix filter (a power of two): 2 MiB. */
const FILTER_BITS = 1 << 24;
/** Slots of the compatibility cache (two-way: a pair may sit in either slot of its set; a new pair takes the first, the pair there moves to the second). */
const COMPAT_SLOTS = 1 << 16;

/**
 * A model's lookup of tokens by their bytes read backwards, its suffix filter and its
 * compatibility cache: built on first use, per model and thread (about 2 MiB of filter plus 4
 * bytes per slot, twice the tokens), never changed after but for the bounded cache.
 */
export class AppendableIndex {
  readonly tables: BpeTables;
  readonly ignoreMerges: boolean;
  /** Whether the initial symbols are characters (a character-level model) rather than bytes. */
  readonly charLevel: boolean;
  /** A character-level model's byte-fallback piece ids (-1 where missing; all -1 without byte_fallback). */
  readonly fallback: Int32Array;
  /** The unknown token (-1: none) and whether consecutive unknown characters fuse. */
  readonly unkId: number;
  readonly fuseUnk: boolean;
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
    this.charLevel = !t.byteLevel;
    this.fallback = model.byteFallbackIds ?? new Int32Array(256).fill(-1);
    this.unkId = model.options.unkId;
    this.fuseUnk = model.options.fuseUnk;
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
    const slot = ((Math.imul(p + 1, 0x9e3779b1) ^ Math.imul(t, 0x85ebca77)) >>> 16) & ~1;
    const cp = this.#compatP;
    const ct = this.#compatT;
    const ca = this.#compatA;
    if (ca[slot] !== 0 && cp[slot] === p + 1 && ct[slot] === t) return ca[slot] === 2;
    if (ca[slot + 1] !== 0 && cp[slot + 1] === p + 1 && ct[slot + 1] === t) return ca[slot + 1] === 2;
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
    cp[slot + 1] = cp[slot] as number;
    ct[slot + 1] = ct[slot] as number;
    ca[slot + 1] = ca[slot] as number;
    cp[slot] = p + 1;
    ct[slot] = t;
    ca[slot] = ok ? 2 : 1;
    return ok;
  }

  /**
   * The initial symbols of bytes[from, to) as the model makes a word's (a byte-level model's
   * bytes; a character-level model's characters, or the byte-fallback pieces of one it lacks),
   * appended to `out`.
   */
  symbolsOf(bytes: ArrayLike<number>, from: number, to: number, out: number[]): void {
    const t = this.tables;
    if (!this.charLevel) {
      for (let i = from; i < to; i++) out.push(t.byteIds[bytes[i] as number] as number);
      return;
    }
    const scratch = this.#charScratch;
    let unk = false;
    for (let i = from; i < to; ) {
      const b0 = bytes[i] as number;
      const len = Math.min(to - i, b0 < 0x80 ? 1 : b0 < 0xe0 ? 2 : b0 < 0xf0 ? 3 : 4);
      for (let k = 0; k < len; k++) scratch[k] = bytes[i + k] as number;
      i += len;
      const id = t.idOfUnits(scratch, 0, len);
      const kind = this.kindOf(scratch, 0, len, id);
      if (kind === 0) out.push(id);
      else if (kind === 1) for (let k = 0; k < len; k++) out.push(this.fallback[scratch[k] as number] as number);
      else if (!(unk && this.fuseUnk)) out.push(this.unkId);
      unk = kind === 2;
    }
  }

  /**
   * How a character-level model turns the character b[from, to) (`id`: the token spelling it, or
   * -1) into symbols: 0 its token, 1 its byte-fallback pieces, 2 the unknown token.
   */
  kindOf(b: ArrayLike<number>, from: number, to: number, id: number): 0 | 1 | 2 {
    if (id >= 0) return 0;
    for (let k = from; k < to; k++) if ((this.fallback[b[k] as number] as number) < 0) return 2;
    return 1;
  }

  readonly #charScratch = new Uint8Array(4);

  /**
   * The BPE of a byte string by the crate's rule, plainly: its initial symbols (`symbolsOf`),
   * then join the adjacent pair of the lowest rank, the leftmost among equal ranks, until none is
   * left (no memo, no ignore_merges). The reference the appendable encoder's compatibility rests
   * on; quadratic, for short inputs. With `edge` (0 < edge < length, a character boundary), a
   * merge joining the symbols before it to those after stops the loop early: the answer then only
   * has to show that the two sides were joined (its symbols so far, fewer than the sides would give).
   */
  referenceMerge(bytes: readonly number[], edge = 0): number[] {
    const t = this.tables;
    const init: number[] = [];
    this.symbolsOf(bytes, 0, edge > 0 && edge < bytes.length ? edge : 0, init);
    // symbols before the edge (the edge moves left as they merge)
    let cut = edge > 0 && edge < bytes.length ? init.length : -1;
    this.symbolsOf(bytes, cut > 0 ? edge : 0, bytes.length, init);
    if (this.#sym.length < init.length) this.#sym = new Int32Array(init.length * 2);
    const sym = this.#sym;
    let m = init.length;
    for (let i = 0; i < m; i++) sym[i] = init[i] as number;
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
 * One growing word: its bytes, and for each offset i > 0 where a symbol ends the last token of
 * the BPE of the first i bytes, where that token starts, and that BPE's length. O(bytes) memory;
 * `push` costs the candidates it tries.
 */
export class AppendableBpe {
  readonly index: AppendableIndex;
  #bytes = new Uint8Array(64);
  #last = new Int32Array(64);
  #from = new Int32Array(64);
  #count = new Int32Array(64);
  #n = 0;
  /** Where the recurrence restarts: just after the last character written as byte-fallback pieces or unknown (0: the start). */
  #floor = 0;
  /** Where the last unknown token starts, while it ends at #unkEnd (-1: the last character was not unknown). */
  #unkFrom = -1;
  #unkEnd = 0;
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
   * Appends bytes b[from, to) (for a character-level model whole UTF-8 characters). Returns
   * "ok"; or, leaving the word as it was, "none" when some offset has no compatible candidate —
   * by the argument only when the BPE there is a token whose bytes another id also spells (the
   * lookup offers one id per spelling). The caller then encodes the word whole and counts the event.
   */
  push(b: ArrayLike<number>, from: number, to: number): "ok" | "none" {
    const need = this.#n + (to - from) + 1;
    if (this.#bytes.length < need) {
      const size = Math.max(need, this.#bytes.length * 2);
      const grow = <T extends Uint8Array | Int32Array>(a: T, n: number): T => {
        const c = new (a.constructor as new (n: number) => T)(size);
        c.set(a.subarray(0, n));
        return c;
      };
      this.#bytes = grow(this.#bytes, this.#n);
      this.#last = grow(this.#last, this.#n + 1);
      this.#from = grow(this.#from, this.#n + 1);
      this.#count = grow(this.#count, this.#n + 1);
    }
    const index = this.index;
    const fb = index.fallback;
    const charLevel = index.charLevel;
    const n0 = this.#n;
    const floor0 = this.#floor;
    const unk0 = this.#unkFrom;
    const unkEnd0 = this.#unkEnd;
    /** Where the character being read started (character-level models). */
    let charStart = this.#n;
    for (let x = from; x < to; x++) {
      this.#bytes[this.#n++] = b[x] as number;
      const i = this.#n;
      if (charLevel) {
        const b0 = this.#bytes[charStart] as number;
        const len = b0 < 0x80 ? 1 : b0 < 0xe0 ? 2 : b0 < 0xf0 ? 3 : 4;
        if (i - charStart < len) {
          this.#last[i] = -1;
          continue;
        }
        const kind = index.kindOf(this.#bytes, charStart, i, index.tables.idOfUnits(this.#bytes, charStart, i));
        if (kind === 1) {
          // no token spells the character: its byte-fallback pieces, and the recurrence restarts after it
          for (let k = charStart; k < i; k++) {
            this.#last[k + 1] = fb[this.#bytes[k] as number] as number;
            this.#from[k + 1] = k;
            this.#count[k + 1] = (this.#count[k] as number) + 1;
          }
          this.#unkFrom = -1;
        } else if (kind === 2) {
          // the unknown token, fused with one ending right here
          const j = index.fuseUnk && this.#unkFrom >= 0 && this.#unkEnd === charStart ? this.#unkFrom : charStart;
          this.#last[i] = index.unkId;
          this.#from[i] = j;
          this.#count[i] = (this.#count[j] as number) + 1;
          this.#unkFrom = j;
          this.#unkEnd = i;
        }
        if (kind !== 0) {
          this.#floor = i;
          charStart = i;
          continue;
        }
        this.#unkFrom = -1;
        charStart = i;
      }
      const floor = this.#floor;
      const r = index.suffixTokens(this.#bytes, i, this.#cand, this.#candLen);
      const nc = r & 0xffff;
      this.steps += (r - nc) / 65536;
      let found = false;
      // longest first: usually the answer
      for (let c = nc - 1; c >= 0; c--) {
        const id = this.#cand[c] as number;
        const j = i - (this.#candLen[c] as number);
        if (j < floor) continue;
        const p = j === floor ? -1 : (this.#last[j] as number);
        if (j > floor && p < 0) continue;
        this.steps++;
        if (index.compatible(p, id)) {
          this.#last[i] = id;
          this.#from[i] = j;
          this.#count[i] = (this.#count[j] as number) + 1;
          found = true;
          break;
        }
      }
      if (!found) {
        this.#n = n0;
        this.#floor = floor0;
        this.#unkFrom = unk0;
        this.#unkEnd = unkEnd0;
        return "none";
      }
    }
    if (charLevel && charStart !== this.#n) {
      // a character cut off at the end: not expected (callers push whole characters)
      this.#n = n0;
      this.#floor = floor0;
      this.#unkFrom = unk0;
      this.#unkEnd = unkEnd0;
      return "none";
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
    for (let i = this.#n; i > 0; i = this.#from[i] as number) out.push(this.#last[i] as number);
    // the chain runs from the end: reverse the part just added
    for (let a = at, z = out.length - 1; a < z; a++, z--) {
      const x = out[a] as number;
      out[a] = out[z] as number;
      out[z] = x;
    }
  }
}
