/**
 * Queue contract: the documented item limit (DT_QUEUE_FULL), and close(): idempotent, answers
 * what was queued DT_CLOSED, lets batches in flight finish, refuses new work.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BatchQueue } from "../src/queue/queue.js";
import type { QueueResult } from "../src/queue/types.js";
import { FakeClock, FakeRunner, settle } from "./fixtures/pool/fakes.js";

test("enqueue beyond maxItems throws DT_QUEUE_FULL; room comes back as items are answered", async () => {
  const runner = new FakeRunner(1);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, maxItems: 3 });
  for (let i = 0; i < 3; i++) q.enqueue({ kind: "text", text: "a" }, () => {});
  assert.throws(() => q.enqueue({ kind: "text", text: "a" }, () => {}), { code: "DT_QUEUE_FULL" });
  assert.equal(q.size, 3);
  const d = q.drain();
  await runner.completeAll();
  await d;
  assert.equal(q.size, 0);
  q.enqueue({ kind: "text", text: "a" }, () => {});
  assert.equal(q.size, 1);
  await q.close();
});

test("close() is idempotent, answers queued items DT_CLOSED and waits for batches in flight", async () => {
  const runner = new FakeRunner(1);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 1, maxInFlightPerWorker: 1 });
  const got: QueueResult[] = [];
  q.enqueue({ kind: "text", text: "in flight" }, (r) => got.push(r));
  q.enqueue({ kind: "text", text: "queued" }, (r) => got.push(r));
  void q.drain().catch(() => {});
  await settle();
  assert.equal(runner.pending.length, 1);
  const c1 = q.close();
  const c2 = q.close();
  assert.equal(c1, c2, "the same promise");
  assert.throws(() => q.enqueue({ kind: "text", text: "late" }, () => {}), { code: "DT_CLOSED" });
  await assert.rejects(q.drain(), { code: "DT_CLOSED" });
  let closed = false;
  void c1.then(() => (closed = true));
  await settle();
  assert.equal(closed, false, "close waits for the batch in flight");
  runner.complete();
  await c1;
  assert.equal(got.length, 2);
  assert.equal(runner.closed, 0, "a pool the caller gave is the caller's to close");
  for (const r of got) assert.equal(r.ok ? "ok" : r.error.code, "DT_CLOSED", "close ends the drain: one final state, nothing computed after");
});

test("close() without a drain lets in-flight items finish with their real results", async () => {
  const runner = new FakeRunner(1);
  const clock = new FakeClock();
  const q = await BatchQueue.create({ pool: runner, clock, intervalMs: 10, batchItems: 1, maxInFlightPerWorker: 1 });
  const got: QueueResult[] = [];
  q.enqueue({ kind: "text", text: "abc" }, (r) => got.push(r));
  q.enqueue({ kind: "text", text: "queued" }, (r) => got.push(r));
  clock.advance(10);
  assert.equal(runner.pending.length, 1);
  const c = q.close();
  await settle();
  assert.equal(got.length, 1);
  assert.equal(!got[0]?.ok && got[0]?.error.code, "DT_CLOSED");
  runner.complete();
  await c;
  assert.equal(got.length, 2);
  assert.ok(got[1]?.ok && got[1].kind === "text" && got[1].count === 3);
  await q.close();
});

test("close() gives up on a batch that never finishes after closeTimeoutMs", async () => {
  const runner = new FakeRunner(1);
  const clock = new FakeClock();
  const q = await BatchQueue.create({ pool: runner, clock, intervalMs: 10, closeTimeoutMs: 500 });
  const got: QueueResult[] = [];
  q.enqueue({ kind: "text", text: "stuck" }, (r) => got.push(r));
  clock.advance(10);
  const c = q.close();
  await settle();
  clock.advance(500);
  await c;
  assert.equal(got.length, 1);
  assert.equal(!got[0]?.ok && got[0]?.error.code, "DT_CLOSED");
  runner.complete(); // too late: ignored
  await settle();
  assert.equal(got.length, 1);
});
