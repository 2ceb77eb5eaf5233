/**
 * Which shard a corpus line belongs to (`--shard i/n`): a stable hash of the conversation id,
 * the same on every machine, run and Node version, so n independent jobs over the same file
 * split it into n disjoint parts that cover every line.
 *
 * The rule (version "sha256-id-v1"), a pure function of the line's text and its 1-based line
 * number:
 *   key   = "s:" + the id            when the line's top-level "id" is a JSON string (decoded,
 *                                    so `"a\u0062"` and `"ab"` are the same id),
 *           "r:" + the id's raw text when it is another JSON value (a number: `7`, `7.0`),
 *           "#" + the line number    when there is no id to read (not JSON, not UTF-8, too
 *                                    long, no "id" member);
 *   shard = (first 8 bytes of SHA-256(UTF-8(key)), as a big-endian uint64) mod n.
 * Every line therefore lands in exactly one shard; two lines with the same id land in the same
 * one (each is still output once, by that shard). Blank lines produce no output in any mode and
 * belong to no shard.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { DeltatokError } from "../errors.js";
import { topLevelRaw } from "../json/skim.js";

/** The name of the assignment rule, recorded in shard outputs (merge refuses another). */
export const SHARD_KEY_RULE = "sha256-id-v1";

/** Most shards: far beyond any batch scheduler's array, small enough to print in a header. */
export const MAX_SHARDS = 1_000_000;

export interface ShardSpec {
  /** 0-based shard index, < count. */
  readonly index: number;
  /** Number of shards, 1..MAX_SHARDS. */
  readonly count: number;
}

/** Parses `i/n` (0 ≤ i < n ≤ MAX_SHARDS). DT_INVALID_OPTION (path `--shard`) otherwise. */
export function parseShard(text: string): ShardSpec {
  const m = /^(\d{1,7})\/(\d{1,7})$/.exec(text.trim());
  const bad = (why: string) => new DeltatokError("DT_INVALID_OPTION", `--shard must be i/n with 0 ≤ i < n ≤ ${MAX_SHARDS}: ${why}, got ${JSON.stringify(text)}`, { path: "--shard" });
  if (m === null) throw bad("not two integers separated by /");
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) throw bad(`n out of range`);
  if (index >= count) throw bad(`i must be less than n`);
  return Object.freeze({ index, count });
}

/** The shard key of a line (see the file header). `text` is undefined for a line that has none. */
export function shardKey(text: string | undefined, line: number): string {
  if (text === undefined) return `#${line}`;
  let raw: string | null = null;
  try {
    raw = topLevelRaw(text, "id");
  } catch {
    raw = null;
  }
  if (raw === null) return `#${line}`;
  if (raw.startsWith('"')) {
    try {
      const v: unknown = JSON.parse(raw);
      if (typeof v === "string") return `s:${v}`;
    } catch {
      // an unterminated or badly escaped string: keyed by its raw text
    }
  }
  return `r:${raw}`;
}

/** The shard of a key among `count`. */
export function shardOfKey(key: string, count: number): number {
  const d = createHash("sha256").update(key, "utf8").digest();
  return Number(d.readBigUInt64BE(0) % BigInt(count));
}

/** Whether the line (its text, or undefined when it has none) belongs to `spec`. */
export function inShard(spec: ShardSpec, text: string | undefined, line: number): boolean {
  if (spec.count === 1) return true;
  return shardOfKey(shardKey(text, line), spec.count) === spec.index;
}

/** The commands that take `--shard` (and whose outputs `deltatok merge` joins). */
export type ShardCommand = "replay" | "tokenize" | "verify" | "rollout";

/**
 * The first line of a shard's JSONL output (`{"deltatok_shard": header}`), or the `shard` member
 * of a binary output's index. Merge checks that every file it joins has the same command,
 * shard count, key rule, corpus size and settings, and that the indexes 0..n-1 each appear once.
 */
export interface ShardHeader {
  version: typeof SHARD_FORMAT_VERSION;
  command: ShardCommand;
  shard: number;
  shards: number;
  key: typeof SHARD_KEY_RULE;
  /**
   * The corpus as this shard saw it: its size in bytes and the SHA-256 (hex) of its content, so
   * shards of two different corpora never merge (0 and null when unknown: a FIFO, stdin).
   */
  corpus: CorpusIdentity;
  /** Everything that changes the output: tokenizer, template (by content hash), date, kwargs, … */
  settings: Record<string, unknown>;
}

/**
 * The last line of a shard's JSONL output (`{"deltatok_shard_end": trailer}`): the shard's own
 * summary (merge sums them) and how many corpus lines it answered. A file without it was cut
 * short (the job died): merge refuses it.
 */
export interface ShardTrailer {
  /** Non-blank corpus lines this shard read (informational). */
  lines?: number;
  summary: Record<string, unknown>;
  /**
   * Records between header and trailer, and the SHA-256 (hex) of their text: each JSONL line
   * with its "\n"; in a binary output the bytes after the magic up to the index, then each index
   * record's JSON text and "\n". Merge recomputes both before writing anything: a record
   * deleted, duplicated, reordered or altered is DT_SHARD_INVALID.
   */
  records: number;
  records_sha256: string;
}

/**
 * The shard output format: 2 added the corpus digest and the trailer's record count and digest; 3
 * writes the trailer summary's cache stats in snake_case (a shard of 2 has them camelCase).
 */
export const SHARD_FORMAT_VERSION = 3;

export interface CorpusIdentity {
  bytes: number;
  sha256: string | null;
}

/** Size and SHA-256 of a regular corpus file (read once, streamed); {0, null} for anything else. */
export async function corpusIdentity(file: string): Promise<CorpusIdentity> {
  const info = await stat(file).catch(() => null);
  if (info === null || !info.isFile()) return { bytes: 0, sha256: null };
  const h = createHash("sha256");
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
  } catch {
    return { bytes: 0, sha256: null }; // unreadable: the command itself reports it, coded
  }
  return { bytes: info.size, sha256: h.digest("hex") };
}

export const HEADER_KEY = "deltatok_shard";
export const TRAILER_KEY = "deltatok_shard_end";

export function shardHeader(command: ShardCommand, spec: ShardSpec, corpus: CorpusIdentity, settings: Record<string, unknown>): ShardHeader {
  return { version: SHARD_FORMAT_VERSION, command, shard: spec.index, shards: spec.count, key: SHARD_KEY_RULE, corpus, settings };
}

/** What a corpus command needs to write a shard output. */
export interface ShardOutput {
  spec: ShardSpec;
  header: ShardHeader;
}
