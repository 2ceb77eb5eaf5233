/**
 * `loadTokenizer`: resolve a spec, read the tokenizer files, build the runtime tokenizer, collect
 * chat templates and special tokens, and cache the frozen result. A directory without
 * tokenizer.json is read by src/load/formats/ (tiktoken rank file, tekken.json, SentencePiece
 * model) into the tokenizer.json it stands for; an OpenAI encoding by name likewise, from its
 * rank file, with no config or templates.
 *
 * Caching: two bounded, process-wide levels, both checked against the files' size, mtime and
 * inode on every call so an edited file is reloaded.
 * - The heavy part (tokenizer.json parse, the encoder's tables, identity hash) is keyed by the
 *   real directory, so `"qwen3"` and the path of its `models/`
 *   directory share one tokenizer instance (file paths in its messages are the first loader's).
 * - The finished LoadedTokenizer is keyed by spec + directory + override, so repeated loads with
 *   the same arguments return the very same frozen object.
 * Concurrent loads of the same key share one promise; a failed load is not cached.
 * Below both, across processes: the heavy part is built once and kept on disk, keyed by the
 * files' bytes (`cachedCore`, src/load/disk-cache.ts); a process that finds its entry attaches
 * the tables instead of parsing and building.
 *
 * Layer: load.
 */

import { realpath, readdir, stat } from "node:fs/promises";
import { join, resolve as resolvePath } from "node:path";

import { DeltatokError, toDeltatokError } from "../errors.js";
import type { ModuleResolver } from "./bundled.js";
import { deepFreeze, FrozenMap } from "./frozen.js";
import { tokenizerIdentity } from "./identity.js";
import { MAX_TEXT_FILE_BYTES, MAX_TOKENIZER_JSON_BYTES, parseJsonBytes, readBytes } from "./json-text.js";
import { resolveSpec, type ResolvedSpec } from "./resolve.js";
import { configForRuntime, resolveSpecialTokens, specialTokenVariables } from "./special-tokens.js";
import {
  CHAT_TEMPLATE_DIR,
  CHAT_TEMPLATE_FILE,
  directoryTemplates,
  LEGACY_CHAT_TEMPLATE_JSON,
  overrideFromFile,
  overrideFromText,
  templatesFromValue,
  type TemplateSet,
} from "./templates.js";
import { addedIdsVocabSize, buildTokenizer, checkTokenizerJson, freezeTokenizerJson, modelVocabSize, movedAddedIdsWarning } from "./tokenizer-json.js";
import { coreFromRecord, coreFromShared, lazyModel, listedScores, recordOfCore, shareCore, type Core, type LoadWarning, type SharedTokenizer } from "./shared-core.js";
import { coreEntryKey, diskCacheConfig, discardCoreEntry, readCoreEntry, writeCoreEntry, type DiskCacheConfig } from "./disk-cache.js";
import { buildEncoder, EncoderBuildError, type EncoderJson } from "../encoder/build.js";
import { scannerFor } from "../encoder/pretokenize/index.js";
import { readFormatDirectory, readTiktokenEncoding } from "./formats/directory.js";
import { formatEncoderJson } from "./formats/encoder-json.js";
import { readBoundedFile } from "./formats/read-bounded.js";
import { addedTokenContents } from "./formats/tiktoken-families.js";
import type { TokenizerJson } from "./types.js";
import type { LoadedTokenizer, LoadOptions, TokenizerOrigin } from "./types.js";
import { withoutInstallPaths } from "./display.js";

const TOKENIZER_FILE = "tokenizer.json";
const CONFIG_FILE = "tokenizer_config.json";
const SPECIAL_TOKENS_MAP_FILE = "special_tokens_map.json";

/** At most this many distinct tokenizer directories stay cached (least recently used dropped first). */
export const MAX_CACHED_TOKENIZERS = 8;
/** At most this many LoadedTokenizer objects (spec × override combinations) stay cached. */
const MAX_CACHED_LOADS = 32;

interface Entry<T> {
  readonly stamp: string;
  readonly group: string;
  readonly promise: Promise<T>;
}

/**
 * A small LRU of promises keyed by string. Entries carry a group (the real tokenizer directory):
 * `onDrop` hears of every entry evicted or replaced, and `dropGroup` removes a group's entries.
 */
class PromiseCache<T> {
  readonly #max: number;
  readonly #map = new Map<string, Entry<T>>();
  readonly #onDrop: ((group: string) => void) | undefined;

  constructor(max: number, onDrop?: (group: string) => void) {
    this.#max = max;
    this.#onDrop = onDrop;
  }

  get(key: string, stamp: string, group: string, make: () => Promise<T>): Promise<T> {
    const hit = this.#map.get(key);
    if (hit !== undefined && hit.stamp === stamp) {
      this.#map.delete(key);
      this.#map.set(key, hit);
      return hit.promise;
    }
    if (hit !== undefined) this.#remove(key, hit);
    const promise = make();
    const entry: Entry<T> = { stamp, group, promise };
    this.#map.set(key, entry);
    while (this.#map.size > this.#max) {
      const [oldestKey, oldest] = this.#map.entries().next().value as [string, Entry<T>];
      this.#remove(oldestKey, oldest);
    }
    promise.catch(() => {
      if (this.#map.get(key) === entry) this.#map.delete(key);
    });
    return promise;
  }

  /** The entry's promise when `key` is cached with `stamp`, without touching the order. */
  peek(key: string, stamp: string): Promise<T> | undefined {
    const hit = this.#map.get(key);
    return hit !== undefined && hit.stamp === stamp ? hit.promise : undefined;
  }

  dropGroup(group: string): void {
    for (const [key, entry] of this.#map) if (entry.group === group) this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }

  #remove(key: string, entry: Entry<T>): void {
    this.#map.delete(key);
    this.#onDrop?.(entry.group);
  }
}

const loads = new PromiseCache<LoadedTokenizer>(MAX_CACHED_LOADS);
// A finished load holds its core: when a core leaves the cache, so do the loads built on it, so
// at most MAX_CACHED_TOKENIZERS tokenizers are kept alive by the cache.
const cores = new PromiseCache<Core>(MAX_CACHED_TOKENIZERS, (realDir) => loads.dropGroup(realDir));

/** Drops every cached tokenizer (they stay alive while callers hold them). */
export function clearTokenizerCache(): void {
  cores.clear();
  loads.clear();
}

/** size:mtime:inode of a path, or "-" when it does not exist. */
async function fileStamp(path: string): Promise<string> {
  try {
    const s = await stat(path);
    return `${s.size}:${s.mtimeMs}:${s.ino}`;
  } catch {
    return "-";
  }
}

async function templateDirStamp(dir: string): Promise<string> {
  try {
    const names = (await readdir(dir)).filter((n) => n.endsWith(".jinja")).sort();
    const parts = await Promise.all(names.map(async (n) => `${n}=${await fileStamp(join(dir, n))}`));
    return parts.join(",");
  } catch {
    return "-";
  }
}

function validateOptions(spec: unknown, options: unknown): LoadOptions {
  if (typeof spec !== "string") {
    throw new DeltatokError("DT_INVALID_OPTION", `tokenizer spec must be a string; got ${typeof spec}`, {
      path: "spec",
    });
  }
  if (options === undefined || options === null) return {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new DeltatokError("DT_INVALID_OPTION", "load options must be an object", { path: "options" });
  }
  const o = options as Record<string, unknown>;
  for (const key of ["chatTemplate", "chatTemplateFile"] as const) {
    const v = o[key];
    if (v !== undefined && (typeof v !== "string" || v === "")) {
      throw new DeltatokError("DT_INVALID_OPTION", `options.${key} must be a non-empty string`, {
        path: `options.${key}`,
      });
    }
  }
  if (o["chatTemplate"] !== undefined && o["chatTemplateFile"] !== undefined) {
    throw new DeltatokError("DT_INVALID_OPTION", "options.chatTemplate and options.chatTemplateFile are mutually exclusive", {
      path: "options.chatTemplateFile",
    });
  }
  const pattern = o["pattern"];
  if (pattern !== undefined && (typeof pattern !== "string" || pattern === "")) {
    throw new DeltatokError("DT_INVALID_OPTION", "options.pattern must be a non-empty string", { path: "options.pattern" });
  }
  const cacheDir = o["cacheDir"];
  if (cacheDir !== undefined && (typeof cacheDir !== "string" || cacheDir === "")) {
    throw new DeltatokError("DT_INVALID_OPTION", 'options.cacheDir must be a non-empty string (a directory, or "off")', { path: "options.cacheDir" });
  }
  const cacheMaxBytes = o["cacheMaxBytes"];
  if (cacheMaxBytes !== undefined && !(typeof cacheMaxBytes === "number" && Number.isSafeInteger(cacheMaxBytes) && cacheMaxBytes > 0)) {
    throw new DeltatokError("DT_INVALID_OPTION", "options.cacheMaxBytes must be a positive integer", { path: "options.cacheMaxBytes" });
  }
  const env = o["env"];
  if (env !== undefined && (env === null || typeof env !== "object" || Array.isArray(env))) {
    throw new DeltatokError("DT_INVALID_OPTION", "options.env must be an object of strings", { path: "options.env" });
  }
  return o as LoadOptions;
}

/** Files other than tokenizer.json a tokenizer may be read from (their stamps make a core stale). */
const FORMAT_FILE = /^(tekken\.json|tiktoken\.model|tokenizer\.model|.*\.tiktoken|tokenization_.*\.py)$/;

/** The key of a core: its directory, and the pattern option when one was given. */
function coreKey(realDir: string, pattern: string | undefined, encoding: Encoding | undefined): string {
  const base = encoding === undefined ? realDir : `${realDir}\u0000encoding:${encoding.name}:${encoding.source.file}`;
  return pattern === undefined ? base : `${base}\u0000pattern:${pattern}`;
}

type Encoding = NonNullable<ResolvedSpec["encoding"]>;

async function loadCore(dir: string, pattern: string | undefined, encoding?: Encoding): Promise<Core> {
  if (encoding !== undefined) return loadEncodingCore(encoding, pattern);
  const tokenizerFile = join(dir, TOKENIZER_FILE);
  const configFile = join(dir, CONFIG_FILE);
  const stmFile = join(dir, SPECIAL_TOKENS_MAP_FILE);

  const [tokenizerBytes, configBytes, stmBytes] = await Promise.all([
    readBytes(tokenizerFile, {
      optional: true,
      missingCode: "DT_TOKENIZER_NOT_FOUND",
      unreadableCode: "DT_TOKENIZER_INVALID",
      tooLargeCode: "DT_TOKENIZER_TOO_LARGE",
      maxBytes: MAX_TOKENIZER_JSON_BYTES,
      what: "tokenizer.json",
    }),
    readBytes(configFile, {
      optional: true,
      missingCode: "DT_TOKENIZER_NOT_FOUND",
      unreadableCode: "DT_TOKENIZER_INVALID",
      tooLargeCode: "DT_TOKENIZER_TOO_LARGE",
      maxBytes: MAX_TEXT_FILE_BYTES,
      what: "tokenizer_config.json",
    }),
    readBytes(stmFile, {
      optional: true,
      missingCode: "DT_TOKENIZER_NOT_FOUND",
      unreadableCode: "DT_TOKENIZER_INVALID",
      tooLargeCode: "DT_TOKENIZER_TOO_LARGE",
      maxBytes: MAX_TEXT_FILE_BYTES,
      what: "special_tokens_map.json",
    }),
  ]);
  const config = configBytes === null ? {} : parseObject(configBytes, configFile);
  const stm = stmBytes === null ? null : parseObject(stmBytes, stmFile);
  const resolved = resolveSpecialTokens(config, stm, { config: configFile, specialTokensMap: stmFile });
  const configTemplates = templatesFromValue(config["chat_template"], configFile, "DT_TOKENIZER_INVALID");
  if (tokenizerBytes === null) return loadFormatCore(dir, pattern, config, configBytes, resolved, configTemplates);
  if (pattern !== undefined) {
    throw new DeltatokError("DT_INVALID_OPTION", `the pattern option applies to tiktoken rank files; ${dir} holds tokenizer.json`, { path: "options.pattern" });
  }

  const parsed = parseJsonBytes(tokenizerBytes, tokenizerFile, "DT_TOKENIZER_INVALID");
  let tokenizerJson = checkTokenizerJson(parsed, tokenizerFile);
  const runtimeConfig = configForRuntime(config, resolved);
  let built = await buildTokenizer(tokenizerJson, runtimeConfig, tokenizerFile);
  // added-token ids were assigned with the vocabulary size the file implies: where the built
  // model has another, check and build again with it (a file the Rust crate did not write)
  const size = modelVocabSize(tokenizerJson, built.encoder);
  const assumed = addedIdsVocabSize(tokenizerJson);
  if (assumed !== null && assumed !== size) {
    tokenizerJson = checkTokenizerJson(parsed, tokenizerFile, "file", size);
    built = await buildTokenizer(tokenizerJson, runtimeConfig, tokenizerFile);
  }
  const moved = movedAddedIdsWarning(tokenizerJson, tokenizerFile);
  const warnings: LoadWarning[] = moved === null ? [] : [moved];
  for (const w of warnings) process.emitWarning(w.message, { code: w.code });
  freezeTokenizerJson(tokenizerJson);
  const id = await tokenizerIdentity(tokenizerBytes, configBytes);

  return Object.freeze({
    id,
    file: tokenizerFile,
    tokenizer: built.encoder,
    shared: built.shared,
    tokenizerJson,
    patterns: { exact: built.encoder.exact, notes: built.encoder.notes },
    runtimeConfig,
    config: deepFreeze(config),
    specialTokens: specialTokenVariables(resolved),
    configTemplates,
    fromShared: false,
    warnings,
  });
}

/**
 * `loadCore` through the disk cache (src/load/disk-cache.ts) when `disk` is set: a core whose
 * entry exists is attached from it (its load's warnings emitted again); otherwise it is built
 * and its entry written, unless a file changed while it was built. A core with no shared form
 * (the library fallback) is not cached.
 */
async function cachedCore(dir: string, pattern: string | undefined, encoding: Encoding | undefined, disk: DiskCacheConfig | null): Promise<Core> {
  if (disk === null) return loadCore(dir, pattern, encoding);
  const key = await coreDiskKey(dir, pattern, encoding);
  if (key !== null) {
    const record = await readCoreEntry(disk, key);
    if (record !== null) {
      let core: Core | null = null;
      try {
        core = coreFromRecord(record);
      } catch (e) {
        await discardCoreEntry(disk, key, `does not rebuild a tokenizer (${(e as Error)?.message ?? e})`);
      }
      if (core !== null) {
        for (const w of core.warnings) process.emitWarning(w.message, { code: w.code });
        return core;
      }
    }
  }
  const core = await loadCore(dir, pattern, encoding);
  const record = recordOfCore(core);
  if (key !== null && record !== null && (await coreDiskKey(dir, pattern, encoding)) === key) await writeCoreEntry(disk, key, record);
  return core;
}

/**
 * The disk-cache key of the core `loadCore` builds, from the bytes of the files it reads; null
 * when one cannot be read (the build then fails with the right error, and nothing is cached).
 */
async function coreDiskKey(dir: string, pattern: string | undefined, encoding: Encoding | undefined): Promise<string | null> {
  const read = (name: string, maxBytes: number): Promise<Uint8Array | null> =>
    readBytes(join(dir, name), { optional: true, missingCode: "DT_TOKENIZER_NOT_FOUND", unreadableCode: "DT_TOKENIZER_INVALID", tooLargeCode: "DT_TOKENIZER_TOO_LARGE", maxBytes, what: name });
  try {
    if (encoding !== undefined) {
      const files: Array<[string, Uint8Array]> = [[encoding.source.file, encoding.source.bytes]];
      return coreEntryKey({ kind: "encoding", dir, pattern: pattern ?? null, encoding: encoding.name, files });
    }
    const [tok, cfg, stm] = await Promise.all([read(TOKENIZER_FILE, MAX_TOKENIZER_JSON_BYTES), read(CONFIG_FILE, MAX_TEXT_FILE_BYTES), read(SPECIAL_TOKENS_MAP_FILE, MAX_TEXT_FILE_BYTES)]);
    const files: Array<[string, Uint8Array | null]> = [[TOKENIZER_FILE, tok], [CONFIG_FILE, cfg], [SPECIAL_TOKENS_MAP_FILE, stm]];
    if (tok !== null) return coreEntryKey({ kind: "tokenizer.json", dir, pattern: pattern ?? null, encoding: null, files });
    const names = (await readdir(dir)).filter((n) => FORMAT_FILE.test(n)).sort();
    for (const n of names) files.push([n, await read(n, MAX_TOKENIZER_JSON_BYTES)]);
    return coreEntryKey({ kind: "format", dir, pattern: pattern ?? null, encoding: null, files });
  } catch {
    return null;
  }
}

/** A core of an OpenAI encoding by name: its rank file, the family's pattern and specials, no config or templates. */
async function loadEncodingCore(encoding: Encoding, pattern: string | undefined): Promise<Core> {
  const { name, source } = encoding;
  const format = readTiktokenEncoding(name, source.bytes, source.file, pattern ?? null);
  const fe = formatEncoderJson(format, {}, null);
  const checked = checkTokenizerJson(fe.json, source.file, "converted");
  let built;
  try {
    built = buildEncoder(checked as unknown as EncoderJson, { scannerFor }, fe.source ?? undefined);
  } catch (e) {
    if (e instanceof EncoderBuildError) throw new DeltatokError("DT_TOKENIZER_INVALID", `${source.file}: ${e.message}`, { path: e.path, cause: e });
    throw e;
  }
  if (!built.ok) throw new DeltatokError("DT_TOKENIZER_UNSUPPORTED", `${source.file}: ${built.unsupported}`);
  const tokenizerJson = { ...checked, model: lazyModel(checked.model as Record<string, unknown>, built.encoder.model.tables, listedScores(built.encoder.model)) } as unknown as TokenizerJson;
  freezeTokenizerJson(tokenizerJson);
  const resolved = resolveSpecialTokens({}, null, { config: CONFIG_FILE, specialTokensMap: SPECIAL_TOKENS_MAP_FILE });
  return Object.freeze({
    id: await tokenizerIdentity(source.bytes, null, pattern === undefined ? null : new TextEncoder().encode(pattern)),
    file: source.file,
    tokenizer: built.encoder,
    shared: built.shared,
    tokenizerJson,
    patterns: { exact: built.encoder.exact, notes: [`${fe.description} (rank file from ${source.via})`, ...built.encoder.notes] },
    runtimeConfig: configForRuntime({}, resolved),
    config: deepFreeze({}),
    specialTokens: specialTokenVariables(resolved),
    configTemplates: { templates: new Map<string, string>(), sources: new Map<string, string>() },
    fromShared: false,
    warnings: [],
  });
}

/**
 * A core from a directory without tokenizer.json: a tiktoken rank file, tekken.json or a
 * SentencePiece model (src/load/formats/), as the tokenizer.json it stands for.
 */
async function loadFormatCore(
  dir: string,
  pattern: string | undefined,
  config: Record<string, unknown>,
  configBytes: Uint8Array | null,
  resolved: ReturnType<typeof resolveSpecialTokens>,
  configTemplates: TemplateSet,
): Promise<Core> {
  const format = await readFormatDirectory(dir, pattern === undefined ? {} : { pattern });
  if (format.format === "tokenizer.json") throw new DeltatokError("DT_INTERNAL", `${dir}: tokenizer.json appeared while loading`);
  if (pattern !== undefined && format.format !== "tiktoken") {
    throw new DeltatokError("DT_INVALID_OPTION", `the pattern option applies to tiktoken rank files; ${dir} holds a ${format.format} tokenizer`, { path: "options.pattern" });
  }
  const file = format.file;
  const fe = formatEncoderJson(format, config, addedTokenContents(config, join(dir, CONFIG_FILE)));
  const checked = checkTokenizerJson(fe.json, file, "converted");
  const runtimeConfig = configForRuntime(config, resolved);
  let tokenizer;
  let shared;
  let tokenizerJson: TokenizerJson;
  if (fe.source === null) {
    const built = await buildTokenizer(checked, runtimeConfig, file);
    if (built.shared === null && checked.model.type === "Unigram") {
      // the library fallback's Unigram ids differ from transformers' on most fixture texts:
      // refused rather than answered inexactly
      throw new DeltatokError("DT_TOKENIZER_UNSUPPORTED", `${file}: this SentencePiece Unigram model needs ${built.encoder.unsupported ?? "?"}, which deltatok's encoder lacks`);
    }
    tokenizer = built.encoder;
    shared = built.shared;
    tokenizerJson = checked;
  } else {
    let built;
    try {
      built = buildEncoder(checked as unknown as EncoderJson, { scannerFor }, fe.source);
    } catch (e) {
      if (e instanceof EncoderBuildError) throw new DeltatokError("DT_TOKENIZER_INVALID", `${file}: ${e.message}`, { path: e.path, cause: e });
      throw e;
    }
    if (!built.ok) throw new DeltatokError("DT_TOKENIZER_UNSUPPORTED", `${file}: ${built.unsupported}`);
    tokenizer = built.encoder;
    shared = built.shared;
    tokenizerJson = { ...checked, model: lazyModel(checked.model as Record<string, unknown>, built.encoder.model.tables, listedScores(built.encoder.model)) } as unknown as TokenizerJson;
  }
  freezeTokenizerJson(tokenizerJson);
  const modelBytes = await readBoundedFile(file, 64 * 1024 * 1024, format.format);
  const id = await tokenizerIdentity(modelBytes, configBytes, pattern === undefined ? null : new TextEncoder().encode(pattern));
  return Object.freeze({
    id,
    file,
    tokenizer,
    shared,
    tokenizerJson,
    patterns: { exact: tokenizer.exact, notes: [fe.description, ...tokenizer.notes] },
    runtimeConfig,
    config: deepFreeze(config),
    specialTokens: specialTokenVariables(resolved),
    configTemplates,
    fromShared: false,
    warnings: [],
  });
}

function parseObject(bytes: Uint8Array, file: string): Record<string, unknown> {
  const v = parseJsonBytes(bytes, file, "DT_TOKENIZER_INVALID");
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new DeltatokError("DT_TOKENIZER_INVALID", `${file} must hold a JSON object`);
  }
  return v as Record<string, unknown>;
}

/**
 * Loads a tokenizer: a bundled name ("qwen3", see BUNDLED_TOKENIZERS), a directory, a
 * tokenizer.json path, or an `org/name` model id found offline in the Hugging Face hub cache.
 * Rejects with a DeltatokError (DT_TOKENIZER_UNKNOWN, DT_TOKENIZER_NOT_FOUND, DT_TOKENIZER_INVALID,
 * DT_TEMPLATE_NOT_FOUND, DT_TEMPLATE_FILE_INVALID, DT_INVALID_OPTION). The result is frozen and
 * cached for the process: loading the same arguments again returns the same object.
 */
export async function loadTokenizer(spec: string, options?: LoadOptions): Promise<LoadedTokenizer> {
  return loadTokenizerWith(spec, options, undefined);
}

/** @internal `loadTokenizer` with an injectable module resolver (tests of uninstalled bundled packages). */
export async function loadTokenizerWith(
  spec: string,
  options: LoadOptions | undefined,
  resolver: ModuleResolver | undefined,
  shared?: SharedTokenizer,
): Promise<LoadedTokenizer> {
  try {
    const opts = validateOptions(spec, options);
    const env = opts.env ?? process.env;
    const { dir, origin, encoding } = await resolveSpec(spec, env, resolver);
    const dirs = [dir];
    try {
      return await loadResolved(spec, opts, dir, origin, dirs, shared, encoding);
    } catch (e) {
      // a bundled tokenizer's files are named by its package, not by where it is installed
      throw withoutInstallPaths(toDeltatokError(e, "DT_INTERNAL"), { spec, origin, dir }, dirs);
    }
  } catch (e) {
    throw toDeltatokError(e, "DT_INTERNAL");
  }
}

/**
 * @internal What worker threads attach to instead of loading tokenizer.json each
 * (src/load/shared-core.ts): the tokenizer `spec` resolves to, its BPE tables in
 * SharedArrayBuffers. Uses the cached core when there is one; otherwise loads it without caching
 * it, so the tables are all this thread keeps. Rejects with the coded errors of
 * {@link loadTokenizer}; throws TablesUnsupported (not a DeltatokError) when the tokenizer has no
 * shared form (the library fallback).
 */
export async function shareTokenizer(spec: string, options?: LoadOptions): Promise<SharedTokenizer> {
  let core: Core;
  let realDir: string;
  let coreStamp: string;
  try {
    const opts = validateOptions(spec, options);
    const { dir, origin, encoding } = await resolveSpec(spec, opts.env ?? process.env, undefined);
    try {
      realDir = await realpath(dir);
    } catch (e) {
      throw new DeltatokError("DT_TOKENIZER_NOT_FOUND", `tokenizer directory not found: ${dir}`, { cause: e });
    }
    coreStamp = await coreStampOf(realDir, encoding);
    try {
      core = await (cores.peek(coreKey(realDir, opts.pattern, encoding), coreStamp) ?? cachedCore(dir, opts.pattern, encoding, diskCacheConfig(opts.cacheDir, opts.cacheMaxBytes)));
    } catch (e) {
      throw withoutInstallPaths(toDeltatokError(e, "DT_INTERNAL"), { spec, origin, dir }, [dir, realDir]);
    }
  } catch (e) {
    throw toDeltatokError(e, "DT_INTERNAL");
  }
  return shareCore(core, realDir, `${core.id}|${coreStamp}`);
}

async function coreStampOf(realDir: string, encoding?: Encoding): Promise<string> {
  if (encoding !== undefined) return `encoding:${await fileStamp(encoding.source.file)}`;
  const [tokStamp, cfgStamp, stmStamp, formatStamp] = await Promise.all([
    fileStamp(join(realDir, TOKENIZER_FILE)),
    fileStamp(join(realDir, CONFIG_FILE)),
    fileStamp(join(realDir, SPECIAL_TOKENS_MAP_FILE)),
    tokStampOrFormats(realDir),
  ]);
  return `${tokStamp}|${cfgStamp}|${stmStamp}|${formatStamp}`;
}

/** Stamps of the other tokenizer files, read only when the directory has no tokenizer.json. */
async function tokStampOrFormats(realDir: string): Promise<string> {
  if ((await fileStamp(join(realDir, TOKENIZER_FILE))) !== "-") return "";
  try {
    const names = (await readdir(realDir)).filter((n) => FORMAT_FILE.test(n)).sort();
    const parts = await Promise.all(names.map(async (n) => `${n}=${await fileStamp(join(realDir, n))}`));
    return parts.join(",");
  } catch {
    return "-";
  }
}

/** The load after the spec was resolved; `dirs` collects the directories messages may mention. */
async function loadResolved(
  spec: string,
  opts: LoadOptions,
  dir: string,
  origin: TokenizerOrigin,
  dirs: string[],
  shared: SharedTokenizer | undefined,
  encoding?: Encoding,
): Promise<LoadedTokenizer> {
  let realDir: string;
  try {
    realDir = await realpath(dir);
  } catch (e) {
    throw new DeltatokError("DT_TOKENIZER_NOT_FOUND", `tokenizer directory not found: ${dir}`, { cause: e });
  }
  if (realDir !== dir) dirs.push(realDir);

  const overrideFile = opts.chatTemplateFile === undefined ? undefined : resolvePath(opts.chatTemplateFile);
  if (shared !== undefined && shared.realDir !== realDir) {
    throw new DeltatokError("DT_INTERNAL", `shared tokenizer tables are of ${shared.realDir}, not ${realDir}`);
  }
  const [fileCoreStamp, jinjaStamp, jsonStamp, extraStamp, overrideStamp] = await Promise.all([
    shared === undefined ? coreStampOf(realDir, encoding) : Promise.resolve(""),
    fileStamp(join(realDir, CHAT_TEMPLATE_FILE)),
    fileStamp(join(realDir, LEGACY_CHAT_TEMPLATE_JSON)),
    templateDirStamp(join(realDir, CHAT_TEMPLATE_DIR)),
    overrideFile === undefined ? Promise.resolve("") : fileStamp(overrideFile),
  ]);
  // A shared core is the one the pool shared when it started: every worker, and every
  // replacement of a crashed one, tokenizes with those same tables, whatever the files say later.
  const coreStamp = shared === undefined ? fileCoreStamp : `shared:${shared.key}`;
  const loadStamp = `${coreStamp}|${jinjaStamp}|${jsonStamp}|${extraStamp}|${overrideStamp}`;
  const overrideKey =
    opts.chatTemplate !== undefined ? `text:${opts.chatTemplate}` : overrideFile !== undefined ? `file:${overrideFile}` : "";
  const loadKey = JSON.stringify([spec, dir, realDir, overrideKey, opts.pattern ?? null]);

  return await loads.get(loadKey, loadStamp, realDir, async () => {
    const core = await cores.get(coreKey(realDir, opts.pattern, encoding), coreStamp, realDir, async () =>
      shared === undefined ? cachedCore(dir, opts.pattern, encoding, diskCacheConfig(opts.cacheDir, opts.cacheMaxBytes)) : coreFromShared(shared),
    );
    let set: TemplateSet;
    if (opts.chatTemplate !== undefined) set = overrideFromText(opts.chatTemplate);
    else if (overrideFile !== undefined) set = await overrideFromFile(overrideFile);
    else if (encoding !== undefined) set = core.configTemplates; // an encoding has no templates
    else set = await directoryTemplates(dir, core.configTemplates);
    const loaded: LoadedTokenizer = {
      spec,
      origin,
      dir,
      id: core.id,
      tokenizer: core.tokenizer,
      tokenizerJson: core.tokenizerJson,
      patterns: core.patterns,
      config: core.config,
      specialTokens: core.specialTokens,
      templates: new FrozenMap(set.templates),
      templateSources: new FrozenMap(set.sources),
    };
    return Object.freeze(loaded);
  });
}
