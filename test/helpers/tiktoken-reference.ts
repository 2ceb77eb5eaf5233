/**
 * A slow, plain reference of tiktoken's encoding for the format tests (not the encoder deltatok
 * ships): split text at special tokens (when allowed), split the rest with the pattern (the
 * Oniguruma translation of src/encoder/regex, which agrees with tiktoken's fancy-regex on these
 * patterns), then byte-pair-merge each piece over the ranks, lowest rank first and leftmost on
 * ties, as tiktoken's `_byte_pair_merge` does (here with a heap so 25,000-character pieces stay
 * cheap).
 */
import { translateOniguruma } from "../../src/encoder/regex/oniguruma.js";
import { findMatches } from "../../src/encoder/regex/pattern-split.js";
import type { TiktokenRanks } from "../../src/load/formats/tiktoken-ranks.js";
import { latin1 } from "../../src/load/formats/tiktoken-ranks.js";

const utf8 = new TextEncoder();

export interface SpecialToken {
  readonly id: number;
  readonly text: string;
}

export class TiktokenReference {
  readonly #rankOf = new Map<string, number>();
  readonly #bytesOf = new Map<number, Uint8Array>();
  readonly #regex: RegExp;
  readonly #specials: readonly SpecialToken[];
  readonly #specialId = new Map<string, number>();

  /** `idOffset` is added to every rank (tekken's special-slot offset). */
  constructor(ranks: TiktokenRanks, pattern: string, specials: readonly SpecialToken[], readonly idOffset = 0) {
    for (let i = 0; i < ranks.size; i++) {
      const token = ranks.bytes.subarray(ranks.offsets[i] as number, ranks.offsets[i + 1] as number);
      this.#rankOf.set(latin1(token), ranks.ranks[i] as number);
      this.#bytesOf.set(ranks.ranks[i] as number, token);
    }
    this.#regex = translateOniguruma(pattern).regex;
    // Longest first, so a special that prefixes another does not win (none of the fixtures has one).
    this.#specials = [...specials].sort((a, b) => b.text.length - a.text.length);
    for (const s of specials) this.#specialId.set(s.text, s.id);
  }

  /** tiktoken `encode(text, allowed_special="all")` (`allowSpecial`) or `encode_ordinary(text)`. */
  encode(text: string, allowSpecial: boolean): number[] {
    const out: number[] = [];
    let start = 0;
    while (start <= text.length) {
      let at = -1;
      let special: SpecialToken | null = null;
      if (allowSpecial) {
        for (const s of this.#specials) {
          const k = text.indexOf(s.text, start);
          if (k >= 0 && (at < 0 || k < at)) {
            at = k;
            special = s;
          }
        }
      }
      const end = at < 0 ? text.length : at;
      this.#encodeOrdinary(text.slice(start, end), out);
      if (special === null) break;
      out.push(special.id);
      start = at + special.text.length;
    }
    return out;
  }

  /** Bytes of the ids (special tokens as their text), decoded as UTF-8 with replacement. */
  decode(ids: readonly number[]): string {
    const parts: Uint8Array[] = [];
    const specialText = new Map([...this.#specialId].map(([t, id]) => [id, t]));
    for (const id of ids) {
      const text = specialText.get(id);
      if (text !== undefined) parts.push(utf8.encode(text));
      else parts.push(this.#bytesOf.get(id - this.idOffset) ?? new Uint8Array(0));
    }
    const total = parts.reduce((n, p) => n + p.length, 0);
    const all = new Uint8Array(total);
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    return new TextDecoder("utf-8", { ignoreBOM: true }).decode(all);
  }

  #encodeOrdinary(text: string, out: number[]): void {
    if (text === "") return;
    const spans = findMatches(this.#regex, text);
    for (let k = 0; k < spans.length; k += 2) {
      const piece = utf8.encode(text.slice(spans[k] as number, spans[k + 1] as number));
      const whole = this.#rankOf.get(latin1(piece));
      if (whole !== undefined) out.push(whole + this.idOffset);
      else for (const r of this.#merge(piece)) out.push(r + this.idOffset);
    }
  }

  /** Byte-pair merge of one piece: lowest-rank adjacent pair first, leftmost on ties. */
  #merge(piece: Uint8Array): number[] {
    const n = piece.length;
    const end = Array.from({ length: n }, (_, i) => i + 1);
    const next = Array.from({ length: n }, (_, i) => (i + 1 < n ? i + 1 : -1));
    const prev = Array.from({ length: n }, (_, i) => i - 1);
    const alive = new Array<boolean>(n).fill(true);
    const heap: Array<[number, number, number, number]> = []; // rank, left, leftEnd, rightEnd
    const less = (a: [number, number, number, number], b: [number, number, number, number]): boolean =>
      a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
    const push = (e: [number, number, number, number]): void => {
      heap.push(e);
      let i = heap.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!less(heap[i] as never, heap[p] as never)) break;
        [heap[i], heap[p]] = [heap[p] as never, heap[i] as never];
        i = p;
      }
    };
    const pop = (): [number, number, number, number] => {
      const top = heap[0] as [number, number, number, number];
      const last = heap.pop() as [number, number, number, number];
      if (heap.length > 0) {
        heap[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < heap.length && less(heap[l] as never, heap[m] as never)) m = l;
          if (r < heap.length && less(heap[r] as never, heap[m] as never)) m = r;
          if (m === i) break;
          [heap[i], heap[m]] = [heap[m] as never, heap[i] as never];
          i = m;
        }
      }
      return top;
    };
    const consider = (left: number): void => {
      const right = next[left] as number;
      if (left < 0 || right < 0) return;
      const rank = this.#rankOf.get(latin1(piece.subarray(left, end[right] as number)));
      if (rank !== undefined) push([rank, left, end[left] as number, end[right] as number]);
    };
    for (let i = 0; i + 1 < n; i++) consider(i);
    while (heap.length > 0) {
      const [, left, leftEnd, rightEnd] = pop();
      const right = next[left] as number;
      if (!alive[left] || right < 0 || end[left] !== leftEnd || end[right] !== rightEnd) continue;
      end[left] = rightEnd;
      alive[right] = false;
      next[left] = next[right] as number;
      if ((next[right] as number) >= 0) prev[next[right] as number] = left;
      if ((prev[left] as number) >= 0) consider(prev[left] as number);
      consider(left);
    }
    const out: number[] = [];
    for (let i = 0; i >= 0; i = next[i] as number) {
      const rank = this.#rankOf.get(latin1(piece.subarray(i, end[i] as number)));
      if (rank === undefined) throw new Error("a piece has no rank (a single byte is missing)");
      out.push(rank);
    }
    return out;
  }
}

/**
 * transformers' slow-tokenizer split for these fixtures: the text cut at added tokens (earliest
 * occurrence, longest at a position), the parts between them handed to `encodePart`.
 */
export function splitOnAddedTokens(text: string, added: ReadonlyMap<string, number>, encodePart: (part: string) => number[]): number[] {
  const tokens = [...added.keys()].sort((a, b) => b.length - a.length);
  const out: number[] = [];
  let start = 0;
  for (;;) {
    let at = -1;
    let found = "";
    for (const t of tokens) {
      const k = text.indexOf(t, start);
      if (k >= 0 && (at < 0 || k < at || (k === at && t.length > found.length))) {
        at = k;
        found = t;
      }
    }
    if (at < 0) {
      if (start < text.length) for (const id of encodePart(text.slice(start))) out.push(id);
      return out;
    }
    if (at > start) for (const id of encodePart(text.slice(start, at))) out.push(id);
    out.push(added.get(found) as number);
    start = at + found.length;
  }
}
