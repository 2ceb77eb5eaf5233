/**
 * Faults on real workers: a worker killed mid-batch, one that calls process.exit, one that
 * throws an uncaught error. The thread is replaced, its in-flight items are retried once on
 * another worker, and every item is answered exactly once (a poison item that kills every
 * worker it meets ends DT_WORKER_CRASHED, counted as pending by the drain).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DeltatokPool } from "../src/pool/pool.js";
import { BatchQueue } from "../src/queue/queue.js";
import type { QueueResult } from "../src/queue/types.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const deltatok = { renderer: TEST_RENDERER, date: "2026-11-30" } as const;

function waitFor(cond: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const t = setInterval(() => {
      if (cond()) {
        clearInterval(t);
        resolve();
      }
    }, 5);
  });
}

test("a worker killed mid-batch: replaced, its items retried elsewhere, each answered once", async () => {
  const flagBuf = new SharedArrayBuffer(12);
  const flag = new Int32Array(flagBuf);
  const BLOCK = "__block this worker__";
  const pool = await DeltatokPool.create({ deltatok, workers: 2, testFaults: { blockText: BLOCK, blockFlag: flagBuf } });
  const queue = await BatchQueue.create({ pool, intervalMs: 0, batchItems: 8 });
  const crashes: unknown[] = [];
  queue.on("workerCrash", (c) => crashes.push(c));
  const N = 60;
  const answers: QueueResult[][] = Array.from({ length: N }, () => []);
  for (let i = 0; i < N; i++) {
    const text = i === 20 ? BLOCK : `item ${i}: ${"lorem ipsum dolor sit amet ".repeat(1 + (i % 7))}`;
    queue.enqueue({ kind: "text", text }, (r) => answers[i]?.push(r));
  }
  const drained = queue.drain();
  await waitFor(() => Atomics.load(flag, 0) === 1);
  const slot = Atomics.load(flag, 2) - 1;
  await pool.killWorker(slot);
  const d = await drained;
  assert.equal(d.state, "complete");
  assert.equal(d.pending, 0);
  for (let i = 0; i < N; i++) {
    assert.equal(answers[i]?.length, 1, `item ${i} answered ${answers[i]?.length} times`);
    assert.ok(answers[i]?.[0]?.ok, `item ${i}: ${JSON.stringify(answers[i]?.[0])}`);
  }
  const blocked = answers[20]?.[0];
  assert.ok(blocked?.ok && blocked.worker !== slot, "the retry ran on the other worker");
  assert.equal(crashes.length, 1);
  assert.ok(queue.stats().retried >= 1);
  // the slot has a fresh worker again
  const after = await pool.runBatch(slot, [{ k: "text", text: "still alive" }]);
  assert.ok(after[0]?.ok);
  await queue.close();
  await pool.close();
});

test("process.exit and uncaught errors in workers: poison items end DT_WORKER_CRASHED, the rest succeed", async () => {
  const EXIT = "__exit__";
  const THROW = "__throw__";
  const pool = await DeltatokPool.create({ deltatok, workers: 2, testFaults: { exitText: EXIT, throwText: THROW } });
  const queue = await BatchQueue.create({ pool, intervalMs: 0, batchItems: 16 });
  const N = 40;
  const answers: QueueResult[][] = Array.from({ length: N }, () => []);
  for (let i = 0; i < N; i++) {
    const text = i === 5 ? EXIT : i === 30 ? THROW : `plain text number ${i}`;
    queue.enqueue({ kind: "text", text }, (r) => answers[i]?.push(r));
  }
  const d = await queue.drain();
  assert.equal(d.state, "complete");
  assert.equal(d.pending, 2, "the two poison items could not be answered");
  for (let i = 0; i < N; i++) {
    assert.equal(answers[i]?.length, 1, `item ${i} answered ${answers[i]?.length} times`);
    const r = answers[i]?.[0];
    if (i === 5 || i === 30) assert.equal(r !== undefined && !r.ok && r.error.code, "DT_WORKER_CRASHED");
    else assert.ok(r?.ok, `item ${i}: ${JSON.stringify(r)}`);
  }
  // the pool still works afterwards
  const again = await new Promise<QueueResult>((resolve) => {
    queue.enqueue({ kind: "text", text: "after the storm" }, resolve);
    void queue.drain();
  });
  assert.ok(again.ok);
  await queue.close();
  await pool.close();
});
