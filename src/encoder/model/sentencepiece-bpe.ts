/**
 * SentencePiece's BPE model (bpe_model.cc), which differs from tokenizers.json BPE: there is no
 * merge list and no pre-tokenization. The whole normalized text starts as characters (a
 * USER_DEFINED piece that prefixes the text is one frozen symbol, never merged); every adjacent
 * pair whose concatenation is a piece (NORMAL, USER_DEFINED or UNUSED) is a candidate scored by
 * that piece's score; the best candidate is merged first — highest score, then leftmost — and
 * new neighbours become candidates, until none is left. Candidates made stale by an earlier merge
 * are skipped when they surface (their sides' lengths no longer add up).
 *
 * Symbols left that are UNUSED pieces are split back along the pair recorded for that piece
 * (the last pair recorded wins, as in sentencepiece's `rev_merge` map). Each final symbol's id is
 * looked up as PieceToId does: CONTROL/UNKNOWN/BYTE pieces first, then the others, else unknown.
 *
 * Layer: encoder.
 */

import { ByteTrie, oneCharLen } from "./byte-trie.js";
import type { PieceSpans } from "./piece-spans.js";
import {
  PIECE_NORMAL,
  PIECE_UNUSED,
  PIECE_USER_DEFINED,
  type SentencePieceModelData,
} from "./sentencepiece-model.js";

const encoder = new TextEncoder();

export class SentencePieceBpeModel {
  /** NORMAL, USER_DEFINED and UNUSED pieces (sentencepiece's `pieces_`). */
  readonly #pieces: ByteTrie;
  /** CONTROL, UNKNOWN and BYTE pieces (`reserved_id_map_`). */
  readonly #reserved: ByteTrie;
  /** USER_DEFINED pieces (the prefix matcher), or null when there are none. */
  readonly #userDefined: ByteTrie | null;
  readonly #types: Uint8Array;
  readonly #scores: Float32Array;
  readonly #unkId: number;
  // Working state, reused across calls.
  #symStart = new Int32Array(0);
  #symLen = new Int32Array(0);
  #prev = new Int32Array(0);
  #next = new Int32Array(0);
  #frozen = new Uint8Array(0);
  readonly #heap = new PairHeap();
  /** Unused piece id → byte length of the left side of the last pair that formed it. */
  readonly #revMerge = new Map<number, number>();

  constructor(model: SentencePieceModelData) {
    const normalKeys: Uint8Array[] = [];
    const normalIds: number[] = [];
    const reservedKeys: Uint8Array[] = [];
    const reservedIds: number[] = [];
    const userKeys: Uint8Array[] = [];
    const userIds: number[] = [];
    for (let id = 0; id < model.pieces.length; id++) {
      const type = model.types[id] as number;
      const key = encoder.encode(model.pieces[id] as string);
      if (type === PIECE_NORMAL || type === PIECE_USER_DEFINED || type === PIECE_UNUSED) {
        normalKeys.push(key);
        normalIds.push(id);
      } else {
        reservedKeys.push(key);
        reservedIds.push(id);
      }
      if (type === PIECE_USER_DEFINED) {
        userKeys.push(key);
        userIds.push(id);
      }
    }
    this.#pieces = new ByteTrie(normalKeys, normalIds);
    this.#reserved = new ByteTrie(reservedKeys, reservedIds);
    this.#userDefined = userKeys.length > 0 ? new ByteTrie(userKeys, userIds) : null;
    this.#types = model.types;
    this.#scores = model.scores;
    this.#unkId = model.unkId;
  }

  /** Segments `text[0, end)` (normalized UTF-8) into `out` (cleared first). */
  encode(text: Uint8Array, end: number, out: PieceSpans): void {
    out.clear();
    if (end === 0) return;
    this.#reserve(end);
    const symStart = this.#symStart;
    const symLen = this.#symLen;
    const prev = this.#prev;
    const next = this.#next;
    const frozen = this.#frozen;
    const heap = this.#heap;
    const revMerge = this.#revMerge;
    heap.clear();
    revMerge.clear();

    // Split into characters and user-defined symbols.
    let count = 0;
    for (let pos = 0; pos < end; ) {
      let length = 0;
      let freeze = 0;
      if (this.#userDefined !== null) {
        length = this.#userDefined.longestPrefix(text, pos, end);
        if (length > 0) freeze = 1;
      }
      if (length === 0) length = Math.min(oneCharLen(text[pos] as number), end - pos);
      symStart[count] = pos;
      symLen[count] = length;
      prev[count] = count - 1;
      frozen[count] = freeze;
      pos += length;
      next[count] = pos < end ? count + 1 : -1;
      count++;
    }

    const addPair = (left: number, right: number): void => {
      if (left === -1 || right === -1 || frozen[left] === 1 || frozen[right] === 1) return;
      const start = symStart[left] as number;
      const size = (symLen[left] as number) + (symLen[right] as number);
      const id = this.#pieces.get(text, start, start + size);
      if (id < 0) return;
      heap.push(this.#scores[id] as number, left, right, size);
      if (this.#types[id] === PIECE_UNUSED) {
        revMerge.set(id, symLen[left] as number);
      }
    };

    for (let i = 1; i < count; i++) addPair(i - 1, i);

    while (heap.size > 0) {
      heap.pop();
      const left = heap.left;
      const right = heap.right;
      const leftLen = symLen[left] as number;
      const rightLen = symLen[right] as number;
      if (leftLen === 0 || rightLen === 0 || leftLen + rightLen !== heap.pairSize) continue;
      symLen[left] = leftLen + rightLen;
      const after = next[right] as number;
      next[left] = after;
      if (after >= 0) prev[after] = left;
      symLen[right] = 0;
      addPair(prev[left] as number, left);
      addPair(left, next[left] as number);
    }

    for (let i = 0; i !== -1; i = next[i] as number) {
      const start = symStart[i] as number;
      this.#resegment(text, start, start + (symLen[i] as number), out);
    }
  }

  /** PieceToId for `text[start, end)`: reserved pieces first, then the others, else unknown. */
  pieceId(text: Uint8Array, start: number, end: number): number {
    const reserved = this.#reserved.get(text, start, end);
    if (reserved >= 0) return reserved;
    const id = this.#pieces.get(text, start, end);
    return id >= 0 ? id : this.#unkId;
  }

  /**
   * Emits `text[start, end)`, split back along its recorded pair when it is an UNUSED piece
   * (depth first, left side first; both sides are strictly shorter, so it ends).
   */
  #resegment(text: Uint8Array, start: number, end: number, out: PieceSpans): void {
    const stack = [start, end];
    while (stack.length > 0) {
      const e = stack.pop() as number;
      const s = stack.pop() as number;
      const id = this.pieceId(text, s, e);
      const leftLength = this.#types[id] === PIECE_UNUSED ? this.#revMerge.get(id) : undefined;
      if (leftLength === undefined) out.push(s, e, id);
      else stack.push(s + leftLength, e, s, s + leftLength);
    }
  }

  #reserve(n: number): void {
    if (this.#symStart.length >= n) return;
    const size = Math.max(n, 2 * this.#symStart.length, 1024);
    this.#symStart = new Int32Array(size);
    this.#symLen = new Int32Array(size);
    this.#prev = new Int32Array(size);
    this.#next = new Int32Array(size);
    this.#frozen = new Uint8Array(size);
  }
}

/**
 * A binary heap of merge candidates in sentencepiece's agenda order: higher score first, then
 * smaller left index. `pop()` leaves the popped entry in `left`/`right`/`pairSize`.
 */
class PairHeap {
  size = 0;
  left = 0;
  right = 0;
  pairSize = 0;
  #score = new Float64Array(256);
  #left = new Int32Array(256);
  #right = new Int32Array(256);
  #pairSize = new Int32Array(256);

  clear(): void {
    this.size = 0;
  }

  push(score: number, left: number, right: number, pairSize: number): void {
    if (this.size === this.#score.length) this.#grow();
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!precedes(score, left, this.#score[parent] as number, this.#left[parent] as number)) break;
      this.#move(parent, i);
      i = parent;
    }
    this.#set(i, score, left, right, pairSize);
  }

  pop(): void {
    this.left = this.#left[0] as number;
    this.right = this.#right[0] as number;
    this.pairSize = this.#pairSize[0] as number;
    const last = --this.size;
    if (last === 0) return;
    const score = this.#score[last] as number;
    const left = this.#left[last] as number;
    const right = this.#right[last] as number;
    const pairSize = this.#pairSize[last] as number;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= last) break;
      const other = child + 1;
      if (
        other < last &&
        precedes(this.#score[other] as number, this.#left[other] as number, this.#score[child] as number, this.#left[child] as number)
      ) {
        child = other;
      }
      if (!precedes(this.#score[child] as number, this.#left[child] as number, score, left)) break;
      this.#move(child, i);
      i = child;
    }
    this.#set(i, score, left, right, pairSize);
  }

  #move(from: number, to: number): void {
    this.#score[to] = this.#score[from] as number;
    this.#left[to] = this.#left[from] as number;
    this.#right[to] = this.#right[from] as number;
    this.#pairSize[to] = this.#pairSize[from] as number;
  }

  #set(i: number, score: number, left: number, right: number, pairSize: number): void {
    this.#score[i] = score;
    this.#left[i] = left;
    this.#right[i] = right;
    this.#pairSize[i] = pairSize;
  }

  #grow(): void {
    const n = this.#score.length * 2;
    const score = new Float64Array(n);
    score.set(this.#score);
    const left = new Int32Array(n);
    left.set(this.#left);
    const right = new Int32Array(n);
    right.set(this.#right);
    const pairSize = new Int32Array(n);
    pairSize.set(this.#pairSize);
    this.#score = score;
    this.#left = left;
    this.#right = right;
    this.#pairSize = pairSize;
  }
}

/** Whether candidate (scoreA, leftA) is merged before (scoreB, leftB). */
function precedes(scoreA: number, leftA: number, scoreB: number, leftB: number): boolean {
  return scoreA > scoreB || (scoreA === scoreB && leftA < leftB);
}
