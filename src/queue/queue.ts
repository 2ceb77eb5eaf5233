/**
 * A batch queue for embedding in a benchmark harness (src/pool/README.md has the contract).
 *
 * - `enqueue(item, onResult)` is O(1) (plus hashing the item's routing key) and never waits:
 *   the item is routed to its conversation's worker (or to the shared lane when it has no
 *   conversation) and the call returns. Beyond `maxItems` held it throws DT_QUEUE_FULL.
 * - Live lane: every `intervalMs` queued items go out in bounded batches to workers with room;
 *   a worker finishing a batch takes the next full one at once. `intervalMs: 0` defers all
 *   work to `drain()`.
 * - `drain({ timeoutMs, signal })` finishes everything and resolves once with
 *   `{ state: "complete", pending }`: pending > 0 means it timed out, was aborted, or some items
 *   failed for good; those items were answered with DT_DRAIN_TIMEOUT / DT_CLOSED /
 *   DT_WORKER_CRASHED and stay counted as pending.
 * - Every item is answered exactly once; a batch's results are delivered in its input order.
 *   A batch that fails as a whole (its worker died) is re-queued item by item, each retried
 *   alone on another worker; a second failure answers it DT_WORKER_OUT_OF_MEMORY when that
 *   worker died of its heap limit, DT_WORKER_CRASHED otherwise.
 *
 * Events: `progress` (DrainProgress, every progressIntervalMs during a drain, and once at its
 * end), `drain` (DrainResult), `workerCrash` ({ worker, error, items }), `callbackError`
 * (an onResult callback threw; the queue goes on).
 */
import { EventEmitter } from "node:events";
import { DeltatokError, toDeltatokError, type ErrorCode } from "../errors.js";
import { ChainHasher } from "../cache/chain.js";
import { hasher, initHasher } from "../cache/hash.js";
import { Deque } from "../pool/deque.js";
import { AffinityRouter } from "../pool/router.js";
import { LEADING_ROLES, requestAffinityText, topLevelRaw } from "../json/skim.js";
import { DeltatokPool, resolvePoolOptions, type BatchRunner } from "../pool/pool.js";
import type { WireItem, WireResult } from "../pool/protocol.js";
import type {
  BatchQueueOptions,
  DrainOptions,
  DrainProgress,
  DrainResult,
  ItemKind,
  QueueClock,
  QueueItem,
  QueueResult,
  QueueStats,
  ResultCallback,
} from "./types.js";

/** performance.now and Node's timers. */
export const systemClock: QueueClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  unref: (h) => (h as NodeJS.Timeout).unref(),
};

interface ResolvedQueueOptions {
  maxItems: number;
  batchItems: number;
  batchChars: number;
  intervalMs: number;
  maxInFlightPerWorker: number;
  progressIntervalMs: number;
  closeTimeoutMs: number;
  maxTrackedConversations: number;
  rebalanceChars: number;
  clock: QueueClock;
  onProgress: ((p: DrainProgress) => void) | undefined;
}

interface Entry {
  item: QueueItem;
  cb: ResultCallback;
  kind: ItemKind;
  seq: number;
  /** Estimated characters: the unit of batch bounds and of worker load. */
  cost: number;
  key: string | null;
  /** Failed batch attempts so far. */
  attempts: number;
  /** Slot to avoid (the one it failed on), or -1. */
  avoid: number;
  /** Send alone (a retry). */
  single: boolean;
  /** Relies on state held by its conversation's worker: never stolen, its conversation never moved. */
  sticky: boolean;
  settled: boolean;
  /** Slot whose load includes this entry's cost, or -1. */
  slot: number;
}

interface Slot {
  index: number;
  deque: Deque<Entry>;
  inFlight: number;
  healthy: boolean;
}

interface Batch {
  slot: number;
  entries: Entry[];
}

interface DrainState {
  started: number;
  done: number;
  pending: number;
  ended: boolean;
  promise: Promise<DrainResult>;
  resolve: (r: DrainResult) => void;
  timer: unknown;
  progressTimer: unknown;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** Codes that mean "not answered with a count" for reasons other than the input. */
const INFRA_CODES = new Set<ErrorCode>(["DT_WORKER_CRASHED", "DT_WORKER_OUT_OF_MEMORY", "DT_DRAIN_TIMEOUT", "DT_CLOSED", "DT_WORKER_STARTUP"]);
const KINDS = new Set<ItemKind>(["text", "message", "prompt", "ids", "trajectory", "rollout", "conversation"]);

/** Whether an error code means "not answered with a count" for reasons other than the input. */
export function isInfrastructureError(code: string): boolean {
  return INFRA_CODES.has(code as ErrorCode);
}

function optionError(path: string, message: string): DeltatokError {
  return new DeltatokError("DT_INVALID_OPTION", `options.${path} ${message}`, { path: `options.${path}` });
}

const QUEUE_KEYS = new Set([
  "pool",
  "poolOptions",
  "maxItems",
  "batchItems",
  "batchChars",
  "intervalMs",
  "maxInFlightPerWorker",
  "progressIntervalMs",
  "onProgress",
  "closeTimeoutMs",
  "rebalanceChars",
  "maxTrackedConversations",
  "clock",
]);

function positiveInt(v: unknown, name: string, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) throw optionError(name, `must be an integer ≥ ${min}, got ${String(v)}`);
  return v;
}

function resolveQueueOptions(o: BatchQueueOptions): ResolvedQueueOptions {
  if (typeof o !== "object" || o === null) throw optionError("", "must be an object");
  for (const k of Object.keys(o)) if (!QUEUE_KEYS.has(k)) throw optionError(k, "is not a batch queue option");
  if (o.pool !== undefined && o.poolOptions !== undefined) throw optionError("poolOptions", "and options.pool are mutually exclusive");
  const intervalMs = o.intervalMs ?? 50;
  if (typeof intervalMs !== "number" || !(intervalMs >= 0) || !Number.isFinite(intervalMs)) throw optionError("intervalMs", `must be a number ≥ 0, got ${String(intervalMs)}`);
  const closeTimeoutMs = o.closeTimeoutMs ?? 30_000;
  if (typeof closeTimeoutMs !== "number" || !(closeTimeoutMs >= 0)) throw optionError("closeTimeoutMs", `must be a number ≥ 0, got ${String(closeTimeoutMs)}`);
  const progressIntervalMs = o.progressIntervalMs ?? 2000;
  if (typeof progressIntervalMs !== "number" || !(progressIntervalMs > 0)) throw optionError("progressIntervalMs", `must be a number > 0, got ${String(progressIntervalMs)}`);
  if (o.onProgress !== undefined && typeof o.onProgress !== "function") throw optionError("onProgress", "must be a function");
  return {
    maxItems: positiveInt(o.maxItems, "maxItems", 1_000_000),
    batchItems: positiveInt(o.batchItems, "batchItems", 64),
    batchChars: positiveInt(o.batchChars, "batchChars", 2_000_000),
    intervalMs,
    maxInFlightPerWorker: positiveInt(o.maxInFlightPerWorker, "maxInFlightPerWorker", 2),
    progressIntervalMs,
    closeTimeoutMs,
    maxTrackedConversations: positiveInt(o.maxTrackedConversations, "maxTrackedConversations", 100_000),
    rebalanceChars: positiveInt(o.rebalanceChars, "rebalanceChars", 2_000_000),
    clock: o.clock ?? systemClock,
    onProgress: o.onProgress,
  };
}

function fail(code: ErrorCode, message: string): never {
  throw new DeltatokError(code, message);
}

export class BatchQueue extends EventEmitter {
  readonly #o: ResolvedQueueOptions;
  readonly #runner: BatchRunner;
  readonly #ownsRunner: boolean;
  readonly #router: AffinityRouter;
  readonly #slots: Slot[];
  readonly #shared = new Deque<Entry>();
  /**
   * Keys with entries in the shared lane, and how many. While a conversation has an entry there,
   * its later entries queue there too (behind it), so the entries of one conversation reach its
   * worker in the order they were enqueued: an owned entry is never queued ahead of an earlier
   * one still waiting in the shared lane.
   */
  readonly #sharedKeys = new Map<string, number>();
  readonly #inflight = new Set<Batch>();
  readonly #chains = new ChainHasher();
  #seq = 0;
  #unsettled = 0;
  #queued = 0;
  #inFlightItems = 0;
  #rr = 0;
  #pumping = false;
  #tick: unknown = null;
  #drain: DrainState | null = null;
  #closed = false;
  #closing: Promise<void> | null = null;
  #idleWaiters: Array<() => void> = [];
  #s = { enqueued: 0, answered: 0, ok: 0, itemErrors: 0, failed: 0, retried: 0, batchFailures: 0, batches: 0, stolen: 0, callbackErrors: 0 };

  private constructor(o: ResolvedQueueOptions, runner: BatchRunner, owns: boolean) {
    super();
    this.#o = o;
    this.#runner = runner;
    this.#ownsRunner = owns;
    this.#router = new AffinityRouter(runner.size, { maxTracked: o.maxTrackedConversations, splitFloor: o.rebalanceChars });
    this.#slots = Array.from({ length: runner.size }, (_v, index) => ({ index, deque: new Deque<Entry>(), inFlight: 0, healthy: true }));
  }

  /**
   * A queue over `options.pool`, or over a pool it creates from `options.poolOptions` (and
   * closes on `close()`). Rejects with DT_INVALID_OPTION or the pool's DT_WORKER_STARTUP.
   */
  static async create(options: BatchQueueOptions = {}): Promise<BatchQueue> {
    const o = resolveQueueOptions(options);
    // the pool's options are checked before anything starts, named as this call's options
    if (options.pool === undefined) resolvePoolOptions(options.poolOptions ?? {}, "options.poolOptions");
    await initHasher();
    if (options.pool !== undefined) return new BatchQueue(o, options.pool, false);
    const pool = await DeltatokPool.create(options.poolOptions ?? {});
    return new BatchQueue(o, pool, true);
  }

  /** Items held: queued + in flight. */
  get size(): number {
    return this.#unsettled;
  }

  get draining(): boolean {
    return this.#drain !== null;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The pool the queue runs on. */
  get runner(): BatchRunner {
    return this.#runner;
  }

  stats(): QueueStats {
    return { ...this.#s, queued: this.#queued, inFlight: this.#inFlightItems, routing: this.#router.stats() };
  }

  /**
   * Queues one item; `onResult` is called exactly once with its result. Throws DT_CLOSED after
   * close(), DT_QUEUE_FULL at `maxItems`, DT_INVALID_REQUEST when the item is not an item.
   */
  enqueue(item: QueueItem, onResult: ResultCallback): void {
    if (this.#closed) fail("DT_CLOSED", "the queue is closed");
    if (typeof onResult !== "function") fail("DT_INVALID_REQUEST", "onResult must be a function");
    if (typeof item !== "object" || item === null || !KINDS.has((item as { kind: ItemKind }).kind)) {
      fail("DT_INVALID_REQUEST", `an item must be an object with kind ${[...KINDS].join(" | ")}`);
    }
    if (this.#unsettled >= this.#o.maxItems) fail("DT_QUEUE_FULL", `the queue holds ${this.#unsettled} items (maxItems ${this.#o.maxItems})`);
    const e: Entry = {
      item,
      cb: onResult,
      kind: item.kind,
      seq: this.#seq++,
      cost: costOf(item),
      key: this.#keyOf(item),
      attempts: 0,
      avoid: -1,
      single: false,
      sticky: (item as { sticky?: unknown }).sticky === true,
      settled: false,
      slot: -1,
    };
    this.#unsettled++;
    this.#s.enqueued++;
    this.#place(e);
    if (this.#drain !== null) this.#schedulePump();
    else this.#armTick();
  }

  /**
   * Finishes everything queued and in flight (and whatever is enqueued meanwhile). Resolves once
   * with the final state; a second call during a drain returns the same promise. Rejects with
   * DT_CLOSED after close().
   */
  drain(options: DrainOptions = {}): Promise<DrainResult> {
    if (this.#closed) return Promise.reject(new DeltatokError("DT_CLOSED", "the queue is closed"));
    if (this.#drain !== null) return this.#drain.promise;
    const timeoutMs = options.timeoutMs ?? Infinity;
    if (typeof timeoutMs !== "number" || !(timeoutMs >= 0)) {
      return Promise.reject(optionError("timeoutMs", `must be a number ≥ 0, got ${String(timeoutMs)}`));
    }
    let resolve!: (r: DrainResult) => void;
    const promise = new Promise<DrainResult>((r) => (resolve = r));
    const c = this.#o.clock;
    const d: DrainState = {
      started: c.now(),
      done: 0,
      pending: 0,
      ended: false,
      promise,
      resolve,
      timer: null,
      progressTimer: null,
      signal: options.signal,
      onAbort: undefined,
    };
    this.#drain = d;
    if (options.signal !== undefined) {
      if (options.signal.aborted) {
        this.#endDrain("aborted");
        return promise;
      }
      d.onAbort = () => this.#endDrain("aborted");
      options.signal.addEventListener("abort", d.onAbort, { once: true });
    }
    // Batches in flight keep the process alive; these timers need not.
    if (Number.isFinite(timeoutMs)) {
      d.timer = c.setTimeout(() => this.#endDrain("timeout"), timeoutMs);
      c.unref?.(d.timer);
    }
    const progress = () => {
      if (this.#drain !== d) return;
      this.#progress(d);
      d.progressTimer = c.setTimeout(progress, this.#o.progressIntervalMs);
      c.unref?.(d.progressTimer);
    };
    d.progressTimer = c.setTimeout(progress, this.#o.progressIntervalMs);
    c.unref?.(d.progressTimer);
    this.#pump(false);
    this.#checkDrain();
    return promise;
  }

  /** Ends the current drain now (as a SIGTERM handler would): one final state, pending > 0. */
  abortDrain(): void {
    this.#endDrain("aborted");
  }

  /**
   * Stops accepting items, ends a drain in progress (reason "closed"), answers queued items
   * DT_CLOSED, lets batches in flight finish (up to closeTimeoutMs; then their items are
   * answered DT_CLOSED), and closes the pool if the queue created it. Idempotent.
   */
  close(): Promise<void> {
    if (this.#closing !== null) return this.#closing;
    this.#closed = true;
    if (this.#tick !== null) {
      this.#o.clock.clearTimeout(this.#tick);
      this.#tick = null;
    }
    this.#closing = (async () => {
      this.#endDrain("closed");
      this.#failQueued("DT_CLOSED", "the queue was closed before the item was sent");
      if (this.#inflight.size > 0) {
        let timer: unknown = null;
        await new Promise<void>((resolve) => {
          this.#idleWaiters.push(resolve);
          timer = this.#o.clock.setTimeout(resolve, this.#o.closeTimeoutMs);
          this.#o.clock.unref?.(timer);
        });
        this.#o.clock.clearTimeout(timer);
        for (const b of this.#inflight) for (const e of b.entries) this.#settleInfra(e, "DT_CLOSED", "the queue was closed while the item's batch ran", b.slot);
        this.#inflight.clear();
      }
      if (this.#ownsRunner) await this.#runner.close();
    })();
    return this.#closing;
  }

  // ---- routing -----------------------------------------------------------------------------

  #keyOf(item: QueueItem): string | null {
    const id = (item as { conversationId?: unknown }).conversationId;
    if (typeof id === "string") return `c:${id}`;
    try {
      if (item.kind === "prompt" || item.kind === "ids" || item.kind === "trajectory" || item.kind === "rollout") {
        if ("json" in item && typeof item.json === "string") {
          const t = requestAffinityText(item.json);
          return t === null ? null : `j:${hasher().h64(t).toString(36)}`;
        }
        const msgs = (item as { messages?: unknown }).messages;
        if (!Array.isArray(msgs)) return null;
        const parts: unknown[] = [(item.options as { tools?: unknown } | undefined)?.tools ?? null];
        for (const m of msgs) {
          parts.push(m);
          const role = typeof m === "object" && m !== null ? (m as { role?: unknown }).role : undefined;
          if (typeof role !== "string" || !LEADING_ROLES.has(role)) return `p:${this.#chains.key(parts).toString(36)}`;
        }
        return null;
      }
      if (item.kind === "conversation" && typeof item.json === "string") {
        const raw = topLevelRaw(item.json, "id");
        return raw === null ? null : `l:${raw}`;
      }
    } catch {
      // unhashable input: routed without a key; the worker reports what is wrong with it
    }
    return null;
  }

  /**
   * Puts an entry where it will be sent from: its conversation's owner (an owned key, possibly
   * moved by the bounded-load rule), a slot other than the one it failed on (a retry), or the
   * shared lane — items without a key, and conversations not owned yet, which the first worker
   * with room takes and thereby owns (late binding: new work goes where there is room now).
   */
  #place(e: Entry): void {
    if (e.avoid < 0 && (e.key === null || this.#router.ownerOf(e.key) === undefined || this.#sharedKeys.has(e.key))) {
      this.#shared.push(e);
      if (e.key !== null) this.#sharedKeys.set(e.key, (this.#sharedKeys.get(e.key) ?? 0) + 1);
      this.#queued++;
      return;
    }
    const slot = e.avoid >= 0 ? this.#router.lightest(e.avoid) : this.#router.route(e.key as string, e.sticky);
    if (slot < 0) {
      this.#settleInfra(e, "DT_WORKER_CRASHED", "no worker is able to run items", null);
      return;
    }
    this.#router.add(slot, e.cost);
    e.slot = slot;
    const s = this.#slots[slot] as Slot;
    if (e.single) s.deque.unshift(e);
    else s.deque.push(e);
    this.#queued++;
  }

  #release(e: Entry): void {
    if (e.slot >= 0) {
      this.#router.remove(e.slot, e.cost);
      e.slot = -1;
    }
  }

  // ---- dispatch ----------------------------------------------------------------------------

  #armTick(): void {
    if (this.#o.intervalMs <= 0 || this.#tick !== null || this.#closed) return;
    this.#tick = this.#o.clock.setTimeout(() => {
      this.#tick = null;
      this.#pump(false);
      if (this.#queued > 0) this.#armTick();
    }, this.#o.intervalMs);
  }

  #pumpScheduled = false;

  /** A pump on the next microtask (coalesced), so enqueue itself never sends anything. */
  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    queueMicrotask(() => {
      this.#pumpScheduled = false;
      if (this.#drain !== null) this.#pump(false);
    });
  }

  #pump(fullOnly: boolean): void {
    if (this.#closed || this.#pumping) return;
    this.#pumping = true;
    try {
      const n = this.#slots.length;
      if (!this.#router.anyHealthy) {
        this.#failQueued("DT_WORKER_CRASHED", "no worker is able to run items");
        return;
      }
      // The shared lane is dealt out in fair shares among the workers with room, so a burst
      // of new conversations spreads instead of filling the first worker's batch.
      let open = 0;
      for (const s of this.#slots) if (s.healthy && s.inFlight < this.#o.maxInFlightPerWorker) open++;
      if (open === 0) return;
      const share = Math.ceil(this.#shared.length / open);
      for (let k = 0; k < n; k++) {
        const s = this.#slots[(this.#rr + k) % n] as Slot;
        const budget = { shared: share };
        while (s.healthy && s.inFlight < this.#o.maxInFlightPerWorker) {
          const batch = this.#takeBatch(s, fullOnly, budget);
          if (batch === null) break;
          this.#dispatch(s, batch);
        }
      }
      this.#rr = (this.#rr + 1) % n;
    } finally {
      this.#pumping = false;
    }
  }

  /** The next batch for `s`: its own queue and (up to `budget.shared` items of) the shared lane, oldest first. */
  #takeBatch(s: Slot, fullOnly: boolean, budget: { shared: number }): Entry[] | null {
    const d = s.deque;
    const sh = this.#shared;
    const head = d.peek();
    if (head !== undefined && head.single) {
      d.shift();
      this.#queued--;
      return [head];
    }
    if (fullOnly && d.length + Math.min(sh.length, budget.shared) < this.#o.batchItems) return null;
    const out: Entry[] = [];
    let chars = 0;
    while (out.length < this.#o.batchItems) {
      const a = d.peek();
      const b = budget.shared > 0 ? sh.peek() : undefined;
      const fromOwn = a !== undefined && !a.single && (b === undefined || a.seq < b.seq);
      const next = fromOwn ? a : b;
      if (next === undefined || (a !== undefined && a.single && b === undefined)) break;
      if (out.length > 0 && chars + next.cost > this.#o.batchChars) break;
      if (fromOwn) d.shift();
      else {
        sh.shift();
        budget.shared--;
        if (next.key !== null) {
          const left = (this.#sharedKeys.get(next.key) ?? 1) - 1;
          if (left > 0) this.#sharedKeys.set(next.key, left);
          else this.#sharedKeys.delete(next.key);
          const owner = this.#router.ownerOf(next.key);
          if (owner === undefined || !this.#router.isHealthy(owner)) this.#router.assign(next.key, s.index);
          else if (owner !== s.index) {
            // owned meanwhile by another worker (an earlier turn was taken there): follow it
            this.#router.add(owner, next.cost);
            next.slot = owner;
            (this.#slots[owner] as Slot).deque.push(next);
            continue;
          }
        }
        this.#router.add(s.index, next.cost);
        next.slot = s.index;
      }
      this.#queued--;
      chars += next.cost;
      out.push(next);
    }
    if (out.length > 0) return out;
    return fullOnly ? null : this.#steal(s);
  }

  /**
   * An idle worker takes the newest half (at most a batch) of the heaviest backlog — only when
   * that worker is far behind (by more than rebalanceChars): splitting a live conversation
   * costs its cache, so it is done only when the alternative is a worker standing idle.
   */
  #steal(s: Slot): Entry[] | null {
    let victim: Slot | null = null;
    for (const v of this.#slots) if (v !== s && v.deque.length > 1 && (victim === null || this.#router.load(v.index) > this.#router.load(victim.index))) victim = v;
    if (victim === null || this.#router.load(victim.index) <= 2 * this.#router.load(s.index) + this.#o.rebalanceChars) return null;
    const n = Math.min(this.#o.batchItems, Math.floor(victim.deque.length / 2));
    const out: Entry[] = [];
    let chars = 0;
    while (out.length < n) {
      const e = victim.deque.pop() as Entry;
      if (e.single || e.sticky || (out.length > 0 && chars + e.cost > this.#o.batchChars)) {
        victim.deque.push(e);
        break;
      }
      this.#release(e);
      this.#router.add(s.index, e.cost);
      e.slot = s.index;
      this.#queued--;
      chars += e.cost;
      out.push(e);
    }
    if (out.length === 0) return null;
    this.#s.stolen += out.length;
    return out.reverse();
  }

  #dispatch(s: Slot, entries: Entry[]): void {
    const batch: Batch = { slot: s.index, entries };
    s.inFlight++;
    this.#inFlightItems += entries.length;
    this.#inflight.add(batch);
    this.#s.batches++;
    let p: Promise<WireResult[]>;
    try {
      p = this.#runner.runBatch(s.index, entries.map(toWire));
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (results) => this.#batchDone(batch, results),
      (err: unknown) => this.#batchFailed(batch, err),
    );
  }

  #finishBatch(batch: Batch): boolean {
    if (!this.#inflight.delete(batch)) return false;
    const s = this.#slots[batch.slot] as Slot;
    s.inFlight--;
    this.#inFlightItems -= batch.entries.length;
    for (const e of batch.entries) this.#release(e);
    return true;
  }

  #batchDone(batch: Batch, results: WireResult[]): void {
    if (!this.#finishBatch(batch)) return;
    for (let i = 0; i < batch.entries.length; i++) {
      const e = batch.entries[i] as Entry;
      const r = results[i];
      this.#deliver(e, r === undefined ? internalResult(e, batch.slot) : toResult(e, r, batch.slot));
    }
    this.#afterBatch();
  }

  #batchFailed(batch: Batch, err: unknown): void {
    if (!this.#finishBatch(batch)) return;
    const de = toDeltatokError(err, "DT_WORKER_CRASHED");
    this.#s.batchFailures++;
    this.emit("workerCrash", { worker: batch.slot, error: de.toJSON(), items: batch.entries.length });
    if (de.code === "DT_WORKER_STARTUP") this.#markUnhealthy(batch.slot);
    for (const e of batch.entries) {
      if (e.settled) continue;
      if (this.#closed || de.code === "DT_CLOSED") {
        this.#settleInfra(e, "DT_CLOSED", "the pool closed while the item's batch ran", batch.slot);
        continue;
      }
      e.attempts++;
      if (e.attempts >= 2) {
        // The second failure held this item alone, so it says what the item does to a worker.
        if (de.code === "DT_WORKER_OUT_OF_MEMORY") {
          this.#settleInfra(e, "DT_WORKER_OUT_OF_MEMORY", `the item took a worker past its memory limit twice, the second time alone (${de.message})`, batch.slot);
        } else {
          this.#settleInfra(e, "DT_WORKER_CRASHED", `a worker failed twice while holding the item (last: ${de.code}: ${de.message})`, batch.slot);
        }
        continue;
      }
      this.#s.retried++;
      e.avoid = batch.slot;
      e.single = true;
      this.#place(e);
    }
    this.#afterBatch();
    this.#armTick();
  }

  #markUnhealthy(slot: number): void {
    const s = this.#slots[slot] as Slot;
    if (!s.healthy) return;
    s.healthy = false;
    this.#router.setHealthy(slot, false);
    const moved = s.deque.drainAll();
    this.#queued -= moved.length;
    for (const e of moved) {
      this.#release(e);
      this.#place(e);
    }
  }

  #afterBatch(): void {
    if (this.#inflight.size === 0 && this.#idleWaiters.length > 0) {
      const w = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const f of w) f();
    }
    if (this.#closed) return;
    if (this.#drain !== null) this.#pump(false);
    else if (this.#o.intervalMs > 0) this.#pump(true);
    this.#checkDrain();
  }

  // ---- answers -----------------------------------------------------------------------------

  #deliver(e: Entry, r: QueueResult): void {
    if (e.settled) return;
    e.settled = true;
    this.#unsettled--;
    this.#s.answered++;
    const infra = !r.ok && INFRA_CODES.has(r.error.code);
    if (r.ok) this.#s.ok++;
    else if (infra) this.#s.failed++;
    else this.#s.itemErrors++;
    const d = this.#drain;
    if (d !== null) {
      if (infra) d.pending++;
      else d.done++;
    }
    try {
      e.cb(r);
    } catch (err) {
      this.#s.callbackErrors++;
      this.emit("callbackError", err);
    }
  }

  #settleInfra(e: Entry, code: ErrorCode, message: string, worker: number | null): void {
    this.#deliver(e, { ok: false, kind: e.kind, error: { code, message }, worker });
  }

  /** Answers every queued (not in flight) entry with `code`. */
  #failQueued(code: ErrorCode, message: string): void {
    const all: Entry[] = [];
    for (const s of this.#slots) all.push(...s.deque.drainAll());
    all.push(...this.#shared.drainAll());
    this.#sharedKeys.clear();
    this.#queued = 0;
    all.sort((a, b) => a.seq - b.seq);
    for (const e of all) {
      this.#release(e);
      this.#settleInfra(e, code, message, null);
    }
  }

  // ---- drain -------------------------------------------------------------------------------

  #checkDrain(): void {
    if (this.#drain !== null && this.#unsettled === 0) this.#endDrain("drained");
  }

  #progress(d: DrainState): void {
    const elapsedMs = this.#o.clock.now() - d.started;
    const p: DrainProgress = {
      done: d.done,
      pending: this.#unsettled,
      rate: elapsedMs > 0 ? (d.done * 1000) / elapsedMs : 0,
      elapsedMs,
      inFlight: this.#inFlightItems,
    };
    this.emit("progress", p);
    if (this.#o.onProgress !== undefined) {
      try {
        this.#o.onProgress(p);
      } catch (err) {
        this.#s.callbackErrors++;
        this.emit("callbackError", err);
      }
    }
  }

  #endDrain(reason: DrainResult["reason"]): void {
    const d = this.#drain;
    if (d === null || d.ended) return;
    d.ended = true;
    const c = this.#o.clock;
    if (d.timer !== null) c.clearTimeout(d.timer);
    if (d.progressTimer !== null) c.clearTimeout(d.progressTimer);
    if (d.signal !== undefined && d.onAbort !== undefined) d.signal.removeEventListener("abort", d.onAbort);
    if (reason !== "drained") {
      const code: ErrorCode = reason === "timeout" ? "DT_DRAIN_TIMEOUT" : "DT_CLOSED";
      const why = reason === "timeout" ? "the drain timed out before the item was processed" : `the drain was ${reason} before the item was processed`;
      this.#failQueued(code, why);
      // Items in flight are answered now; their batch's late results are ignored.
      const flying: Array<[Entry, number]> = [];
      for (const b of this.#inflight) for (const e of b.entries) if (!e.settled) flying.push([e, b.slot]);
      flying.sort((x, y) => x[0].seq - y[0].seq);
      for (const [e, slot] of flying) this.#settleInfra(e, code, why, slot);
    }
    this.#progress(d);
    this.#drain = null;
    const result: DrainResult = { state: "complete", pending: d.pending, done: d.done, reason, elapsedMs: c.now() - d.started };
    this.emit("drain", result);
    d.resolve(result);
  }
}

// ---- item conversion ---------------------------------------------------------------------------

function costOf(item: QueueItem): number {
  switch (item.kind) {
    case "text":
      return typeof item.text === "string" ? item.text.length + 16 : 16;
    case "conversation":
      return typeof item.json === "string" ? item.json.length + 16 : 16;
    case "message":
      return "json" in item && typeof item.json === "string" ? item.json.length + 16 : 2048;
    case "prompt":
    case "ids":
    case "trajectory":
    case "rollout": {
      if ("json" in item && typeof item.json === "string") return item.json.length + 16;
      const m = (item as { messages?: unknown }).messages;
      return Array.isArray(m) ? 1024 * m.length + 4096 : 64;
    }
  }
}

function toWire(e: Entry): WireItem {
  const it = e.item;
  switch (it.kind) {
    case "text":
      return { k: "text", text: it.text };
    case "message":
      return "json" in it ? { k: "message", json: it.json, options: it.options } : { k: "message", message: it.message, options: it.options };
    case "prompt":
    case "ids":
    case "trajectory":
    case "rollout": {
      const w: WireItem = "json" in it
        ? { k: "prompt", json: it.json, options: it.options, ids: it.kind === "ids" }
        : { k: "prompt", messages: it.messages, options: it.options, ids: it.kind === "ids" };
      if (it.kind === "trajectory") w.trajectory = true;
      if (it.kind === "rollout") w.rollout = true;
      return w;
    }
    case "conversation":
      return { k: "conversation", json: it.json, line: it.line ?? 0, replay: it.replay };
  }
}

function internalResult(e: Entry, worker: number): QueueResult {
  return { ok: false, kind: e.kind, error: { code: "DT_INTERNAL", message: "the worker returned no result for this item" }, worker };
}

function toResult(e: Entry, r: WireResult, worker: number): QueueResult {
  if (!r.ok) return { ok: false, kind: e.kind, error: r.error, worker };
  if ("records" in r) {
    if (e.kind !== "conversation") return internalResult(e, worker);
    return { ok: true, kind: "conversation", records: r.records, conversation: r.conversation, worker };
  }
  if ("trajectory" in r) {
    if (e.kind !== "trajectory") return internalResult(e, worker);
    return { ok: true, kind: "trajectory", trajectory: r.trajectory, worker };
  }
  if ("rollout" in r) {
    if (e.kind !== "rollout") return internalResult(e, worker);
    return { ok: true, kind: "rollout", rollout: r.rollout, worker };
  }
  // training items are the offline commands' (src/pool/offline.ts); the queue sends none
  if ("training" in r) return internalResult(e, worker);
  switch (e.kind) {
    case "prompt": {
      const out: QueueResult = { ok: true, kind: "prompt", count: r.count, reused: r.reused ?? 0, outcome: r.outcome ?? "miss", worker };
      if (r.reason !== undefined) out.reason = r.reason;
      return out;
    }
    case "ids": {
      const out: QueueResult = { ok: true, kind: "ids", count: r.count, ids: r.ids ?? new Uint32Array(0), reused: r.reused ?? 0, outcome: r.outcome ?? "miss", worker };
      if (r.reason !== undefined) out.reason = r.reason;
      return out;
    }
    case "text":
    case "message":
      return { ok: true, kind: e.kind, count: r.count, worker };
    default:
      return internalResult(e, worker);
  }
}
