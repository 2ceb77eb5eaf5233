/**
 * The on-disk cache of built tokenizer cores: a second process attaches the tables a first one
 * built instead of parsing tokenizer.json and building them again. One entry per core, a file
 * `<key>.dtcore` in the cache directory.
 *
 * - **Where**: the `cacheDir` load option, else `DELTATOK_CACHE_DIR`, else
 *   `$XDG_CACHE_HOME/deltatok`, else `~/.cache/deltatok`; `off` (also `0`, `false`, `none`,
 *   in any case) disables it.
 * - **Key**: SHA-256 over the cache format, the id of the running deltatok code (a SHA-256 of its
 *   own module files, see `codeId`), Node's version, the kind of core, the directory, the
 *   load options that change the core (pattern, encoding) and the SHA-256 of the bytes of every
 *   file the core is read from (a missing file counts too). A file's bytes, never its mtime.
 * - **Entry**: a header (magic, format, body length, the key, the SHA-256 of the body) and a body:
 *   the core record (src/load/shared-core.ts) as V8's structured-clone serialization, with its
 *   SharedArrayBuffers moved out as raw bytes after it. Read back, the header and the body's
 *   digest are checked before anything is deserialized; an entry that is truncated, corrupt,
 *   over the size bound, of another format or another key is never used: it is removed, the load
 *   builds and writes it again, and the event is loud (DELTATOK_CACHE_INVALID, counted).
 * - **Writes** go to a temporary file renamed over the entry (atomic; the temporary file is
 *   removed on failure), so concurrent writers of one key each leave a whole entry. After a
 *   write, entries past the byte bound are removed least recently used first (a hit touches its
 *   entry's mtime). A directory that cannot be written costs the cache, never the load: one
 *   DELTATOK_CACHE_UNWRITABLE warning per directory and process.
 *
 * Trust: the directory is trusted like the user's home; the digest guards against corruption,
 * not against someone who can write there (DESIGN.md).
 *
 * Layer: load.
 */

import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { deserialize, serialize } from "node:v8";

import { DeltatokError } from "../errors.js";
import { readBytes } from "./json-text.js";
import type { CoreRecord } from "./shared-core.js";

/** Bumped whenever the entry layout or the record's shape changes. */
export const CACHE_FORMAT = 1;
/** Default bound of the cache directory's entries, in bytes. */
export const DEFAULT_CACHE_MAX_BYTES = 1024 * 1024 * 1024;
const ENTRY_SUFFIX = ".dtcore";
const TEMP_SUFFIX = ".tmp";
/** The values of DELTATOK_CACHE_DIR / cacheDir that turn the cache off (compared lowercased). */
const DISABLED = new Set(["off", "0", "false", "none"]);
/** The names this cache writes (entries and temporary files): eviction touches no other file. */
const ENTRY_NAME = /^[0-9a-f]{64}\.dtcore$/;
const TEMP_NAME = /^\.[0-9a-f]{64}\.\d+\.[0-9a-f]{12}\.tmp$/;
/** A temporary file older than this is a crashed writer's and is removed by eviction. */
const STALE_TEMP_MS = 60 * 60 * 1000;
const MAGIC = new TextEncoder().encode("DTKCORE\n");
const HEADER_BYTES = 88;

/** Where the cache is and how large it may grow. */
export interface DiskCacheConfig {
  readonly dir: string;
  readonly maxBytes: number;
}

/** Counters of the disk cache, for this process. */
export interface TokenizerCacheStats {
  /** Cores attached from an entry. */
  hits: number;
  /** Cores built for want of an entry. */
  misses: number;
  /** Entries refused (truncated, corrupt, oversize, foreign): each also a DELTATOK_CACHE_INVALID warning. */
  invalid: number;
  /** Entries written. */
  writes: number;
  /** Writes that failed (DELTATOK_CACHE_UNWRITABLE, warned once per directory). */
  writeFailures: number;
  /** Entries removed to keep the directory under its bound. */
  evicted: number;
}

const stats: TokenizerCacheStats = { hits: 0, misses: 0, invalid: 0, writes: 0, writeFailures: 0, evicted: 0 };

/** A copy of this process's disk-cache counters. */
export function tokenizerCacheStats(): TokenizerCacheStats {
  return { ...stats };
}

/**
 * The cache this load uses, or null when it is off. `option` is the `cacheDir` load option;
 * a relative directory resolves against the working directory.
 */
export function diskCacheConfig(option: string | undefined, maxBytes: number | undefined, env: NodeJS.ProcessEnv = process.env): DiskCacheConfig | null {
  const fromEnv = env["DELTATOK_CACHE_DIR"];
  const chosen = option ?? (fromEnv === undefined || fromEnv === "" ? undefined : fromEnv);
  if (chosen !== undefined && DISABLED.has(chosen.trim().toLowerCase())) return null;
  let dir: string;
  if (chosen !== undefined) dir = resolve(chosen);
  else {
    const xdg = env["XDG_CACHE_HOME"];
    dir = xdg !== undefined && isAbsolute(xdg) ? join(xdg, "deltatok") : join(homedir(), ".cache", "deltatok");
  }
  return { dir, maxBytes: maxBytes ?? DEFAULT_CACHE_MAX_BYTES };
}

let codeIdMemo: string | undefined;

/**
 * SHA-256 of the running deltatok code: every module file (`.js`, or `.ts` when run from source;
 * declarations and maps left out) under the package's code root, with its relative path (in a
 * bundle, the bundle file). Taken
 * at run time rather than at build time so that no way of building (tsc alone, an edited dist)
 * can leave an old id next to new code; it reads ~2 MB once per process (~8 ms).
 */
export function codeId(): string {
  if (codeIdMemo !== undefined) return codeIdMemo;
  const here = fileURLToPath(import.meta.url);
  const ext = here.endsWith(".ts") ? ".ts" : ".js";
  const h = createHash("sha256");
  if (basename(dirname(here)) !== "load") {
    // not the package's layout (a bundle): this file holds the code
    codeIdMemo = h.update(readFileSync(here)).digest("hex");
    return codeIdMemo;
  }
  const root = dirname(dirname(here));
  const walk = (dir: string, rel: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path, `${rel}${e.name}/`);
      else if (e.isFile() && e.name.endsWith(ext) && !e.name.endsWith(".d.ts")) {
        const bytes = readFileSync(path);
        h.update(`${rel}${e.name}\0${bytes.length}\0`);
        h.update(bytes);
      }
    }
  };
  walk(root, "");
  codeIdMemo = h.digest("hex");
  return codeIdMemo;
}

/** What a core is made from, for its key. */
export interface CoreKeyParts {
  readonly kind: "tokenizer.json" | "format" | "encoding";
  /** The directory as the load named it (messages of the core mention it). */
  readonly dir: string;
  readonly pattern: string | null;
  /** An OpenAI encoding's name and rank file, or null. */
  readonly encoding: string | null;
  /** Each file the core is read from, by name, with its bytes (null: the file does not exist). */
  readonly files: ReadonlyArray<readonly [string, Uint8Array | null]>;
}

const sha256 = (b: Uint8Array | string): string => createHash("sha256").update(b).digest("hex");

/** The key of a core: 64 hex digits. */
export function coreEntryKey(parts: CoreKeyParts): string {
  return sha256(
    JSON.stringify({
      format: CACHE_FORMAT,
      code: codeId(),
      node: process.version,
      kind: parts.kind,
      dir: parts.dir,
      pattern: parts.pattern,
      encoding: parts.encoding,
      files: parts.files.map(([name, bytes]) => [name, bytes === null ? null : sha256(bytes)]),
    }),
  );
}

const warnedUnwritable = new Set<string>();

function warnInvalid(file: string, why: string, outcome = "the tokenizer is built again and the entry replaced"): void {
  stats.invalid++;
  process.emitWarning(`tokenizer cache entry ${file} ${why}: not used; ${outcome}`, { code: "DELTATOK_CACHE_INVALID" });
}

function warnUnwritable(dir: string, e: unknown): void {
  stats.writeFailures++;
  if (warnedUnwritable.has(dir)) return;
  warnedUnwritable.add(dir);
  const err = e as { code?: unknown; cause?: { code?: unknown } } | null;
  const why = err?.cause?.code ?? err?.code ?? (e instanceof Error ? e.message : String(e));
  process.emitWarning(`tokenizer cache directory ${dir} cannot be used (${String(why)}): tokenizers load without it (set DELTATOK_CACHE_DIR to another directory, or to "off")`, {
    code: "DELTATOK_CACHE_UNWRITABLE",
  });
}

const entryPath = (config: DiskCacheConfig, key: string): string => join(config.dir, `${key}${ENTRY_SUFFIX}`);

/** Marks where record values held SharedArrayBuffers: [path of keys, buffer index]. */
type Places = Array<[Array<string | number>, number]>;

/** A copy of `v` with every SharedArrayBuffer replaced by null and listed in `bufs` / `places`. */
function detach(v: unknown, path: Array<string | number>, bufs: SharedArrayBuffer[], places: Places, seen: Map<object, unknown>): unknown {
  if (v instanceof SharedArrayBuffer) {
    let i = bufs.indexOf(v);
    if (i < 0) i = bufs.push(v) - 1;
    places.push([path, i]);
    return null;
  }
  if (v === null || typeof v !== "object") return v;
  const known = seen.get(v);
  if (known !== undefined) return known;
  if (Array.isArray(v)) {
    const copy: unknown[] = new Array(v.length);
    seen.set(v, copy);
    for (let i = 0; i < v.length; i++) if (i in v) copy[i] = detach(v[i], [...path, i], bufs, places, seen);
    return copy;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return v; // Map and others: structured clone copies them
  const copy: Record<string, unknown> = {};
  seen.set(v, copy);
  for (const k of Object.keys(v)) copy[k] = detach((v as Record<string, unknown>)[k], [...path, k], bufs, places, seen);
  return copy;
}

const pad8 = (n: number): number => (n + 7) & ~7;

/** The body of an entry: counts, buffer lengths, the serialized record, then each buffer (8-aligned). */
function encodeBody(record: CoreRecord): Uint8Array[] {
  const bufs: SharedArrayBuffer[] = [];
  const places: Places = [];
  const value = detach(record, [], bufs, places, new Map());
  const meta = serialize({ value, places });
  const head = new Uint8Array(8 + 8 * bufs.length);
  const view = new DataView(head.buffer);
  view.setUint32(0, meta.length, true);
  view.setUint32(4, bufs.length, true);
  bufs.forEach((b, i) => view.setFloat64(8 + 8 * i, b.byteLength, true));
  const chunks: Uint8Array[] = [head, meta, new Uint8Array(pad8(meta.length) - meta.length)];
  for (const b of bufs) chunks.push(new Uint8Array(b), new Uint8Array(pad8(b.byteLength) - b.byteLength));
  return chunks;
}

/** The record of a body; throws on any inconsistency. */
function decodeBody(body: Uint8Array): CoreRecord {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const metaLength = view.getUint32(0, true);
  const count = view.getUint32(4, true);
  let at = 8 + 8 * count;
  if (at > body.length) throw new Error("buffer table past the end");
  const lengths: number[] = [];
  for (let i = 0; i < count; i++) lengths.push(view.getFloat64(8 + 8 * i, true));
  if (at + metaLength > body.length) throw new Error("record past the end");
  const { value, places } = deserialize(body.subarray(at, at + metaLength)) as { value: Record<string, unknown>; places: Places };
  at += pad8(metaLength);
  const bufs = lengths.map((n) => {
    if (!Number.isInteger(n) || n < 0 || at + n > body.length) throw new Error("buffer past the end");
    const sab = new SharedArrayBuffer(n);
    new Uint8Array(sab).set(body.subarray(at, at + n));
    at += pad8(n);
    return sab;
  });
  if (at !== body.length) throw new Error("bytes after the last buffer");
  for (const [path, i] of places) {
    let o = value as Record<string | number, unknown>;
    for (const k of path.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
    o[path[path.length - 1] as string | number] = bufs[i];
  }
  return value as unknown as CoreRecord;
}

/**
 * The record stored under `key`, or null on a miss. An entry that cannot be used is removed and
 * warned about (DELTATOK_CACHE_INVALID); a directory that cannot be read is warned about once.
 */
export async function readCoreEntry(config: DiskCacheConfig, key: string): Promise<CoreRecord | null> {
  const file = entryPath(config, key);
  let bytes: Uint8Array | null;
  try {
    bytes = await readBytes(file, {
      optional: true,
      missingCode: "DT_INTERNAL",
      unreadableCode: "DT_INTERNAL",
      tooLargeCode: "DT_INPUT_TOO_LARGE",
      maxBytes: config.maxBytes,
      what: "tokenizer cache entry",
    });
  } catch (e) {
    const code = ((e as { cause?: { code?: unknown } }).cause as { code?: unknown } | undefined)?.code;
    if (code === "EACCES" || code === "EPERM" || code === "ELOOP" || code === "ENOTDIR") {
      // the directory, not the entry: a symlink loop, a file on the path, no permission
      warnUnwritable(config.dir, e);
      stats.misses++;
      return null;
    }
    if (e instanceof DeltatokError && e.code === "DT_INPUT_TOO_LARGE") {
      return invalid(file, `is over the cache's ${config.maxBytes}-byte bound`, "it is removed, and a tokenizer that large is not cached under this bound");
    }
    return invalid(file, "is not a readable regular file");
  }
  if (bytes === null) {
    stats.misses++;
    return null;
  }
  const why = checkHeader(bytes, key);
  if (why !== null) return invalid(file, why);
  let record: CoreRecord;
  try {
    record = decodeBody(bytes.subarray(HEADER_BYTES));
    if (record?.format !== "deltatok-core-record/1") throw new Error(`record format ${String(record?.format)}`);
  } catch (e) {
    return invalid(file, `does not decode (${(e as Error)?.message ?? e})`);
  }
  stats.hits++;
  const now = new Date();
  await utimes(file, now, now).catch(() => {}); // least recently used goes first
  return record;
}

/** Removes the entry under `key` that decoded but did not rebuild a core (DELTATOK_CACHE_INVALID). */
export async function discardCoreEntry(config: DiskCacheConfig, key: string, why: string): Promise<void> {
  stats.hits--;
  await invalid(entryPath(config, key), why);
}

async function invalid(file: string, why: string, outcome?: string): Promise<null> {
  warnInvalid(file, why, outcome);
  stats.misses++;
  await rm(file, { force: true }).catch(() => {});
  return null;
}

/** Why an entry's bytes are not an entry for `key`, or null when header and digest check out. */
function checkHeader(bytes: Uint8Array, key: string): string | null {
  if (bytes.length < HEADER_BYTES) return `is truncated (${bytes.length} bytes, shorter than its header)`;
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) return "is not a deltatok tokenizer cache entry";
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const format = view.getUint32(8, true);
  if (format !== CACHE_FORMAT) return `has cache format ${format}, not ${CACHE_FORMAT}`;
  const length = view.getFloat64(16, true);
  if (length !== bytes.length - HEADER_BYTES) return `is truncated or extended (its body is ${bytes.length - HEADER_BYTES} bytes; its header says ${length})`;
  if (Buffer.from(bytes.subarray(24, 56)).toString("hex") !== key) return "holds another key's tokenizer";
  const digest = createHash("sha256").update(bytes.subarray(HEADER_BYTES)).digest();
  if (!digest.equals(bytes.subarray(56, 88))) return "fails its digest (corrupt)";
  return null;
}

/**
 * Writes `record` under `key` (atomically), then keeps the directory under its bound. Never
 * throws: a failure is a DELTATOK_CACHE_UNWRITABLE warning (once per directory) and a count.
 */
export async function writeCoreEntry(config: DiskCacheConfig, key: string, record: CoreRecord): Promise<void> {
  let body: Uint8Array[];
  try {
    body = encodeBody(record);
  } catch (e) {
    // a record structured clone cannot copy is a bug, not a cache condition
    throw new DeltatokError("DT_INTERNAL", `the tokenizer cache cannot serialize this tokenizer: ${(e as Error)?.message ?? e}`, { cause: e });
  }
  const bodyLength = body.reduce((n, c) => n + c.length, 0);
  if (HEADER_BYTES + bodyLength > config.maxBytes) return; // larger than the whole cache: not kept
  const header = new Uint8Array(HEADER_BYTES);
  header.set(MAGIC, 0);
  const view = new DataView(header.buffer);
  view.setUint32(8, CACHE_FORMAT, true);
  view.setFloat64(16, bodyLength, true);
  header.set(Buffer.from(key, "hex"), 24);
  const h = createHash("sha256");
  for (const c of body) h.update(c);
  header.set(h.digest(), 56);
  const file = entryPath(config, key);
  const temp = join(config.dir, `.${key}.${process.pid}.${randomBytes(6).toString("hex")}${TEMP_SUFFIX}`);
  try {
    await mkdir(config.dir, { recursive: true });
    await writeFile(temp, [header, ...body], { flag: "wx", mode: 0o644 });
    await rename(temp, file);
    stats.writes++;
  } catch (e) {
    await rm(temp, { force: true }).catch(() => {});
    const code = (e as { code?: unknown } | null)?.code;
    if (code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST") {
      // something that is not an entry (a directory) holds the entry's name: left as it is, and
      // only this tokenizer goes uncached there
      stats.writeFailures++;
      process.emitWarning(`tokenizer cache entry ${file} is not a file deltatok wrote (a directory?): left as it is, and this tokenizer is not cached there`, { code: "DELTATOK_CACHE_INVALID" });
      return;
    }
    warnUnwritable(config.dir, e);
    return;
  }
  await evict(config, basename(file));
}

/** Removes stale temporary files, then the least recently used entries past the bound (never `keep`). */
async function evict(config: DiskCacheConfig, keep: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(config.dir);
  } catch {
    return;
  }
  const now = Date.now();
  const entries: Array<{ name: string; size: number; mtime: number }> = [];
  await Promise.all(
    names.map(async (name) => {
      // only the names this cache writes: a user's own files in the directory are never touched
      const isEntry = ENTRY_NAME.test(name);
      if (!isEntry && !TEMP_NAME.test(name)) return;
      try {
        const s = await stat(join(config.dir, name));
        if (!s.isFile()) return;
        if (isEntry) entries.push({ name, size: s.size, mtime: s.mtimeMs });
        else if (now - s.mtimeMs > STALE_TEMP_MS) await rm(join(config.dir, name), { force: true });
      } catch {
        // gone meanwhile (another process evicted or replaced it)
      }
    }),
  );
  let total = entries.reduce((n, e) => n + e.size, 0);
  if (total <= config.maxBytes) return;
  entries.sort((a, b) => a.mtime - b.mtime || (a.name < b.name ? -1 : 1));
  for (const e of entries) {
    if (total <= config.maxBytes) break;
    if (e.name === keep) continue;
    try {
      await rm(join(config.dir, e.name), { force: true });
      stats.evicted++;
      total -= e.size;
    } catch {
      // another process holds or removed it
    }
  }
}
