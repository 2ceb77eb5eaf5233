/**
 * `deltatok merge --out F [--summary F] SHARD...`: joins the outputs of `replay`, `tokenize`,
 * `rollout` or `verify` run with `--shard i/n` (JSONL) back into the output of one run over the
 * whole corpus: the same records in the same (corpus) order, byte for byte, and the summary.
 *
 * A shard output is `{"deltatok_shard": header}`, then the records, each with its corpus `line`,
 * then `{"deltatok_shard_end": {"summary", "records", "records_sha256"}}` (src/cli/shard.ts).
 * Before writing anything, merge reads every header, trailer and record and refuses, with a
 * code: a file that is not a regular file or not a complete shard output, whose run was
 * stopped, whose records are not those its trailer counts and digests, or (binary) whose index
 * places an array anywhere but where the writer puts it (DT_SHARD_INVALID); files that disagree
 * on command, shard count, key rule, corpus content or settings (DT_SHARD_MISMATCH); a set with
 * an index missing (DT_SHARD_MISSING) or given twice (DT_SHARD_OVERLAP); an --out or --summary
 * that is one of the inputs (DT_INVALID_OPTION). Records are then merged by line with
 * one record held per shard (memory: O(shards)); a line found in two shards is DT_SHARD_OVERLAP.
 * The `line` a record carries only for ordering is removed (records of unusable lines keep
 * theirs, as unsharded runs write them).
 *
 * Summaries: counts are sums (records, totals, errors by code — keyed in corpus order, as one run
 * keys them —, cache stats); ratios are recomputed from the summed counts; wall-clock fields
 * (`load_s`, `elapsed_s`) are the slowest shard's (the makespan when shards run at once) and
 * every shard's own figures are listed under `shards`. Cache stats are what the shards' caches
 * did: each shard's first conversation starts with an empty cache, so against one run over the
 * whole corpus they can show up to n − 1 more misses (and fewer reused tokens) — never different
 * counts (ISL, OSL, ids), which do not depend on the cache.
 */
import { createHash } from "node:crypto";
import { open, realpath, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { resolve } from "node:path";
import { DeltatokError } from "../errors.js";
import { corpusLines, openCorpus } from "../corpus/corpus.js";
import type { DeltatokStats } from "../api/deltatok.js";
import { addStats, emptyStats } from "../pool/pool.js";
import { JsonlWriter, writeFile } from "./output.js";
import { BinaryFile } from "./binary.js";
import { HEADER_KEY, TRAILER_KEY, SHARD_FORMAT_VERSION, SHARD_KEY_RULE, type ShardCommand, type ShardHeader, type ShardTrailer } from "./shard.js";
import { round3 } from "./replay.js";
import { idFromRaw, isNumberId, jsonWithIds, rawIdOf, recordJson } from "../corpus/id.js";
import { eachElement, eachMember } from "../json/skim.js";
import { snakeKeys } from "../json/index.js";

type Rec = Record<string, unknown>;

interface Shard {
  path: string;
  header: ShardHeader;
  trailer: ShardTrailer;
  /** A binary (tokenize/rollout --format binary) shard: its magic, index and the index's offset. */
  binary?: { magic: string; index: Rec; at: number };
}

function invalid(path: string, why: string): DeltatokError {
  return new DeltatokError("DT_SHARD_INVALID", `${path} ${why}`, { path });
}

function isObject(v: unknown): v is Rec {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A record read back with JSON.parse holds a number id as a JS number, which may print otherwise
 * (`1e3`, `-0`, past 2^53): it gets its text back from the record's raw JSON (src/corpus/id.ts),
 * so merged records and digests are those the shards wrote.
 */
function keepId(rec: Rec, raw: string | null): void {
  if (typeof rec.id !== "number" || raw === null) return;
  const id = idFromRaw(raw);
  if (isNumberId(id)) rec.id = id;
}

/** keepId for each record of a binary index, from the index's text. */
function keepIndexIds(text: string, recs: unknown[]): void {
  if (!recs.some((r) => isObject(r) && typeof r.id === "number")) return;
  let at = -1;
  eachMember(text, 0, (m) => {
    if (m.key === "records") at = m.start;
    return true;
  });
  if (at < 0) return;
  let i = 0;
  eachElement(text, at, (start, end) => {
    const r = recs[i++];
    if (isObject(r)) keepId(r, rawIdOf(text.slice(start, end)));
    return true;
  });
}

/** The last non-empty line of a file (read from its end: at most 64 MiB). */
async function lastLine(path: string, size: number): Promise<string> {
  const want = Math.min(size, 64 * 1024 * 1024);
  const h = await open(path, "r");
  try {
    const buf = Buffer.alloc(want);
    await h.read(buf, 0, want, size - want);
    const text = buf.toString("utf8").replace(/[\r\n]+$/, "");
    const at = text.lastIndexOf("\n");
    if (at < 0 && want < size) throw invalid(path, "has a last line longer than 64 MiB: not a shard output");
    return text.slice(at + 1);
  } finally {
    await h.close();
  }
}

const MAGICS = new Set(["DTOKBIN1", "DTROLL01", "DTROLL02"]);

/** A binary output's magic and index (src/cli/binary.ts), or null when the file is not one. */
async function binaryIndex(path: string): Promise<{ magic: string; index: Rec; at: number } | null> {
  const h = await open(path, "r").catch(() => null);
  if (h === null) return null;
  try {
    const size = (await h.stat()).size;
    if (size < 8) return null;
    const head = Buffer.alloc(8);
    await h.read(head, 0, 8, 0);
    const magic = head.toString("latin1");
    if (!MAGICS.has(magic)) return null;
    if (size < 16) throw invalid(path, "is a binary output cut short, without its index: its run was killed before it finished (run it again)");
    // a file killed while being written has its magic and some arrays but no index at its end
    const cut = () => invalid(path, "is a binary output cut short, without its index: its run was killed before it finished (run it again)");
    const tail = Buffer.alloc(8);
    await h.read(tail, 0, 8, size - 8);
    const at = Number(tail.readBigUInt64LE(0));
    if (!(at >= 8 && at <= size - 8)) throw cut();
    const buf = Buffer.alloc(size - 8 - at);
    await h.read(buf, 0, buf.length, at);
    let index: unknown;
    const text = buf.toString("utf8");
    try {
      index = JSON.parse(text);
    } catch {
      throw cut();
    }
    if (!isObject(index) || !Array.isArray(index.records)) throw invalid(path, "is a binary output without records");
    keepIndexIds(text, index.records);
    return { magic, index, at };
  } finally {
    await h.close();
  }
}

/** A header of this format version, or a coded refusal saying why not. */
function checkVersion(path: string, header: Rec): void {
  if (header.version === SHARD_FORMAT_VERSION) return;
  if (header.version === 1) throw invalid(path, "was written by an older deltatok (shard format 1, without record digests): run that shard again");
  if (header.version === 2) throw invalid(path, "was written by an older deltatok (shard format 2, its summary's cache stats camelCase): run that shard again");
  throw invalid(path, `has shard format ${JSON.stringify(header.version)}; this deltatok reads ${SHARD_FORMAT_VERSION}`);
}

/** A trailer with its record count and digest, not of a stopped run. */
function checkTrailer(path: string, trailer: Rec): void {
  if (!isObject(trailer.summary)) throw invalid(path, "has a shard trailer without its summary");
  if (trailer.summary.stopped !== undefined) throw invalid(path, "is the output of a stopped run (its summary has 'stopped'): run that shard again");
  if (!Number.isSafeInteger(trailer.records) || (trailer.records as number) < 0 || typeof trailer.records_sha256 !== "string") {
    throw invalid(path, "has a shard trailer without its record count and digest");
  }
}

/** The header and trailer of one shard output. */
async function readShard(path: string): Promise<Shard> {
  let info;
  try {
    info = await stat(path);
  } catch (e) {
    throw invalid(path, `cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  if (!info.isFile()) throw invalid(path, `is not a regular file (${info.isDirectory() ? "a directory" : "a FIFO, device or socket"}): not a shard output`);
  const bin = await binaryIndex(path);
  if (bin !== null) {
    const header = bin.index[HEADER_KEY];
    const trailer = bin.index[TRAILER_KEY];
    if (!isObject(header)) throw invalid(path, "is a binary output without a shard header: write it with --shard i/n");
    checkVersion(path, header);
    if (!isObject(trailer)) throw invalid(path, "is a binary shard output without its trailer");
    checkTrailer(path, trailer);
    return { path, header: header as unknown as ShardHeader, trailer: trailer as unknown as ShardTrailer, binary: bin };
  }
  const file = await openCorpus(path);
  let first: string | undefined;
  for await (const l of corpusLines(file)) {
    if (l.error !== undefined) throw invalid(path, `line ${l.line}: ${l.error.message}`);
    if (l.text.trim() === "") continue;
    first = l.text;
    break;
  }
  const parse = (text: string, what: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      throw invalid(path, `has a ${what} that is not JSON: not a shard output`);
    }
  };
  const h = first === undefined ? undefined : parse(first, "first line");
  const header = isObject(h) ? h[HEADER_KEY] : undefined;
  if (!isObject(header) || typeof header.command !== "string" || !Number.isSafeInteger(header.shard) || !Number.isSafeInteger(header.shards)) {
    throw invalid(path, `does not start with a shard header ({"${HEADER_KEY}": ...}): write it with --shard i/n`);
  }
  checkVersion(path, header);
  const size = info.size;
  const t = parse(await lastLine(path, size), "last line");
  const trailer = isObject(t) ? t[TRAILER_KEY] : undefined;
  if (!isObject(trailer)) throw invalid(path, `has no shard trailer ({"${TRAILER_KEY}": ...}): the run was cut short`);
  checkTrailer(path, trailer);
  return { path, header: header as unknown as ShardHeader, trailer: trailer as unknown as ShardTrailer };
}

/** Throws DT_SHARD_INVALID unless the shard's records are those its trailer counts and digests. */
function checkDigest(s: Shard, records: number, sha256: string): void {
  if (records !== s.trailer.records) {
    throw invalid(s.path, `holds ${records} records but its trailer says ${s.trailer.records}: records were deleted or duplicated`);
  }
  if (sha256 !== s.trailer.records_sha256) throw invalid(s.path, "has records that differ from those its trailer digests: records were altered or reordered");
}

/** A JSONL shard's records, counted and digested (and in corpus order) against its trailer. */
async function verifyJsonl(s: Shard): Promise<void> {
  const h = createHash("sha256");
  let n = 0;
  for await (const { text } of records(s)) {
    h.update(text + "\n", "utf8");
    n++;
  }
  checkDigest(s, n, h.digest("hex"));
}

/**
 * A binary shard's index against its file, before anything is written: every record in corpus
 * order, every array where the writer puts it — the first right after the magic, each next one
 * right after the previous (ids 4 bytes a token, the mask a byte a token padded to 4, logprobs 8
 * bytes a token, 4 in "DTROLL01" files), the last ending at the index — so no offset is out of bounds, out of order,
 * overlapping or sized by a forged count; then the count and digest against the trailer.
 */
async function verifyBinary(s: Shard): Promise<void> {
  const bin = s.binary as { magic: string; index: Rec; at: number };
  const rollout = bin.magic.startsWith("DTROLL");
  const lpBytes = logprobBytes(bin.magic);
  let cursor = 8;
  const bad = (i: number, why: string) => invalid(s.path, `index record ${i}: ${why} (a forged or damaged index)`);
  const arrays = (i: number, q: Rec, logprobs: boolean) => {
    const n = q.count;
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0 || n > bin.at) throw bad(i, `a token count ${JSON.stringify(n)} the file cannot hold`);
    const place = (field: string, bytes: number) => {
      if (q[field] !== cursor) throw bad(i, `${field} ${JSON.stringify(q[field])} where the writer put ${cursor}`);
      cursor += bytes;
      if (cursor > bin.at) throw bad(i, `${field} runs past the arrays into the index`);
    };
    place("offset", 4 * n);
    place("mask_offset", (n + 3) & ~3);
    if (logprobs && q.logprobs_offset !== null) place("logprobs_offset", lpBytes * n);
  };
  const recs = bin.index.records as unknown[];
  let last = -Infinity;
  recs.forEach((v, i) => {
    if (!isObject(v) || typeof v.line !== "number" || !Number.isSafeInteger(v.line) || v.line < 1) throw bad(i, "no corpus line");
    if (v.line < last) throw bad(i, "out of corpus order");
    last = v.line;
    if (v.error !== undefined) return;
    if (!rollout) arrays(i, v, false);
    else {
      if (!Array.isArray(v.sequences)) throw bad(i, "no sequences");
      for (const q of v.sequences as unknown[]) {
        if (!isObject(q)) throw bad(i, "a sequence that is not an object");
        arrays(i, q, true);
      }
    }
  });
  if (cursor !== bin.at) throw invalid(s.path, `has ${bin.at - cursor} bytes of arrays no index record names (a forged or damaged index)`);
  const h = createHash("sha256");
  const fh = await open(s.path, "r");
  try {
    const buf = Buffer.alloc(1 << 20);
    for (let at = 8; at < bin.at; ) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, bin.at - at), at);
      if (bytesRead === 0) throw invalid(s.path, "is shorter than its index says");
      h.update(buf.subarray(0, bytesRead));
      at += bytesRead;
    }
  } finally {
    await fh.close();
  }
  for (const r of recs) h.update(recordJson(r as Rec) + "\n", "utf8");
  checkDigest(s, recs.length, h.digest("hex"));
}

/** Refuses an --out or --summary that is one of the shards being read (it would be overwritten). */
async function checkOutputs(paths: string[], o: MergeOptions): Promise<void> {
  const ids = new Map<string, string>();
  for (const p of paths) {
    const st = await stat(p).catch(() => null);
    if (st !== null) ids.set(`${st.dev}:${st.ino}`, p);
    ids.set(await realpath(p).catch(() => resolve(p)), p);
  }
  for (const [flag, target] of [["--out", o.out], ["--summary", o.summary]] as const) {
    if (target === undefined || target === "-") continue;
    const st = await stat(target).catch(() => null);
    const same = (st !== null ? ids.get(`${st.dev}:${st.ino}`) : undefined) ?? ids.get(await realpath(target).catch(() => resolve(target)));
    if (same !== undefined) throw new DeltatokError("DT_INVALID_OPTION", `${flag} ${target} is the shard ${same} being merged: write the merged output elsewhere`, { path: flag });
  }
}

/** Checks that the shards form one complete set. */
function checkSet(shards: Shard[]): ShardHeader {
  const first = (shards[0] as Shard).header;
  if (first.key !== SHARD_KEY_RULE) throw new DeltatokError("DT_SHARD_MISMATCH", `${(shards[0] as Shard).path}: shard key rule ${String(first.key)}, this deltatok uses ${SHARD_KEY_RULE}`, { path: "key" });
  const fields: Array<[string, (h: ShardHeader) => unknown]> = [
    ["command", (h) => h.command],
    ["shards", (h) => h.shards],
    ["key", (h) => h.key],
    ["corpus", (h) => h.corpus],
    ["settings", (h) => h.settings],
  ];
  for (const s of shards.slice(1)) {
    for (const [name, get] of fields) {
      const a = JSON.stringify(get(first));
      const b = JSON.stringify(get(s.header));
      if (a === b) continue;
      let what = name;
      if (name === "settings" && isObject(first.settings) && isObject(s.header.settings)) {
        const keys = new Set([...Object.keys(first.settings), ...Object.keys(s.header.settings)]);
        for (const k of keys) if (JSON.stringify(first.settings[k]) !== JSON.stringify(s.header.settings[k])) what = `settings.${k}`;
      }
      throw new DeltatokError("DT_SHARD_MISMATCH", `${(shards[0] as Shard).path} and ${s.path} differ in ${what}: ${a.slice(0, 200)} vs ${b.slice(0, 200)}`, { path: what });
    }
  }
  const magic = (shards[0] as Shard).binary?.magic ?? null;
  for (const s of shards.slice(1)) {
    const m = s.binary?.magic ?? null;
    if (m !== magic) throw new DeltatokError("DT_SHARD_MISMATCH", `${(shards[0] as Shard).path} and ${s.path} differ in file format: ${String(magic)} vs ${String(m)}`, { path: "format" });
  }
  const seen = new Map<number, string>();
  for (const s of shards) {
    const other = seen.get(s.header.shard);
    if (other !== undefined) throw new DeltatokError("DT_SHARD_OVERLAP", `${other} and ${s.path} are both shard ${s.header.shard}/${first.shards}`, { path: s.path });
    if (s.header.shard < 0 || s.header.shard >= first.shards) throw invalid(s.path, `is shard ${s.header.shard} of ${first.shards}`);
    seen.set(s.header.shard, s.path);
  }
  const missing: number[] = [];
  for (let i = 0; i < first.shards && missing.length < 10; i++) if (!seen.has(i)) missing.push(i);
  if (missing.length > 0) {
    throw new DeltatokError("DT_SHARD_MISSING", `${first.shards - shards.length} of ${first.shards} shards are missing: ${missing.map((i) => `${i}/${first.shards}`).join(", ")}${missing.length === 10 ? ", ..." : ""}`);
  }
  return first;
}

/** A shard's records, in order, after its header; its trailer ends them. */
async function* records(s: Shard): AsyncGenerator<{ rec: Rec; line: number; text: string }> {
  if (s.binary !== undefined) {
    let last = -Infinity;
    for (const v of s.binary.index.records as unknown[]) {
      if (!isObject(v) || typeof v.line !== "number" || !Number.isSafeInteger(v.line) || v.line < last) throw invalid(s.path, "has an index record without its corpus line, or out of order");
      last = v.line;
      yield { rec: v, line: v.line, text: "" };
    }
    return;
  }
  const file = await openCorpus(s.path);
  let started = false;
  let last = -Infinity;
  let ended = false;
  for await (const l of corpusLines(file)) {
    if (l.error !== undefined) throw invalid(s.path, `line ${l.line}: ${l.error.message}`);
    if (l.text.trim() === "") continue;
    if (!started) {
      started = true;
      continue;
    }
    if (ended) throw invalid(s.path, `has records after its trailer (line ${l.line})`);
    let v: unknown;
    try {
      v = JSON.parse(l.text);
    } catch {
      throw invalid(s.path, `line ${l.line} is not JSON`);
    }
    if (!isObject(v)) throw invalid(s.path, `line ${l.line} is not a record`);
    if (v[TRAILER_KEY] !== undefined) {
      ended = true;
      continue;
    }
    keepId(v, rawIdOf(l.text));
    const line = v.line;
    if (typeof line !== "number" || !Number.isSafeInteger(line) || line < 1) throw invalid(s.path, `line ${l.line}: a record without its corpus "line"`);
    if (line < last) throw invalid(s.path, `line ${l.line}: records out of corpus order`);
    last = line;
    yield { rec: v, line, text: l.text };
  }
  if (!ended) throw invalid(s.path, "has no shard trailer: the run was cut short");
}

/** Removes the ordering `line` from a record that does not carry one in an unsharded run. */
function restore(command: ShardCommand, r: Rec): Rec {
  const native = command === "replay" ? r.index === null : command === "verify" ? false : r.error !== undefined;
  if (!native) delete r.line;
  return r;
}

/** Reads `n` bytes at `at` of a shard file. */
async function readAt(h: FileHandle, at: unknown, n: number, path: string): Promise<Uint8Array> {
  if (typeof at !== "number" || !Number.isSafeInteger(at) || at < 0) throw invalid(path, "has an index record with a bad offset");
  const buf = Buffer.alloc(n);
  const r = await h.read(buf, 0, n, at);
  if (r.bytesRead !== n) throw invalid(path, "is shorter than its index says");
  return buf;
}

/** Bytes per logprob in a rollout binary: float64 ("DTROLL02"), float32 in files written before. */
function logprobBytes(magic: string): number {
  return magic === "DTROLL01" ? 4 : 8;
}

/**
 * Copies a binary record's arrays (in the order the writer wrote them: ids, mask, logprobs) into
 * the merged file and points the record at their new offsets; the record goes into its index.
 */
async function copyArrays(bin: BinaryFile, h: FileHandle, rec: Rec, path: string, magic: string): Promise<void> {
  const count = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : -1);
  if (rec.error === undefined && Array.isArray(rec.sequences)) {
    for (const q of rec.sequences as Rec[]) {
      const n = count(q.count);
      if (n < 0) throw invalid(path, "has a sequence without its count");
      q.offset = await bin.bytes(await readAt(h, q.offset, 4 * n, path));
      q.mask_offset = await bin.bytes(await readAt(h, q.mask_offset, n, path));
      if (q.logprobs_offset !== null) q.logprobs_offset = await bin.bytes(await readAt(h, q.logprobs_offset, logprobBytes(magic) * n, path));
    }
  } else if (rec.error === undefined) {
    const n = count(rec.count);
    if (n < 0) throw invalid(path, "has a record without its count");
    rec.offset = await bin.bytes(await readAt(h, rec.offset, 4 * n, path));
    rec.mask_offset = await bin.bytes(await readAt(h, rec.mask_offset, n, path));
  }
  bin.index.push(rec);
}

/** A min-heap of shard cursors by (line, shard order). */
class Heap {
  readonly #a: Array<{ line: number; k: number }> = [];
  get size(): number {
    return this.#a.length;
  }
  push(x: { line: number; k: number }): void {
    const a = this.#a;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(a[i] as typeof x, a[p] as typeof x)) break;
      [a[i], a[p]] = [a[p] as typeof x, a[i] as typeof x];
      i = p;
    }
  }
  pop(): { line: number; k: number } | undefined {
    const a = this.#a;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && less(a[l] as typeof last, a[m] as typeof last)) m = l;
        if (r < a.length && less(a[r] as typeof last, a[m] as typeof last)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m] as typeof last, a[i] as typeof last];
        i = m;
      }
    }
    return top;
  }
}
function less(x: { line: number; k: number }, y: { line: number; k: number }): boolean {
  return x.line < y.line || (x.line === y.line && x.k < y.k);
}

/** Sums `b` into `a`: numbers added, objects merged key by key (recursively), other values kept from `a`. */
function addInto(a: Rec, b: Rec): void {
  for (const [k, v] of Object.entries(b)) {
    const cur = a[k];
    if (typeof v === "number" && (typeof cur === "number" || cur === undefined)) a[k] = ((cur as number | undefined) ?? 0) + v;
    else if (isObject(v) && (isObject(cur) || cur === undefined)) {
      const into = (cur ?? {}) as Rec;
      addInto(into, v);
      a[k] = into;
    } else if (cur === undefined) a[k] = v;
  }
}

/** `m`'s entries with the keys in `order` first (in that order), then the rest. */
function reorder(m: unknown, order: string[]): unknown {
  if (!isObject(m)) return m;
  const out: Rec = {};
  for (const k of order) if (k in m) out[k] = m[k];
  for (const [k, v] of Object.entries(m)) if (!(k in out)) out[k] = v;
  return out;
}

export interface MergeOptions {
  /** Output (JSONL records; for verify the summary JSON). undefined or "-": stdout. */
  out: string | undefined;
  /** Where to write the merged summary (replay, tokenize, rollout). */
  summary: string | undefined;
}

/** Merges shard outputs. Resolves with the merged summary. */
export async function mergeShards(paths: string[], o: MergeOptions): Promise<Rec> {
  if (paths.length === 0) throw new DeltatokError("DT_SHARD_MISSING", "merge needs the shard outputs to join");
  await checkOutputs(paths, o);
  const shards: Shard[] = [];
  for (const p of paths) shards.push(await readShard(p));
  const header = checkSet(shards);
  // every record of every shard against its trailer, before anything is written
  for (const sh of shards) await (sh.binary !== undefined ? verifyBinary(sh) : verifyJsonl(sh));
  const command = header.command;
  const verify = command === "verify";
  const maxDiffs = typeof header.settings.max_diffs === "number" ? header.settings.max_diffs : 20;
  const first = shards[0] as Shard;
  const binary = first.binary !== undefined;
  if (binary && (o.out === undefined || o.out === "-")) throw new DeltatokError("DT_INVALID_OPTION", "merging binary shard outputs needs --out FILE", { path: "--out" });
  // written to a temporary file next to --out and renamed once complete: a refusal found while
  // merging (a line in two shards) leaves no partial output
  const toFile = o.out !== undefined && o.out !== "-" && !verify;
  const tmp = toFile ? `${o.out as string}.merging-${process.pid}` : undefined;
  const out = verify || binary ? null : new JsonlWriter(tmp ?? o.out);
  const bin = binary ? new BinaryFile(tmp as string, (first.binary as { magic: string }).magic) : null;
  const handles = binary ? await Promise.all(shards.map((x) => open(x.path, "r"))) : [];
  await bin?.start();
  const codes: string[] = [];
  const buckets: string[] = [];
  const seenCode = new Set<string>();
  const seenBucket = new Set<string>();
  const differences: Rec[] = [];
  try {
    const its = shards.map((s) => records(s));
    const heads: Array<{ rec: Rec; line: number } | undefined> = [];
    const heap = new Heap();
    for (let k = 0; k < its.length; k++) {
      const r = await (its[k] as AsyncGenerator<{ rec: Rec; line: number }>).next();
      heads[k] = r.done === true ? undefined : r.value;
      if (r.done !== true) heap.push({ line: r.value.line, k });
    }
    let lastLine = -1;
    let lastShard = -1;
    for (let top = heap.pop(); top !== undefined; top = heap.pop()) {
      const k = top.k;
      const h = heads[k] as { rec: Rec; line: number };
      if (h.line === lastLine && k !== lastShard) {
        throw new DeltatokError("DT_SHARD_OVERLAP", `corpus line ${h.line} is in both ${(shards[lastShard] as Shard).path} and ${(shards[k] as Shard).path}`, { path: (shards[k] as Shard).path });
      }
      lastLine = h.line;
      lastShard = k;
      const rec = restore(command, h.rec);
      const err = rec.error;
      if (isObject(err) && typeof err.code === "string" && !seenCode.has(err.code)) {
        seenCode.add(err.code);
        codes.push(err.code);
      }
      if (command === "rollout" && Array.isArray(rec.sequences)) {
        const b = rec.sequences.length >= 5 ? "5+" : String(rec.sequences.length);
        if (!seenBucket.has(b)) {
          seenBucket.add(b);
          buckets.push(b);
        }
      }
      if (verify) {
        if (differences.length < maxDiffs) differences.push(rec);
      } else if (bin !== null) await copyArrays(bin, handles[k] as FileHandle, rec, (shards[k] as Shard).path, (shards[k] as Shard).binary?.magic ?? "");
      else await (out as JsonlWriter).write(rec);
      const next = await (its[k] as AsyncGenerator<{ rec: Rec; line: number }>).next();
      heads[k] = next.done === true ? undefined : next.value;
      if (next.done !== true) heap.push({ line: next.value.line, k });
    }
    if (bin !== null) {
      const { [HEADER_KEY]: _h, [TRAILER_KEY]: _t, records: _r, ...index } = (first.binary as { index: Rec }).index;
      await bin.finish(index);
    }
    await out?.close();
    if (tmp !== undefined) await rename(tmp, o.out as string);
  } catch (e) {
    await out?.close().catch(() => undefined);
    if (tmp !== undefined) await unlink(tmp).catch(() => undefined);
    throw e;
  } finally {
    for (const h of handles) await h.close().catch(() => undefined);
  }
  const summary = mergeSummaries(command, shards, { codes, buckets, out: o.out });
  if (verify) {
    summary.differences = differences;
    const json = jsonWithIds(summary, 2) + "\n";
    if (o.out !== undefined && o.out !== "-") await writeFile(o.out, json);
    else process.stdout.write(json);
  }
  if (o.summary !== undefined) await writeFile(o.summary, jsonWithIds(summary, 2) + "\n");
  return summary;
}

const WALL_CLOCK = ["load_s", "elapsed_s"] as const;
/** Per-run fields that describe how a shard ran, not what it found: listed per shard only. */
const PER_RUN = ["requests_per_s", "workers", "schedule", "workers_busy_s", "workers_jobs", "shard"] as const;

function mergeSummaries(command: ShardCommand, shards: Shard[], seen: { codes: string[]; buckets: string[]; out: string | undefined }): Rec {
  const sums: Rec = {};
  const order = shards.slice().sort((a, b) => a.header.shard - b.header.shard);
  for (const s of order) {
    const copy = structuredClone(s.trailer.summary);
    for (const k of [...WALL_CLOCK, ...PER_RUN]) delete copy[k];
    addInto(sums, copy);
  }
  const firstSummary = (order[0] as Shard).trailer.summary;
  // strings (corpus, tokenizer, mode, format) are the first shard's; counts are sums
  const out: Rec = {};
  for (const k of Object.keys(firstSummary)) {
    if ((PER_RUN as readonly string[]).includes(k) && k !== "requests_per_s" && k !== "workers") continue;
    out[k] = typeof firstSummary[k] === "string" ? firstSummary[k] : sums[k];
  }
  for (const k of WALL_CLOCK) if (k in firstSummary) out[k] = round3(Math.max(...order.map((s) => Number(s.trailer.summary[k] ?? 0))));
  if ("out" in out) out.out = seen.out ?? "-";
  if ("errors_by_code" in out) out.errors_by_code = reorder(out.errors_by_code, seen.codes);
  if ("sequences_per_conversation" in out) out.sequences_per_conversation = reorder(out.sequences_per_conversation, seen.buckets);
  if (command === "replay") {
    // the shards' cache stats as written (snake_case), summed key by key
    const cache = order.reduce((acc, s) => addStats(acc, s.trailer.summary.cache as DeltatokStats), snakeKeys(emptyStats()) as unknown as DeltatokStats) as unknown as Record<string, number>;
    out.cache = cache;
    const seenTokens = (cache.tokens_reused ?? 0) + (cache.tokens_encoded ?? 0);
    out.reuse_ratio = seenTokens > 0 ? (cache.tokens_reused ?? 0) / seenTokens : 0;
    const elapsed = out.elapsed_s as number;
    out.requests_per_s = elapsed > 0 ? Math.round((out.requests as number) / elapsed) : 0;
    const same = (k: string) => {
      const vs = new Set(order.map((s) => JSON.stringify(s.trailer.summary[k])));
      return vs.size === 1 && order[0] !== undefined && (order[0] as Shard).trailer.summary[k] !== undefined;
    };
    if (same("workers")) out.workers = firstSummary.workers;
    else delete out.workers;
  }
  if (command === "verify") {
    let reused = 0;
    let encoded = 0;
    for (const s of order) {
      const t = s.trailer.summary.shard as { tokens_reused?: number; tokens_encoded?: number } | undefined;
      reused += t?.tokens_reused ?? 0;
      encoded += t?.tokens_encoded ?? 0;
    }
    out.reuse_ratio = reused / Math.max(1, reused + encoded);
    delete out.shard;
  }
  out.shards = order.map((s) => {
    const r: Rec = { shard: s.header.shard };
    for (const k of [...WALL_CLOCK, ...PER_RUN]) if (k !== "shard" && s.trailer.summary[k] !== undefined) r[k] = s.trailer.summary[k];
    return r;
  });
  return out;
}
