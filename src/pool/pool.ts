/**
 * A pool of worker threads, each holding one Deltatok (tokenizer, templates, cache), on piscina.
 *
 * Every worker slot is its own single-thread piscina instance. That is deliberate: affinity
 * needs "run this on THAT worker", and piscina's load-balancer hook picks among workers for the
 * head of one shared FIFO, stopping at the first task it cannot place — a conversation waiting
 * for its busy owner would hold up every miss behind it. One instance per slot gives each slot
 * its own queue while piscina still does what it is good at: spawning the thread, the message
 * protocol (Atomics-signalled ports), moving transferables, replacing a thread that dies and
 * rejecting the tasks it held, and an orderly close.
 *
 * Startup: all workers load in parallel; `create` resolves once every one of them has answered
 * its init task (Deltatok loaded, warm-up done) within `startupTimeoutMs`, and rejects with
 * DT_WORKER_STARTUP (cause: the worker's own coded error) otherwise — never a silent fallback
 * to fewer workers or to the main thread.
 *
 * Isolation: every worker runs with V8 heap limits (`resourceLimits`, default from its Deltatok's
 * cache bound and largest prompt: {@link defaultWorkerHeapMb}). A worker that exceeds them dies
 * alone — piscina rejects the batch it held (DT_WORKER_OUT_OF_MEMORY) and starts a replacement in
 * the same slot — while the process and the other workers go on. Size: at most
 * {@link WORKERS_PER_CPU} × the usable CPUs (DT_INVALID_OPTION above that).
 */
import { EventEmitter } from "node:events";
import type { ResourceLimits } from "node:worker_threads";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { DeltatokError, toDeltatokError, type ErrorCode, type ErrorRecord } from "../errors.js";
import { resolveOptions, type DeltatokOptions, type ResolvedOptions } from "../api/options.js";
import type { DeltatokStats } from "../api/deltatok.js";
import { parseDate } from "../load/date.js";
import { detectCpus, type CpuInfo } from "./cpus.js";
import { tablesForWorkers, type WorkerTables } from "./tables.js";
import type { SharedTokenizer } from "../load/index.js";
import type { TestFaults, WireItem, WireResult, WorkerData, WorkerHeap, WorkerInfo, WorkerReply, WorkerTask } from "./protocol.js";

/** Options of {@link DeltatokPool.create}. */
export interface PoolOptions {
  /**
   * The options of every worker's Deltatok, sent to each worker by structured clone (so: plain
   * data and Dates). @defaultValue {}
   */
  deltatok?: DeltatokOptions;
  /**
   * @deprecated the old name of `deltatok` ("engine" alone means the template engine): still
   * read, with a `DELTATOK_DEPRECATED` warning once per process; both together are
   * DT_INVALID_OPTION.
   */
  engine?: DeltatokOptions;
  /**
   * Number of worker threads: 1 to {@link maxWorkers} (4 × the CPUs this process may use);
   * more is DT_INVALID_OPTION. Above the CPU count the pool starts, and warns once
   * (`DELTATOK_WORKERS_OVER_CPUS`): extra workers add memory (one Deltatok and cache each), not
   * throughput.
   * @defaultValue the CPUs this process may use ({@link detectCpus}: affinity mask and cgroup quota)
   */
  workers?: number;
  /**
   * Time for every worker to load its tokenizer and templates and run its warm-up, in ms.
   * @defaultValue 60000
   */
  startupTimeoutMs?: number;
  /**
   * Pin worker i's thread to the i-th CPU of the affinity mask (Linux, `taskset`). Off by
   * default: it did not measurably help on the machine it was measured on (src/pool/README.md).
   * @defaultValue false
   */
  pin?: boolean;
  /**
   * How long `close()` lets running batches finish before terminating their threads, in ms.
   * @defaultValue 30000
   */
  closeTimeoutMs?: number;
  /**
   * V8 heap limits of each worker thread (`worker_threads` ResourceLimits, in MB), merged over
   * the default. A worker exceeding `maxOldGenerationSizeMb` dies alone: its batch's items are
   * retried once, each alone on another worker, and one that kills that worker too is answered
   * DT_WORKER_OUT_OF_MEMORY. (Without one, each worker could grow to V8's default for the whole
   * process, ~4 GB, and a few runaways would exhaust the machine before any reached it.)
   * @defaultValue `{ maxOldGenerationSizeMb: defaultWorkerHeapMb(deltatok) }` (≈1.7 GB with the
   *   Deltatok defaults; Node's defaults for the other fields)
   */
  resourceLimits?: ResourceLimits;
  /**
   * Aborting it during startup ends `create` at once: the threads are destroyed and it rejects
   * with DT_CLOSED. (After startup it has no effect: use `close()`.)
   */
  signal?: AbortSignal;
  /** Called as each worker finishes loading and warming up (startup progress). */
  onWorkerReady?: (p: StartupProgress) => void;
  /**
   * Build the tokenizer's BPE tables once (in a short-lived thread) and let every worker attach
   * to them (SharedArrayBuffers) instead of loading its own copy: a worker then costs ~30 MB
   * instead of ~135 MB (src/pool/README.md, "Shared tokenizer tables"). A tokenizer the tables cannot describe
   * is loaded per worker, with a `DELTATOK_TABLES_UNSHARED` warning. False: every worker loads
   * its own, as before.
   * @defaultValue true
   */
  shareTables?: boolean;
  /** @internal Injected faults (tests and the crash benchmark). */
  testFaults?: TestFaults;
}

/** One worker of a starting pool is ready. */
export interface StartupProgress {
  slot: number;
  /** Workers ready so far. */
  ready: number;
  workers: number;
  /** Since `create` began starting threads. */
  elapsedMs: number;
}

/** The resolved, frozen pool options. */
export interface ResolvedPoolOptions {
  /** The options every worker's Deltatok is created with. */
  readonly deltatok: DeltatokOptions;
  readonly resolvedDeltatok: ResolvedOptions;
  readonly workers: number;
  readonly startupTimeoutMs: number;
  readonly pin: boolean;
  readonly closeTimeoutMs: number;
  /** The limits every worker runs with (the default merged with the caller's). */
  readonly resourceLimits: Readonly<ResourceLimits>;
  readonly cpus: CpuInfo;
  readonly shareTables: boolean;
}

/** What the queue needs of a pool (tests substitute a fake). */
export interface BatchRunner {
  /** Number of worker slots. */
  readonly size: number;
  /**
   * Runs items on one slot; resolves with one result per item, in order. Rejects only when the
   * batch as a whole failed: DT_WORKER_CRASHED (the thread died holding it), DT_WORKER_STARTUP
   * (its replacement could not load), DT_CLOSED.
   */
  runBatch(slot: number, items: WireItem[]): Promise<WireResult[]>;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Per worker slot (null for a slot that did not answer). */
  workers: Array<DeltatokStats | null>;
  /** Sum over the workers that answered. */
  total: DeltatokStats;
  /** Each worker's V8 heap (null for a slot that did not answer). */
  heap: Array<WorkerHeap | null>;
}

function optionError(path: string, message: string): DeltatokError {
  return new DeltatokError("DT_INVALID_OPTION", `${path} ${message}`, { path });
}

/** Most workers per usable CPU: `workers` (and `--workers`) above this many are refused. */
export const WORKERS_PER_CPU = 4;

/** encodeTexts: characters after which a chunk of texts is closed (one worker task). */
export const ENCODE_CHUNK_CHARS = 128 * 1024;
/** encodeTexts: texts in one chunk at most. */
export const ENCODE_CHUNK_TEXTS = 512;

/**
 * The most workers a pool may have: {@link WORKERS_PER_CPU} × the CPUs this process may use.
 * Each worker is a V8 isolate with its own templates and cache, attached to the shared
 * tokenizer tables (≈30 MB resident before any work; ≈134 MB with `shareTables: false`,
 * measured), so far above the CPU count a pool only costs memory and startup time — 10,000
 * workers never finish starting, 40 on 2 CPUs held 6 GB (before the tables were shared).
 */
export function maxWorkers(cpus: CpuInfo = detectCpus()): number {
  return WORKERS_PER_CPU * cpus.count;
}

const MIB = 1024 * 1024;

/**
 * The default V8 old-generation limit of a worker, in MB, from the Deltatok options it runs with:
 * 512 + 2 × the cache bound in MiB + 48 bytes per character of the largest prompt
 * (`maxPromptChars`). With the Deltatok defaults (256 MiB cache, 16,000,000 characters) that is
 * 1,757 MB. Measured on qwen3 (src/pool/README.md, "Worker memory"): a loaded worker holds
 * 60–90 MB of heap; a full 256 MiB cache holds 430–540 MB; a 16M-character prompt needs more
 * than 512 MB and less than 768 MB on its own; both together fail at 768 MB and pass at
 * 1,024 MB. The formula keeps ~1.7× that margin and scales with the two options that drive it.
 */
export function defaultWorkerHeapMb(deltatok: Pick<ResolvedOptions, "cacheBytes" | "maxPromptChars">): number {
  return 512 + 2 * Math.ceil(deltatok.cacheBytes / MIB) + Math.ceil((48 * deltatok.maxPromptChars) / MIB);
}

const POOL_KEYS = new Set(["deltatok", "engine", "workers", "startupTimeoutMs", "pin", "closeTimeoutMs", "resourceLimits", "signal", "onWorkerReady", "shareTables", "testFaults"]);
const LIMIT_KEYS = new Set(["maxOldGenerationSizeMb", "maxYoungGenerationSizeMb", "codeRangeSizeMb", "stackSizeMb"]);

let warnedOverCpus = false;
let warnedEngine = false;

/** The workers' Deltatok options: `deltatok`, or the deprecated `engine` (warned once). */
function deltatokOptions(o: PoolOptions, path: string): DeltatokOptions {
  if (o.engine === undefined) return o.deltatok ?? {};
  if (o.deltatok !== undefined) throw optionError(`${path}.engine`, "is the deprecated name of deltatok: give one of them");
  if (!warnedEngine) {
    warnedEngine = true;
    process.emitWarning('DeltatokPool option "engine" is deprecated: name the workers\' Deltatok options "deltatok"', { type: "DeprecationWarning", code: "DELTATOK_DEPRECATED" });
  }
  return o.engine;
}

/**
 * Validates `workers` against the usable CPUs (`path` names it in the error): an integer from 1
 * to {@link maxWorkers}, else DT_INVALID_OPTION. Warns once per process above the CPU count.
 */
export function checkWorkers(workers: unknown, cpus: CpuInfo, path = "options.workers"): number {
  if (typeof workers !== "number" || !Number.isSafeInteger(workers) || workers < 1) throw optionError(path, `must be a positive integer, got ${String(workers)}`);
  const max = maxWorkers(cpus);
  if (workers > max) throw optionError(path, `must be at most ${max} (${WORKERS_PER_CPU} × the ${cpus.count} CPUs this process may use), got ${workers}`);
  if (workers > cpus.count && !warnedOverCpus) {
    warnedOverCpus = true;
    process.emitWarning(`${workers} deltatok workers on ${cpus.count} usable CPUs: each extra worker costs memory (a Deltatok and a cache), not throughput`, {
      code: "DELTATOK_WORKERS_OVER_CPUS",
    });
  }
  return workers;
}

function resolveLimits(given: unknown, deltatok: ResolvedOptions, path: string): Readonly<ResourceLimits> {
  const out: ResourceLimits = { maxOldGenerationSizeMb: defaultWorkerHeapMb(deltatok) };
  if (given === undefined) return Object.freeze(out);
  if (typeof given !== "object" || given === null || Array.isArray(given)) throw optionError(path, "must be an object");
  for (const [k, v] of Object.entries(given)) {
    if (!LIMIT_KEYS.has(k)) throw optionError(`${path}.${k}`, `is not a resource limit (${[...LIMIT_KEYS].join(", ")})`);
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw optionError(`${path}.${k}`, `must be a positive number of MB, got ${String(v)}`);
    (out as Record<string, number>)[k] = v;
  }
  return Object.freeze(out);
}

/** Validates and resolves pool options (`path` prefixes option names in errors). */
export function resolvePoolOptions(o: PoolOptions, path = "options"): ResolvedPoolOptions {
  if (typeof o !== "object" || o === null) throw optionError(path, "must be an object");
  for (const k of Object.keys(o)) if (!POOL_KEYS.has(k)) throw optionError(`${path}.${k}`, "is not a pool option");
  const deltatok = deltatokOptions(o, path);
  const resolvedDeltatok = resolveOptions(deltatok, parseDate);
  const cpus = detectCpus();
  const workers = checkWorkers(o.workers ?? cpus.count, cpus, `${path}.workers`);
  const startupTimeoutMs = o.startupTimeoutMs ?? 60_000;
  if (typeof startupTimeoutMs !== "number" || !(startupTimeoutMs > 0)) throw optionError(`${path}.startupTimeoutMs`, `must be a positive number, got ${String(startupTimeoutMs)}`);
  const closeTimeoutMs = o.closeTimeoutMs ?? 30_000;
  if (typeof closeTimeoutMs !== "number" || !(closeTimeoutMs >= 0)) throw optionError(`${path}.closeTimeoutMs`, `must be a non-negative number, got ${String(closeTimeoutMs)}`);
  if (o.pin !== undefined && typeof o.pin !== "boolean") throw optionError(`${path}.pin`, "must be a boolean");
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw optionError(`${path}.signal`, "must be an AbortSignal");
  if (o.onWorkerReady !== undefined && typeof o.onWorkerReady !== "function") throw optionError(`${path}.onWorkerReady`, "must be a function");
  if (o.shareTables !== undefined && typeof o.shareTables !== "boolean") throw optionError(`${path}.shareTables`, "must be a boolean");
  const resourceLimits = resolveLimits(o.resourceLimits, resolvedDeltatok, `${path}.resourceLimits`);
  return Object.freeze({ deltatok, resolvedDeltatok, workers, startupTimeoutMs, pin: o.pin ?? false, closeTimeoutMs, resourceLimits, cpus, shareTables: o.shareTables ?? true });
}

/** The worker module: compiled JS next to this file, or the TypeScript source under tsx. */
function workerModule(): { filename: string; execArgv: string[] | undefined } {
  const js = fileURLToPath(new URL("./worker.js", import.meta.url));
  if (existsSync(js)) return { filename: js, execArgv: undefined };
  const ts = fileURLToPath(new URL("./worker.ts", import.meta.url));
  const hasTsx = process.execArgv.some((a) => a.includes("tsx"));
  return { filename: ts, execArgv: hasTsx ? undefined : [...process.execArgv, "--import", "tsx"] };
}

/** Whether a worker's death was its heap limit (Node's ERR_WORKER_OUT_OF_MEMORY). */
export function isOutOfMemory(e: unknown): boolean {
  return typeof e === "object" && e !== null && (e as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY";
}

function crashError(slot: number, e: unknown, limits?: Readonly<ResourceLimits>): DeltatokError {
  if (e instanceof DeltatokError) return e;
  if (isOutOfMemory(e)) {
    const mb = limits?.maxOldGenerationSizeMb;
    return new DeltatokError("DT_WORKER_OUT_OF_MEMORY", `worker ${slot} ran out of its memory limit${mb === undefined ? "" : ` (${mb} MB of heap)`} while running a batch`, { cause: e });
  }
  const msg = e instanceof Error ? e.message : String(e);
  return new DeltatokError("DT_WORKER_CRASHED", `worker ${slot} died while running a batch: ${msg}`, { cause: e });
}

function remoteError(r: ErrorRecord): DeltatokError {
  return new DeltatokError(r.code, r.message, r.path === undefined ? {} : { path: r.path });
}

/**
 * Startup within its budget: resolves with `p`, or rejects DT_WORKER_STARTUP when
 * `startupTimeoutMs` passes first (saying how many workers were ready), or DT_CLOSED when
 * `signal` aborts first.
 */
function startupRace<T>(p: Promise<T>, ms: number, signal: AbortSignal | undefined, ready: () => number, workers: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const t = new Promise<never>((_r, reject) => {
    timer = setTimeout(
      () => reject(new DeltatokError("DT_WORKER_STARTUP", `${ready()} of ${workers} workers loaded within ${ms} ms (startupTimeoutMs)`)),
      ms,
    );
    if (signal !== undefined) {
      onAbort = () => reject(new DeltatokError("DT_CLOSED", `pool startup was aborted (${ready()} of ${workers} workers were ready)`));
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  return Promise.race([p, t]).finally(() => {
    clearTimeout(timer);
    if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
  });
}

export function emptyStats(): DeltatokStats {
  return {
    requests: 0,
    hits: 0,
    partial: 0,
    misses: 0,
    fallbacks: { no_safe_boundary: 0, seam_mismatch: 0, ids_not_stored: 0 },
    tokensReused: 0,
    tokensEncoded: 0,
    bytesHeld: 0,
    conversations: 0,
    evictions: 0,
    renderMs: 0,
    tokenizeMs: 0,
  };
}

/** Adds `b` into `a` field by field (numbers and the fallbacks record). */
export function addStats(a: DeltatokStats, b: DeltatokStats): DeltatokStats {
  const out = { ...a, fallbacks: { ...a.fallbacks } } as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(b)) {
    if (typeof v === "number") out[k] = ((out[k] as number | undefined) ?? 0) + v;
    else if (typeof v === "object" && v !== null) {
      const into = (out[k] ?? {}) as Record<string, number>;
      for (const [kk, vv] of Object.entries(v as Record<string, number>)) into[kk] = (into[kk] ?? 0) + vv;
      out[k] = into;
    }
  }
  return out as unknown as DeltatokStats;
}

/**
 * The worker pool. Events: `workerError` ({ slot, error }) when a thread dies or errors outside
 * a task.
 */
export class DeltatokPool extends EventEmitter implements BatchRunner {
  readonly #opts: ResolvedPoolOptions;
  readonly #slots: Piscina[];
  readonly #infos: WorkerInfo[];
  readonly #tables: WorkerTables;
  #closing: Promise<void> | null = null;

  private constructor(opts: ResolvedPoolOptions, slots: Piscina[], infos: WorkerInfo[], tables: WorkerTables) {
    super();
    this.#opts = opts;
    this.#slots = slots;
    this.#infos = infos;
    this.#tables = tables;
  }

  /** Starts the workers; resolves when all are loaded and warm. Rejects with a coded error. */
  static async create(options: PoolOptions = {}): Promise<DeltatokPool> {
    const opts = resolvePoolOptions(options);
    const tStart = performance.now();
    const tables = await startupRace(tablesForWorkers(opts.resolvedDeltatok.tokenizer, opts.shareTables, opts.resolvedDeltatok.pattern, opts.resolvedDeltatok.tokenizerCacheDir), opts.startupTimeoutMs, options.signal, () => 0, opts.workers);
    const { filename, execArgv } = workerModule();
    const affinity = opts.cpus.affinity ?? [];
    const slots: Piscina[] = [];
    const errors: Array<{ slot: number; error: unknown }> = [];
    for (let i = 0; i < opts.workers; i++) {
      const data: WorkerData = {
        options: opts.deltatok,
        slot: i,
        cpu: opts.pin && affinity.length > 0 ? (affinity[i % affinity.length] as number) : null,
        faults: options.testFaults ?? null,
        shared: tables.shared,
      };
      const p = new Piscina({
        filename,
        minThreads: 1,
        maxThreads: 1,
        idleTimeout: Infinity,
        concurrentTasksPerWorker: 1,
        closeTimeout: opts.closeTimeoutMs,
        workerData: data,
        resourceLimits: opts.resourceLimits,
        ...(execArgv === undefined ? {} : { execArgv }),
      });
      // piscina emits 'error' for a thread that dies holding no task; unhandled it would throw.
      p.on("error", (e: unknown) => errors.push({ slot: i, error: e }));
      slots.push(p);
    }
    const destroyAll = () => Promise.allSettled(slots.map((s) => s.destroy()));
    const t0 = performance.now();
    let ready = 0;
    const init = (s: Piscina, i: number) =>
      (s.run({ op: "init" } satisfies WorkerTask) as Promise<WorkerReply>).then(
        (r) => {
          if (r.op === "init") {
            ready++;
            options.onWorkerReady?.({ slot: i, ready, workers: opts.workers, elapsedMs: performance.now() - t0 });
          }
          return r;
        },
        (e: unknown) => Promise.reject(crashError(i, e, opts.resourceLimits)),
      );
    let replies: WorkerReply[];
    try {
      const left = Math.max(1, opts.startupTimeoutMs - (performance.now() - tStart));
      replies = await startupRace(Promise.all(slots.map(init)), left, options.signal, () => ready, opts.workers);
    } catch (e) {
      await destroyAll();
      const cause = toDeltatokError(e);
      if (cause.code === "DT_WORKER_STARTUP" || cause.code === "DT_CLOSED") throw cause;
      throw new DeltatokError("DT_WORKER_STARTUP", `a worker failed to start: ${cause.code}: ${cause.message}`, { cause });
    }
    const failed = replies.findIndex((r) => r.op !== "init");
    if (failed >= 0) {
      await destroyAll();
      const r = replies[failed] as WorkerReply;
      const cause = r.op === "failed" ? remoteError(r.error) : new DeltatokError("DT_INTERNAL", `unexpected init reply ${r.op}`);
      throw new DeltatokError("DT_WORKER_STARTUP", `worker ${failed} failed to load: ${cause.code}: ${cause.message}`, { cause, ...(cause.path === undefined ? {} : { path: cause.path }) });
    }
    const infos = replies.map((r) => (r as Extract<WorkerReply, { op: "init" }>).info);
    const pool = new DeltatokPool(opts, slots, infos, tables);
    slots.forEach((s, i) => {
      s.removeAllListeners("error");
      s.on("error", (e: unknown) => pool.emit("workerError", { slot: i, error: crashError(i, e, opts.resourceLimits).toJSON() }));
    });
    for (const { slot, error } of errors) pool.emit("workerError", { slot, error: crashError(slot, error, opts.resourceLimits).toJSON() });
    return pool;
  }

  /** Number of worker slots. */
  get size(): number {
    return this.#slots.length;
  }

  get options(): ResolvedPoolOptions {
    return this.#opts;
  }

  /** Whether the workers attach to shared tokenizer tables, their size, and why not when not. */
  get tables(): { shared: boolean; bytes: number; unshared?: string } {
    const t = this.#tables;
    return t.unshared === undefined ? { shared: t.shared !== null, bytes: t.bytes } : { shared: false, bytes: 0, unshared: t.unshared };
  }

  /** @internal The tables the workers attach to (tests), or null. */
  get sharedTokenizer(): SharedTokenizer | null {
    return this.#tables.shared;
  }

  /** What each worker reported when it started (thread ids, pinning, load time). */
  get workers(): readonly WorkerInfo[] {
    return this.#infos;
  }

  get closed(): boolean {
    return this.#closing !== null;
  }

  async #run(slot: number, task: WorkerTask): Promise<WorkerReply> {
    if (this.#closing !== null) throw new DeltatokError("DT_CLOSED", "the pool is closed");
    const p = this.#slots[slot];
    if (p === undefined) throw new RangeError(`no worker slot ${slot} (pool size ${this.#slots.length})`);
    let reply: WorkerReply;
    try {
      reply = (await p.run(task)) as WorkerReply;
    } catch (e) {
      if (this.#closing !== null) throw new DeltatokError("DT_CLOSED", "the pool closed while the batch ran", { cause: e });
      throw crashError(slot, e, this.#opts.resourceLimits);
    }
    if (reply.op === "failed") {
      throw new DeltatokError("DT_WORKER_STARTUP", `worker ${slot} (a replacement) failed to load: ${reply.error.code}: ${reply.error.message}`, {
        cause: remoteError(reply.error),
      });
    }
    return reply;
  }

  /** Runs items on one worker slot (see {@link BatchRunner.runBatch}). */
  async runBatch(slot: number, items: WireItem[]): Promise<WireResult[]> {
    const reply = await this.#run(slot, { op: "batch", items });
    if (reply.op !== "batch" || reply.results.length !== items.length) {
      throw new DeltatokError("DT_INTERNAL", `worker ${slot} answered ${items.length} items with ${reply.op === "batch" ? reply.results.length : reply.op}`);
    }
    return reply.results;
  }

  /**
   * Token ids of many texts, in order, as `Deltatok.encodeTexts` answers them, on every worker:
   * the texts go out in chunks (about {@link ENCODE_CHUNK_CHARS} characters, at most
   * {@link ENCODE_CHUNK_TEXTS} texts), each worker taking the next chunk when it finishes one.
   * `onProgress(done, total)` after each chunk. A bad text fails the call with its code and
   * `path` `texts[i]` (no partial answer), as one Deltatok would.
   */
  async encodeTexts(texts: readonly string[], options: { add_special_tokens?: boolean; onProgress?: (done: number, total: number) => void } = {}): Promise<Uint32Array[]> {
    if (!Array.isArray(texts)) throw new DeltatokError("DT_INVALID_REQUEST", "texts must be an array of strings", { path: "texts" });
    const { onProgress, add_special_tokens, ...rest } = options;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) throw new DeltatokError("DT_INVALID_OPTION", `unknown option of encodeTexts: "${unknown[0]}"; its options are add_special_tokens, onProgress`, { path: unknown[0] as string });
    if (add_special_tokens !== undefined && typeof add_special_tokens !== "boolean") throw new DeltatokError("DT_INVALID_OPTION", "add_special_tokens must be a boolean", { path: "add_special_tokens" });
    const chunks: Array<[number, number]> = [];
    for (let i = 0; i < texts.length; ) {
      let j = i;
      let chars = 0;
      while (j < texts.length && j - i < ENCODE_CHUNK_TEXTS && (j === i || chars < ENCODE_CHUNK_CHARS)) {
        const t = texts[j];
        chars += typeof t === "string" ? t.length : 0;
        j++;
      }
      chunks.push([i, j]);
      i = j;
    }
    const out = new Array<Uint32Array>(texts.length);
    let next = 0;
    let done = 0;
    let failed: DeltatokError | null = null;
    const special = add_special_tokens === true;
    const lane = async (slot: number): Promise<void> => {
      while (failed === null && next < chunks.length) {
        const [a, b] = chunks[next++] as [number, number];
        let r: WireResult | undefined;
        try {
          [r] = await this.runBatch(slot, [{ k: "texts", texts: texts.slice(a, b) as string[], special }]);
        } catch (e) {
          failed ??= toDeltatokError(e);
          return;
        }
        if (r === undefined || !r.ok) {
          const e: ErrorRecord = r === undefined ? { code: "DT_INTERNAL", message: "no result" } : r.error;
          const m = /^texts\[(\d+)\]/.exec(e.path ?? "");
          const at = m === null ? null : a + Number(m[1]);
          failed ??= new DeltatokError(e.code as ErrorCode, at === null ? e.message : e.message.replace(/^texts\[\d+\]/, `texts[${at}]`), at === null ? (e.path === undefined ? {} : { path: e.path }) : { path: `texts[${at}]` });
          return;
        }
        if (!("lengths" in r) || r.ids === undefined || r.lengths === undefined) throw new DeltatokError("DT_INTERNAL", "a texts item answered without ids");
        let at = 0;
        for (let k = 0; k < r.lengths.length; k++) {
          const n = r.lengths[k] as number;
          out[a + k] = r.ids.subarray(at, at + n);
          at += n;
        }
        done += b - a;
        onProgress?.(done, texts.length);
      }
    };
    await Promise.all(this.#slots.map((_s, i) => lane(i)));
    if (failed !== null) throw failed;
    return out;
  }

  /** Cache and work counters of every worker, and their sum. */
  async stats(): Promise<PoolStats> {
    const replies = await Promise.all(
      this.#slots.map((_s, i) =>
        this.#run(i, { op: "stats" }).then(
          (r) => (r.op === "stats" ? r : null),
          () => null,
        ),
      ),
    );
    let total = emptyStats();
    for (const r of replies) if (r !== null) total = addStats(total, r.stats);
    return { workers: replies.map((r) => r?.stats ?? null), total, heap: replies.map((r) => r?.heap ?? null) };
  }

  /** Drops every worker's cache. */
  async clearCache(): Promise<void> {
    await Promise.all(this.#slots.map((_s, i) => this.#run(i, { op: "clear" })));
  }

  /**
   * @internal Terminates one worker thread as a crash would (tests, the crash benchmark).
   * piscina rejects its running task and starts a replacement in the same slot.
   */
  async killWorker(slot: number): Promise<void> {
    const t = this.#slots[slot]?.threads[0];
    if (t !== undefined) await t.terminate();
  }

  /** Lets running batches finish (up to closeTimeoutMs), then ends every thread. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= Promise.allSettled(this.#slots.map((s) => s.close())).then(() => undefined);
    return this.#closing;
  }
}
