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
 * its init task (engine loaded, warm-up done) within `startupTimeoutMs`, and rejects with
 * DT_WORKER_STARTUP (cause: the worker's own coded error) otherwise — never a silent fallback
 * to fewer workers or to the main thread.
 */
import { EventEmitter } from "node:events";
import type { ResourceLimits } from "node:worker_threads";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { DeltatokError, toDeltatokError, type ErrorRecord } from "../errors.js";
import { resolveOptions, type DeltatokOptions, type ResolvedOptions } from "../api/options.js";
import type { DeltatokStats } from "../api/deltatok.js";
import { parseDate } from "../load/date.js";
import { detectCpus, type CpuInfo } from "./cpus.js";
import type { TestFaults, WireItem, WireResult, WorkerData, WorkerHeap, WorkerInfo, WorkerReply, WorkerTask } from "./protocol.js";

/** Options of {@link DeltatokPool.create}. */
export interface PoolOptions {
  /** Engine options, sent to every worker by structured clone (so: plain data and Dates). @defaultValue {} */
  engine?: DeltatokOptions;
  /**
   * Number of worker threads. No fixed cap.
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
   * V8 heap limits of each worker thread (`worker_threads` ResourceLimits), e.g.
   * `{ maxYoungGenerationSizeMb: 64 }`. A worker exceeding `maxOldGenerationSizeMb` dies like a
   * crash (its items are retried once elsewhere).
   * @defaultValue {} (Node's defaults)
   */
  resourceLimits?: ResourceLimits;
  /** @internal Injected faults (tests and the crash benchmark). */
  testFaults?: TestFaults;
}

/** The resolved, frozen pool options. */
export interface ResolvedPoolOptions {
  readonly engine: DeltatokOptions;
  readonly resolvedEngine: ResolvedOptions;
  readonly workers: number;
  readonly startupTimeoutMs: number;
  readonly pin: boolean;
  readonly closeTimeoutMs: number;
  readonly resourceLimits: ResourceLimits;
  readonly cpus: CpuInfo;
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
  return new DeltatokError("DT_INVALID_OPTION", `options.${path} ${message}`, { path: `options.${path}` });
}

function resolvePoolOptions(o: PoolOptions): ResolvedPoolOptions {
  if (typeof o !== "object" || o === null) throw optionError("", "must be an object");
  const engine = o.engine ?? {};
  const resolvedEngine = resolveOptions(engine, parseDate);
  const cpus = detectCpus();
  const workers = o.workers ?? cpus.count;
  if (!Number.isSafeInteger(workers) || workers < 1) throw optionError("workers", `must be a positive integer, got ${String(workers)}`);
  const startupTimeoutMs = o.startupTimeoutMs ?? 60_000;
  if (!(startupTimeoutMs > 0)) throw optionError("startupTimeoutMs", `must be a positive number, got ${String(startupTimeoutMs)}`);
  const closeTimeoutMs = o.closeTimeoutMs ?? 30_000;
  if (!(closeTimeoutMs >= 0)) throw optionError("closeTimeoutMs", `must be a non-negative number, got ${String(closeTimeoutMs)}`);
  if (o.pin !== undefined && typeof o.pin !== "boolean") throw optionError("pin", "must be a boolean");
  const resourceLimits = o.resourceLimits ?? {};
  if (typeof resourceLimits !== "object" || resourceLimits === null) throw optionError("resourceLimits", "must be an object");
  return Object.freeze({ engine, resolvedEngine, workers, startupTimeoutMs, pin: o.pin ?? false, closeTimeoutMs, resourceLimits, cpus });
}

/** The worker module: compiled JS next to this file, or the TypeScript source under tsx. */
function workerModule(): { filename: string; execArgv: string[] | undefined } {
  const js = fileURLToPath(new URL("./worker.js", import.meta.url));
  if (existsSync(js)) return { filename: js, execArgv: undefined };
  const ts = fileURLToPath(new URL("./worker.ts", import.meta.url));
  const hasTsx = process.execArgv.some((a) => a.includes("tsx"));
  return { filename: ts, execArgv: hasTsx ? undefined : [...process.execArgv, "--import", "tsx"] };
}

function crashError(slot: number, e: unknown): DeltatokError {
  if (e instanceof DeltatokError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  return new DeltatokError("DT_WORKER_CRASHED", `worker ${slot} died while running a batch: ${msg}`, { cause: e });
}

function remoteError(r: ErrorRecord): DeltatokError {
  return new DeltatokError(r.code, r.message, r.path === undefined ? {} : { path: r.path });
}

function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_r, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
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
  #closing: Promise<void> | null = null;

  private constructor(opts: ResolvedPoolOptions, slots: Piscina[], infos: WorkerInfo[]) {
    super();
    this.#opts = opts;
    this.#slots = slots;
    this.#infos = infos;
  }

  /** Starts the workers; resolves when all are loaded and warm. Rejects with a coded error. */
  static async create(options: PoolOptions = {}): Promise<DeltatokPool> {
    const opts = resolvePoolOptions(options);
    const { filename, execArgv } = workerModule();
    const affinity = opts.cpus.affinity ?? [];
    const slots: Piscina[] = [];
    const errors: Array<{ slot: number; error: unknown }> = [];
    for (let i = 0; i < opts.workers; i++) {
      const data: WorkerData = {
        options: opts.engine,
        slot: i,
        cpu: opts.pin && affinity.length > 0 ? (affinity[i % affinity.length] as number) : null,
        faults: options.testFaults ?? null,
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
    let replies: WorkerReply[];
    try {
      replies = await withTimeout(
        Promise.all(slots.map((s, i) => (s.run({ op: "init" } satisfies WorkerTask) as Promise<WorkerReply>).catch((e: unknown) => Promise.reject(crashError(i, e))))),
        opts.startupTimeoutMs,
        () => new DeltatokError("DT_WORKER_STARTUP", `workers did not load within ${opts.startupTimeoutMs} ms (startupTimeoutMs)`),
      );
    } catch (e) {
      await destroyAll();
      const cause = toDeltatokError(e);
      if (cause.code === "DT_WORKER_STARTUP") throw cause;
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
    const pool = new DeltatokPool(opts, slots, infos);
    slots.forEach((s, i) => {
      s.removeAllListeners("error");
      s.on("error", (e: unknown) => pool.emit("workerError", { slot: i, error: crashError(i, e).toJSON() }));
    });
    for (const { slot, error } of errors) pool.emit("workerError", { slot, error: crashError(slot, error).toJSON() });
    return pool;
  }

  /** Number of worker slots. */
  get size(): number {
    return this.#slots.length;
  }

  get options(): ResolvedPoolOptions {
    return this.#opts;
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
      throw crashError(slot, e);
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
