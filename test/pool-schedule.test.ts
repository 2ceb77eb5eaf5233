/**
 * Offline scheduling (src/pool/schedule.ts, src/pool/offline.ts, replayCorpusScheduled) with a
 * fake cost model: a fake pool whose workers take `cost` units of virtual time per conversation.
 * The costliest conversations start first, no worker waits while a conversation is left, a
 * worker holds at most `depth`, a job whose worker died runs again elsewhere, a full output
 * buffer turns the order to corpus order, and the records still come out in corpus order.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LongestFirst } from "../src/pool/schedule.js";
import { runOffline } from "../src/pool/offline.js";
import { replayCorpusScheduled } from "../src/cli/replay.js";
import { DeltatokError } from "../src/errors.js";
import { emptyStats } from "../src/pool/pool.js";
import type { WireItem, WireResult } from "../src/pool/protocol.js";
import type { ReplayRecord } from "../src/pool/protocol.js";

test("LongestFirst: costliest first, least-loaded worker with room, at most depth each", () => {
  const costs = [5, 90, 20, 90, 1, 40, 60, 10];
  const s = new LongestFirst(costs, { workers: 3, depth: 2, tail: 0 });
  const got: Array<[number, number]> = [];
  for (let a = s.next(); a !== null; a = s.next()) got.push([a.job, a.worker]);
  // 6 slots of room (3 workers × 2): jobs by cost 90 (1), 90 (3), 60 (6), 40 (5), 20 (2), 10 (7)
  assert.deepEqual(
    got.map(([j]) => j),
    [1, 3, 6, 5, 2, 7],
  );
  // the 4th job goes to the worker whose first job is cheapest (the one with 60), and so on
  assert.deepEqual(
    got.map(([, w]) => w),
    [0, 1, 2, 2, 0, 1],
  );
  assert.equal(s.next(), null, "every worker is full");
  s.done(6, 2);
  assert.deepEqual(s.next(), { job: 0, worker: 2 }, "the freed worker takes the next costliest (5)");
  s.again(0, 2);
  s.done(5, 2);
  // the failed job waits for room elsewhere; the worker it failed on takes a fresh job meanwhile
  assert.deepEqual(s.next(), { job: 4, worker: 2 });
  assert.equal(s.next(), null);
  s.done(1, 0);
  assert.deepEqual(s.next(), { job: 0, worker: 0 }, "a failed job runs again, elsewhere, before anything else");
  assert.equal(s.left, 0);
});

test("LongestFirst: headFirst takes the earliest job in corpus order", () => {
  const s = new LongestFirst([1, 2, 3, 100], { workers: 1, depth: 4, tail: 0 });
  assert.equal(s.next(true)?.job, 0);
  assert.equal(s.next(false)?.job, 3);
  assert.equal(s.next(true)?.job, 1);
  assert.equal(s.next(true)?.job, 2);
  assert.equal(s.left, 0);
});

interface Pending {
  item: WireItem;
  resolve: (r: WireResult[]) => void;
  reject: (e: unknown) => void;
  end?: number;
}

/** A pool of fake workers: each runs its batches in order, a conversation taking its line's length in virtual time. */
class FakePool {
  readonly size: number;
  readonly options = { resolvedDeltatok: { tokenizer: "fake", mode: "incremental" } } as never;
  readonly workers = [] as never[];
  now = 0;
  readonly started: Array<{ id: string; slot: number; at: number }> = [];
  /** Conversations in the order the scheduler handed them to workers. */
  readonly dispatched: string[] = [];
  /** After every dispatch round: workers idle while conversations were still to start. */
  idleWhileWaiting = 0;
  maxHeld = 0;
  killOnce: string | null = null;
  readonly #queues: Pending[][];
  #wake: (() => void) | null = null;
  #total: number;

  constructor(size: number, total: number) {
    this.size = size;
    this.#total = total;
    this.#queues = Array.from({ length: size }, () => []);
  }

  runBatch(slot: number, items: WireItem[]): Promise<WireResult[]> {
    return new Promise((resolve, reject) => {
      const q = this.#queues[slot] as Pending[];
      q.push({ item: items[0] as WireItem, resolve, reject });
      this.dispatched.push((JSON.parse((items[0] as { json: string }).json) as { id: string }).id);
      this.maxHeld = Math.max(this.maxHeld, q.length);
      const w = this.#wake;
      this.#wake = null;
      w?.();
    });
  }

  async stats() {
    return { workers: [], total: emptyStats(), heap: [] };
  }

  /** Runs the virtual clock until every conversation is answered. */
  async run(): Promise<void> {
    let answered = 0;
    for (;;) {
      // time moves once the scheduler has reacted to the last completion (its microtasks, then
      // reads of the corpus, if any: each dispatch wakes this loop)
      await new Promise((r) => setImmediate(r));
      if (answered === this.#total) return;
      const idle = () => this.#queues.filter((q) => q.length === 0).length;
      if (this.dispatched.length < this.#total) this.idleWhileWaiting += idle();
      while ((this.dispatched.length < this.#total && idle() > 0) || this.#queues.every((q) => q.length === 0)) {
        await new Promise<void>((r) => (this.#wake = r));
      }
      // start each worker's head job, then complete the earliest-ending one
      let best = -1;
      for (let s = 0; s < this.size; s++) {
        const h = (this.#queues[s] as Pending[])[0];
        if (h === undefined) continue;
        if (h.end === undefined) {
          const json = (h.item as { json: string }).json;
          h.end = this.now + json.length;
          this.started.push({ id: (JSON.parse(json) as { id: string }).id, slot: s, at: this.now });
        }
        const bh = best < 0 ? undefined : (this.#queues[best] as Pending[])[0];
        if (bh === undefined || (h.end as number) < (bh.end as number)) best = s;
      }
      const q = this.#queues[best] as Pending[];
      const h = q.shift() as Pending;
      this.now = h.end as number;
      const json = (h.item as { json: string }).json;
      const id = (JSON.parse(json) as { id: string }).id;
      if (this.killOnce === id) {
        this.killOnce = null;
        this.started.pop();
        h.reject(new DeltatokError("DT_WORKER_CRASHED", "fake worker died"));
        continue;
      }
      answered++;
      h.resolve([{ ok: true, records: [{ id, index: 1, isl: json.length }], conversation: true }]);
    }
  }
}

function corpusOf(lengths: number[]): string {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-schedule-"));
  const path = join(dir, "corpus.jsonl");
  writeFileSync(path, lengths.map((n, i) => JSON.stringify({ id: `c${i}`, pad: "x".repeat(n) })).join("\n") + "\n");
  return path;
}

async function replay(lengths: number[], workers: number, maxHeldRecords?: number, kill?: string) {
  const path = corpusOf(lengths);
  const pool = new FakePool(workers, lengths.length);
  if (kill !== undefined) pool.killOnce = kill;
  const out: ReplayRecord[] = [];
  const done = replayCorpusScheduled(pool, path, { chatTemplateKwargs: null, parseToolArguments: false, osl: false, progress: false, maxHeldRecords }, (r) => void out.push(r), 0);
  // the clock runs until all is answered (it waits for the first pass's first dispatch)
  await pool.run();
  return { summary: await done, out, pool };
}

test("runOffline on a fake pool: longest first, every worker fed, near the lower bound", { timeout: 60_000 }, async () => {
  // deterministic fake costs (an LCG), one very long conversation near the end of the corpus
  let x = 7;
  const costs = Array.from({ length: 60 }, () => ((x = (x * 1103515245 + 12345) % 2 ** 31), 200 + (x % 3000)));
  costs[55] = 40_000;
  const pool = new FakePool(4, costs.length);
  const answered: number[] = [];
  const item = async (job: number): Promise<WireItem> => ({ k: "conversation", json: JSON.stringify({ id: `c${job}`, pad: "x".repeat((costs[job] as number) - 19 - String(job).length) }), line: job + 1 });
  const done = runOffline(pool, costs, item, (job, r) => {
    assert.equal(r.ok, true);
    answered.push(job);
  });
  await pool.run();
  const report = await done;
  assert.deepEqual([...answered].sort((a, b) => a - b), costs.map((_c, i) => i), "every job answered once");
  assert.equal(pool.started[0]?.id, "c55", "the longest conversation starts first");
  const order = pool.dispatched.map((id) => Number(id.slice(1)));
  const byCost = [...order].sort((a, b) => (costs[b] as number) - (costs[a] as number) || a - b);
  assert.deepEqual(order, byCost, "conversations are handed out in decreasing cost");
  assert.equal(pool.idleWhileWaiting, 0, "no worker idle while a conversation waits");
  assert.equal(pool.maxHeld, 1, "one job at a time per worker (depth 1, the default)");
  assert.equal(report.jobs.reduce((a, b) => a + b, 0), 60);
  // the long one alone on its worker, the others share the rest: makespan = the lower bound
  const total = costs.reduce((a, b) => a + b, 0);
  assert.ok((total - 40_000) / 3 < 36_000, "precondition: the others fit beside the long one");
  assert.equal(pool.now, 40_000, "makespan = the longest conversation: the lower bound max(total / N, longest)");
});

test("replay on a fake pool: output in corpus order, longest first", { timeout: 60_000 }, async () => {
  const lengths = [300, 5000, 200, 800, 4000, 100, 2500, 700];
  const { summary, out, pool } = await replay(lengths, 3);
  assert.deepEqual(
    out.map((r) => r.id),
    lengths.map((_n, i) => `c${i}`),
    "records in corpus order",
  );
  // the three costliest start first, one per worker; among them the order is whichever line's
  // read finishes first (the three reads are in flight at once), so it is compared as a set
  assert.deepEqual(pool.dispatched.slice(0, 3).sort(), ["c1", "c4", "c6"], "the three costliest first");
  assert.equal(summary.schedule, "longest-first");
  assert.equal(summary.workers_busy_s?.length, 3);
  assert.equal(summary.conversations, 8);
});

test("replay on a fake pool: a full output buffer switches to corpus order; a crashed job is retried", { timeout: 60_000 }, async () => {
  const lengths = Array.from({ length: 30 }, (_v, i) => 100 + 10 * i); // costliest last in the corpus
  const { out, pool } = await replay(lengths, 2, 3, "c20");
  assert.deepEqual(
    out.map((r) => r.id),
    lengths.map((_n, i) => `c${i}`),
  );
  assert.ok(out.every((r) => r.error === undefined), "the crashed conversation was answered by its retry");
  assert.deepEqual(pool.dispatched.slice(0, 2).sort(), ["c28", "c29"], "longest first while the buffer has room");
  assert.ok(pool.dispatched.indexOf("c0") < pool.dispatched.length - 10, "the head of the corpus started early once results were held");
});

test("replay on a fake pool: the cost model (src/pool/cost.ts) orders the conversations, not their bytes", { timeout: 60_000 }, async () => {
  const turns: unknown[] = [];
  for (let i = 0; i < 60; i++) turns.push({ role: "user", content: "u".repeat(100) }, { role: "assistant", content: "a".repeat(100) });
  const lines = [
    { id: "c0", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] },
    { id: "c1", messages: [{ role: "user", content: "q".repeat(20_000) }, { role: "assistant", content: "ok" }] },
    { id: "c2", messages: turns },
  ].map((l) => JSON.stringify(l));
  assert.ok((lines[1] as string).length > (lines[2] as string).length, "precondition: c1 has the most bytes");
  const dir = mkdtempSync(join(tmpdir(), "deltatok-schedule-"));
  const path = join(dir, "corpus.jsonl");
  writeFileSync(path, lines.join("\n") + "\n");
  const pool = new FakePool(1, lines.length);
  const out: ReplayRecord[] = [];
  const done = replayCorpusScheduled(pool, path, { chatTemplateKwargs: null, parseToolArguments: false, osl: false, progress: false }, (r) => void out.push(r), 0);
  await pool.run();
  await done;
  assert.deepEqual(pool.dispatched, ["c2", "c1", "c0"], "60 requests before one long message");
  assert.deepEqual(out.map((r) => r.id), ["c0", "c1", "c2"], "records in corpus order");
});
