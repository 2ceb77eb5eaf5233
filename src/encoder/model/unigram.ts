/**
 * SentencePiece's Unigram model: the Viterbi best segmentation of a normalized text over the
 * pieces' scores, exactly as `sentencepiece` computes it (unigram_model.cc `EncodeOptimized`,
 * its default encoder), ties and float rounding included:
 * - positions are UTF-8 byte offsets; a path advances one character (OneCharLen) at a time;
 * - from each reachable character start every piece that prefixes the rest is a candidate
 *   (UNUSED pieces are skipped); a USER_DEFINED piece scores `length × max_score − 0.1`;
 * - when no piece covers exactly one character there, an unknown node of that one character
 *   scores `min_score − 10`;
 * - the best path ending at each position is kept in double precision (scores are float32, sums
 *   are not rounded back: checked against sentencepiece 0.2.2, where rounding the sums to float
 *   changes ties on long texts); a candidate replaces it only when strictly better, so the
 *   earliest-starting candidate wins a tie.
 * min/max scores run over NORMAL pieces, starting from FLT_MAX / FLT_MIN (the smallest positive
 * float, so `max_score` is never below it).
 *
 * Unknown handling beyond the unknown node (merging runs, byte fallback) belongs to the caller
 * (sentencepiece.ts), as in sentencepiece.
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

const FLT_MAX = 3.4028234663852886e38;
const FLT_MIN = 1.1754943508222875e-38;
const UNK_PENALTY = 10;
/** Working arrays larger than this many positions are dropped after use (16 bytes each). */
const KEEP_POSITIONS = 1 << 20;

const encoder = new TextEncoder();

export class UnigramModel {
  readonly #trie: ByteTrie;
  readonly #types: Uint8Array;
  readonly #scores: Float32Array;
  readonly #unkId: number;
  readonly #maxScore: number;
  readonly #unkScore: number;
  // Per-position best path, reused across calls.
  #bestScore = new Float64Array(0);
  #bestStart = new Int32Array(0);
  #bestId = new Int32Array(0);

  constructor(model: SentencePieceModelData) {
    const keys: Uint8Array[] = [];
    const ids: number[] = [];
    let minScore = FLT_MAX;
    let maxScore = FLT_MIN;
    for (let id = 0; id < model.pieces.length; id++) {
      const type = model.types[id] as number;
      if (type === PIECE_NORMAL || type === PIECE_USER_DEFINED || type === PIECE_UNUSED) {
        keys.push(encoder.encode(model.pieces[id] as string));
        ids.push(id);
      }
      if (type === PIECE_NORMAL) {
        const s = model.scores[id] as number;
        if (s < minScore) minScore = s;
        if (s > maxScore) maxScore = s;
      }
    }
    this.#trie = new ByteTrie(keys, ids);
    this.#types = model.types;
    this.#scores = model.scores;
    this.#unkId = model.unkId;
    this.#maxScore = maxScore;
    this.#unkScore = Math.fround(minScore - UNK_PENALTY);
  }

  /** Segments `text[0, end)` (normalized UTF-8) into `out` (cleared first). */
  encode(text: Uint8Array, end: number, out: PieceSpans): void {
    out.clear();
    if (end === 0) return;
    this.#reserve(end + 1);
    const bestScore = this.#bestScore;
    const bestStart = this.#bestStart;
    const bestId = this.#bestId;
    bestStart.fill(-1, 0, end + 1);
    bestScore.fill(0, 0, end + 1);
    const trie = this.#trie;
    const types = this.#types;
    const scores = this.#scores;
    const maxScore = this.#maxScore;
    const unkScore = this.#unkScore;
    const unkId = this.#unkId;

    let startsAt = 0;
    while (startsAt < end) {
      const tillHere = bestScore[startsAt] as number;
      const mblen = Math.min(oneCharLen(text[startsAt] as number), end - startsAt);
      let hasSingleNode = false;
      let node = 0;
      for (let keyPos = startsAt; keyPos < end; ) {
        node = trie.child(node, text[keyPos] as number);
        if (node < 0) break;
        keyPos++;
        const id = trie.value(node);
        if (id < 0) continue;
        const type = types[id] as number;
        if (type === PIECE_UNUSED) continue;
        const length = keyPos - startsAt;
        const score = type === PIECE_USER_DEFINED ? Math.fround(length * maxScore) - 0.1 : (scores[id] as number);
        const candidate = score + tillHere;
        if ((bestStart[keyPos] as number) === -1 || candidate > (bestScore[keyPos] as number)) {
          bestScore[keyPos] = candidate;
          bestStart[keyPos] = startsAt;
          bestId[keyPos] = id;
        }
        if (!hasSingleNode && length === mblen) hasSingleNode = true;
      }
      if (!hasSingleNode) {
        const target = startsAt + mblen;
        const candidate = unkScore + tillHere;
        if ((bestStart[target] as number) === -1 || candidate > (bestScore[target] as number)) {
          bestScore[target] = candidate;
          bestStart[target] = startsAt;
          bestId[target] = unkId;
        }
      }
      startsAt += mblen;
    }
    for (let endsAt = end; endsAt > 0; ) {
      const start = bestStart[endsAt] as number;
      out.push(start, endsAt, bestId[endsAt] as number);
      endsAt = start;
    }
    out.reverse();
    // Do not keep a huge text's working arrays alive after it.
    if (this.#bestScore.length > KEEP_POSITIONS) this.#release();
  }

  #release(): void {
    this.#bestScore = new Float64Array(0);
    this.#bestStart = new Int32Array(0);
    this.#bestId = new Int32Array(0);
  }

  #reserve(n: number): void {
    if (this.#bestScore.length >= n) return;
    const size = Math.max(n, 2 * this.#bestScore.length, 1024);
    this.#bestScore = new Float64Array(size);
    this.#bestStart = new Int32Array(size);
    this.#bestId = new Int32Array(size);
  }
}
