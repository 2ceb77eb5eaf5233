/**
 * Reads a tiktoken rank file (`tiktoken.model`, `*.tiktoken`, or a tiktoken-style
 * `tokenizer.model`): one `base64(token bytes) rank` per line, as tiktoken's `load_tiktoken_bpe`
 * reads it (lines split at `\n`, `\r\n` or `\r`; blank lines skipped; fields split at ASCII white
 * space). Stricter than tiktoken where tiktoken would silently load something else or fail later:
 * - a line must hold exactly two fields, strict base64 and a decimal rank below 2^32;
 * - a rank given twice is refused (tiktoken's CoreBPE refuses it too); a token given twice is
 *   refused (Python's dict would keep the last one silently);
 * - all 256 single-byte tokens must be present (tiktoken panics on text needing a missing one);
 * - gaps in the ranks are allowed (p50k_base has one) unless the caller requires ranks
 *   0..n-1 (`dense`: families that number their special tokens from n, e.g. Kimi, GLM-4).
 * The size bound is checked before anything is parsed. Pure: bytes in, data out.
 *
 * Layer: load.
 */

import { DeltatokError } from "../../errors.js";
import { decodeBase64Into } from "./base64.js";

/** Largest rank file read (bytes). o200k_base is 3.6 MB; Kimi's tiktoken.model 2.6 MB. */
export const MAX_TIKTOKEN_RANK_BYTES = 64 * 1024 * 1024;

/** The ranks of a tiktoken vocabulary, sorted by rank. */
export interface TiktokenRanks {
  /** Number of tokens. */
  readonly size: number;
  /** Rank of entry i (ascending, distinct). */
  readonly ranks: Uint32Array;
  /** Token bytes of entry i: `bytes[offsets[i], offsets[i + 1])`. */
  readonly bytes: Uint8Array;
  readonly offsets: Uint32Array;
  /** Whether the ranks are exactly 0..size-1 (entry i has rank i). */
  readonly dense: boolean;
}

export interface TiktokenRankOptions {
  /** Refuse gaps: the ranks must be exactly 0..n-1. Default false. */
  readonly dense?: boolean;
}

const NL = 0x0a;
const CR = 0x0d;

function isAsciiSpace(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0b || b === 0x0c || b === 0x0d;
}

function invalid(file: string, where: string, reason: string): DeltatokError {
  return new DeltatokError("DT_TOKENIZER_INVALID", `${file}: ${where}: ${reason}`, { path: where });
}

/** Parses and validates a rank file. `file` names it in error messages. */
export function readTiktokenRanks(bytes: Uint8Array, file: string, options: TiktokenRankOptions = {}): TiktokenRanks {
  if (bytes.length > MAX_TIKTOKEN_RANK_BYTES) {
    throw new DeltatokError(
      "DT_TOKENIZER_TOO_LARGE",
      `${file} is ${bytes.length} bytes; tiktoken rank files are read up to ${MAX_TIKTOKEN_RANK_BYTES} bytes`,
    );
  }
  // Entries in file order; sorted by rank afterwards.
  const rankList: number[] = [];
  const startList: number[] = [];
  const lineList: number[] = [];
  const tokenBytes = new Uint8Array(Math.floor((3 * bytes.length) / 4) + 4);
  let written = 0;
  let lineNo = 0;
  let pos = 0;
  const n = bytes.length;
  while (pos < n) {
    // One line: [pos, lineEnd).
    let lineEnd = pos;
    while (lineEnd < n && bytes[lineEnd] !== NL && bytes[lineEnd] !== CR) lineEnd++;
    lineNo++;
    const next = lineEnd < n && bytes[lineEnd] === CR && bytes[lineEnd + 1] === NL ? lineEnd + 2 : lineEnd + 1;
    if (lineEnd > pos) {
      // Fields.
      let i = pos;
      while (i < lineEnd && isAsciiSpace(bytes[i] as number)) i++;
      const tokenStart = i;
      while (i < lineEnd && !isAsciiSpace(bytes[i] as number)) i++;
      const tokenEnd = i;
      while (i < lineEnd && isAsciiSpace(bytes[i] as number)) i++;
      const rankStart = i;
      while (i < lineEnd && !isAsciiSpace(bytes[i] as number)) i++;
      const rankEnd = i;
      while (i < lineEnd && isAsciiSpace(bytes[i] as number)) i++;
      if (tokenStart === tokenEnd) {
        // A line of only white space: tiktoken's `line.split()` gives no fields and fails.
        throw invalid(file, `line ${lineNo}`, "expected `base64-token rank`, found only white space");
      }
      if (rankStart === rankEnd || i < lineEnd) {
        throw invalid(file, `line ${lineNo}`, "expected exactly two fields, `base64-token rank`");
      }
      let rank = 0;
      for (let k = rankStart; k < rankEnd; k++) {
        const d = (bytes[k] as number) - 0x30;
        if (d < 0 || d > 9) throw invalid(file, `line ${lineNo}`, "the rank is not a decimal integer");
        rank = rank * 10 + d;
        if (rank > 0xffffffff) throw invalid(file, `line ${lineNo}`, "the rank is larger than 2^32 - 1");
      }
      const start = written;
      const decoded = decodeBase64Into(bytes, tokenStart, tokenEnd, tokenBytes, written);
      if (decoded < 0) throw invalid(file, `line ${lineNo}`, "the token is not valid base64");
      if (decoded === 0) throw invalid(file, `line ${lineNo}`, "the token is empty");
      written += decoded;
      rankList.push(rank);
      startList.push(start);
      lineList.push(lineNo);
    }
    pos = next;
  }
  if (rankList.length === 0) throw new DeltatokError("DT_TOKENIZER_INVALID", `${file}: no tokens (the rank file is empty)`);
  return buildRanks(tokenBytes, written, rankList, startList, (k) => `line ${lineList[k]}`, file, options.dense === true);
}

function buildRanks(
  tokenBytes: Uint8Array,
  written: number,
  rankList: number[],
  startList: number[],
  where: (k: number) => string,
  file: string,
  requireDense: boolean,
): TiktokenRanks {
  const count = rankList.length;
  const endOf = (k: number): number => (k + 1 < count ? (startList[k + 1] as number) : written);
  const order = Array.from({ length: count }, (_, k) => k).sort((a, b) => (rankList[a] as number) - (rankList[b] as number));
  const ranks = new Uint32Array(count);
  const offsets = new Uint32Array(count + 1);
  const bytes = new Uint8Array(written);
  const seen = new Map<string, number>();  // token → entry
  const singles = new Uint8Array(256);
  let o = 0;
  let dense = true;
  for (let i = 0; i < count; i++) {
    const k = order[i] as number;
    const rank = rankList[k] as number;
    if (i > 0 && rank === ranks[i - 1]) {
      throw invalid(file, where(k), `rank ${rank} is given twice (also at ${where(order[i - 1] as number)})`);
    }
    if (rank !== i) {
      if (requireDense) {
        throw invalid(file, where(k), `rank ${rank} leaves a gap: this format needs ranks 0..n-1 without gaps (rank ${i} is missing)`);
      }
      dense = false;
    }
    const token = tokenBytes.subarray(startList[k] as number, endOf(k));
    const key = latin1(token);
    const other = seen.get(key);
    if (other !== undefined) {
      throw invalid(file, where(k), `token ${JSON.stringify(key)} is given twice (also at ${where(other)})`);
    }
    seen.set(key, k);
    if (token.length === 1) singles[token[0] as number] = 1;
    ranks[i] = rank;
    offsets[i] = o;
    bytes.set(token, o);
    o += token.length;
  }
  offsets[count] = o;
  const missing = singles.indexOf(0);
  if (missing >= 0) {
    throw new DeltatokError(
      "DT_TOKENIZER_INVALID",
      `${file}: the single-byte token 0x${missing.toString(16).padStart(2, "0")} is missing (tiktoken cannot encode text that needs it)`,
    );
  }
  return { size: count, ranks, bytes, offsets, dense };
}

/** Bytes as a string of code points 0–255 (a map key; not a text decoding). */
export function latin1(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return s;
}

/**
 * Builds TiktokenRanks from token byte strings given in rank order 0..n-1 (tekken.json's
 * vocabulary), with the same checks; `where(i)` names entry i in error messages.
 */
export function denseRanks(tokens: readonly Uint8Array[], file: string, where: (i: number) => string): TiktokenRanks {
  let total = 0;
  for (const t of tokens) total += t.length;
  const all = new Uint8Array(total);
  const rankList: number[] = [];
  const startList: number[] = [];
  let o = 0;
  tokens.forEach((t, i) => {
    all.set(t, o);
    rankList.push(i);
    startList.push(o);
    o += t.length;
  });
  return buildRanks(all, total, rankList, startList, where, file, true);
}
