/**
 * The piscina worker module: one Deltatok per worker thread, created when the module loads
 * (so all workers of a pool load in parallel), then a task handler. The tokenizer comes from
 * the tables the pool shared (`workerData.shared`, src/pool/tables.ts) when there
 * are some, else from tokenizer.json.
 *
 * Loading never throws out of this module: a failure is kept and reported as the answer to
 * every task (`{op: "failed"}`), so piscina does not see a crash loop and the pool can turn it
 * into a coded startup error.
 */
import { execFileSync } from "node:child_process";
import { readlinkSync } from "node:fs";
import { getHeapStatistics } from "node:v8";
import { threadId, workerData } from "node:worker_threads";
import { move, transferableSymbol, valueSymbol } from "piscina";
import { Deltatok } from "../api/deltatok.js";
import { toDeltatokError, type ErrorRecord } from "../errors.js";
import { runItem, trainingBuffers } from "./work.js";
import { ConversationMessages } from "../api/conversations.js";
import type { TestFaults, WireItem, WireResult, WorkerData, WorkerInfo, WorkerReply, WorkerTask } from "./protocol.js";

type State = { ok: true; dt: Deltatok; info: WorkerInfo } | { ok: false; error: ErrorRecord };

const data = workerData as WorkerData;

function linuxTid(): number | null {
  if (process.platform !== "linux") return null;
  try {
    // "<pid>/task/<tid>": the calling thread, which for a sync call is this JS thread.
    const m = /task\/(\d+)$/.exec(readlinkSync("/proc/thread-self"));
    return m === null ? null : Number(m[1]);
  } catch {
    return null;
  }
}

function pin(tid: number | null, cpu: number): string | undefined {
  if (tid === null) return "no kernel thread id (not Linux?)";
  try {
    execFileSync("taskset", ["-p", "-c", String(cpu), String(tid)], { stdio: "ignore", timeout: 5000 });
    return undefined;
  } catch (e) {
    return `taskset failed: ${(e as Error).message}`;
  }
}

async function start(d: WorkerData): Promise<State> {
  try {
    const t0 = performance.now();
    const dt = await Deltatok.create(d.options, d.shared === null ? {} : { sharedTokenizer: d.shared });
    const loadMs = performance.now() - t0;
    const t1 = performance.now();
    dt.countText("warm-up: the quick brown fox");
    try {
      dt.renderPrompt([{ role: "user", content: "hi" }]); // compiles the default template; no prompt request counted
    } catch {
      // a template may reject a one-message chat; that is the caller's business, not a load failure
    }
    const warmupMs = performance.now() - t1;
    const tid = linuxTid();
    const info: WorkerInfo = { slot: d.slot, threadId, tid, cpu: null, loadMs, warmupMs, tables: d.shared === null ? "own" : "shared", tokenizerEngine: dt.tokenizerEngine };
    if (d.cpu !== null) {
      const err = pin(tid, d.cpu);
      if (err === undefined) info.cpu = d.cpu;
      else info.pinError = err;
    }
    return { ok: true, dt, info };
  } catch (e) {
    return { ok: false, error: toDeltatokError(e).toJSON() };
  }
}

const state: Promise<State> = start(data);

/** Wraps a reply so its ids buffers (and training outcomes' arrays) are moved, not copied. */
function withMovedIds(reply: WorkerReply, results: WireResult[]): unknown {
  const set = new Set<ArrayBuffer>();
  for (const r of results) {
    if (r.ok && "ids" in r && r.ids !== undefined) set.add(r.ids.buffer as ArrayBuffer);
    else if (r.ok && "training" in r) trainingBuffers(r.training, set);
  }
  if (set.size === 0) return reply;
  const buffers = [...set];
  return move({
    get [transferableSymbol]() {
      return buffers;
    },
    get [valueSymbol]() {
      return reply;
    },
  } as unknown as ArrayBuffer);
}

/** Heap kept reachable by the out-of-memory fault, so no GC can reclaim it. */
const hoard: number[][] = [];

function fault(f: TestFaults, item: WireItem): Promise<never> | null {
  if (f.oomMarker !== undefined) {
    const t = item.k === "text" ? item.text : item.k === "conversation" || item.k === "training" ? item.json : "";
    if (t.includes(f.oomMarker)) {
      // 1 MiB of small integers per array, on the V8 heap, until the heap limit ends the thread
      for (;;) hoard.push(new Array<number>(1 << 17).fill(hoard.length));
    }
  }
  if (item.k !== "text") return null;
  if (f.exitText !== undefined && item.text === f.exitText) process.exit(3);
  if (f.throwText !== undefined && item.text === f.throwText) {
    return new Promise<never>(() => {
      setTimeout(() => {
        throw new Error("deltatok test fault: uncaught error in worker");
      }, 0);
    });
  }
  if (f.blockText !== undefined && f.blockFlag !== undefined && item.text === f.blockText) {
    const flag = new Int32Array(f.blockFlag);
    if (Atomics.compareExchange(flag, 0, 0, 1) === 0) {
      Atomics.store(flag, 2, data.slot + 1);
      Atomics.notify(flag, 0);
      Atomics.wait(flag, 1, 0); // never notified: this thread is stuck until terminated
    }
  }
  return null;
}

/** Conversation prefixes sent by sidecar clients whose conversations this worker owns. */
const held = new ConversationMessages();

export default async function handle(task: WorkerTask): Promise<unknown> {
  const s = await state;
  if (!s.ok) return { op: "failed", error: s.error } satisfies WorkerReply;
  switch (task.op) {
    case "init":
      return { op: "init", info: s.info } satisfies WorkerReply;
    case "stats":
    {
      const h = getHeapStatistics();
      return { op: "stats", stats: s.dt.stats(), heap: { usedBytes: h.used_heap_size, totalBytes: h.total_heap_size, limitBytes: h.heap_size_limit } } satisfies WorkerReply;
    }
    case "clear":
      s.dt.clearCache();
      return { op: "clear" } satisfies WorkerReply;
    case "batch": {
      const results = new Array<WireResult>(task.items.length);
      for (let i = 0; i < task.items.length; i++) {
        const item = task.items[i] as WireItem;
        if (data.faults !== null) {
          const f = fault(data.faults, item);
          if (f !== null) await f;
        }
        results[i] = runItem(s.dt, item, held);
      }
      const reply: WorkerReply = { op: "batch", results };
      return withMovedIds(reply, results);
    }
    default:
      return { op: "failed", error: { code: "DT_INTERNAL", message: `unknown worker task ${String((task as { op?: unknown }).op)}` } } satisfies WorkerReply;
  }
}
