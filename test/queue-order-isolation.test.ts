/**
 * Queue contract: results of a batch come back in input order, each item exactly once; a bad
 * item fails alone; batches respect their bounds. (Fake pool and clock: no workers, no timing.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BatchQueue } from "../src/queue/queue.js";
import type { QueueResult } from "../src/queue/types.js";
import { FakeClock, FakeRunner, settle } from "./fixtures/pool/fakes.js";

test("results of a batch arrive in input order, each item answered once", async () => {
  const runner = new FakeRunner(1);
  const clock = new FakeClock();
  const q = await BatchQueue.create({ pool: runner, clock, intervalMs: 0, batchItems: 8 });
  const got: Array<[number, QueueResult]> = [];
  for (let i = 0; i < 20; i++) q.enqueue({ kind: "text", text: "x".repeat(i + 1) }, (r) => got.push([i, r]));
  const drained = q.drain();
  await settle();
  // two batches in flight (maxInFlightPerWorker 2), in enqueue order
  assert.equal(runner.pending.length, 2);
  assert.deepEqual(
    runner.pending.map((b) => b.items.length),
    [8, 8],
  );
  // finish the second batch first: its results still come in its own input order
  runner.complete(1);
  await settle();
  assert.deepEqual(
    got.map(([i]) => i),
    [8, 9, 10, 11, 12, 13, 14, 15],
  );
  await runner.completeAll();
  const d = await drained;
  assert.deepEqual(d.state, "complete");
  assert.equal(d.pending, 0);
  assert.equal(got.length, 20);
  assert.deepEqual(new Set(got.map(([i]) => i)).size, 20);
  for (const [i, r] of got) {
    assert.ok(r.ok && r.kind === "text");
    assert.equal(r.count, i + 1);
  }
  await q.close();
});

test("one bad item fails alone; the rest of its batch is answered", async () => {
  const runner = new FakeRunner(1);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0 });
  const got: QueueResult[] = [];
  for (const t of ["a", "bad", "ccc"]) q.enqueue({ kind: "text", text: t }, (r) => got.push(r));
  const drained = q.drain();
  await runner.completeAll();
  assert.equal((await drained).pending, 0, "a per-item error is an answer, not a pending item");
  assert.equal(got.length, 3);
  assert.ok(got[0]?.ok);
  assert.equal(got[1]?.ok, false);
  assert.equal(!got[1]?.ok && got[1]?.error.code, "DT_INVALID_REQUEST");
  assert.equal(!got[1]?.ok && got[1]?.error.path, "text");
  assert.ok(got[2]?.ok);
  assert.equal(q.stats().itemErrors, 1);
  await q.close();
});

test("a throwing onResult does not disturb other items", async () => {
  const runner = new FakeRunner(1);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0 });
  const errors: unknown[] = [];
  q.on("callbackError", (e) => errors.push(e));
  let answered = 0;
  q.enqueue({ kind: "text", text: "a" }, () => {
    throw new Error("caller bug");
  });
  q.enqueue({ kind: "text", text: "b" }, () => answered++);
  const drained = q.drain();
  await runner.completeAll();
  assert.equal((await drained).pending, 0);
  assert.equal(answered, 1);
  assert.equal(errors.length, 1);
  await q.close();
});

test("batches respect batchItems and batchChars (but always take one item)", async () => {
  const runner = new FakeRunner(1);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 3, batchChars: 100, maxInFlightPerWorker: 1 });
  const sizes = [10, 10, 10, 10, 90, 500, 10];
  let n = 0;
  for (const s of sizes) q.enqueue({ kind: "text", text: "y".repeat(s) }, () => n++);
  const drained = q.drain();
  await runner.completeAll();
  await drained;
  assert.equal(n, sizes.length);
  assert.deepEqual(
    runner.sent.map((b) => b.items.length),
    [3, 1, 1, 1, 1],
  );
  await q.close();
});

test("an item that is not an item is refused at enqueue with a code", async () => {
  const q = await BatchQueue.create({ pool: new FakeRunner(1), clock: new FakeClock(), intervalMs: 0 });
  assert.throws(() => q.enqueue({ kind: "nope" } as never, () => {}), { code: "DT_INVALID_REQUEST" });
  assert.throws(() => q.enqueue(null as never, () => {}), { code: "DT_INVALID_REQUEST" });
  assert.throws(() => q.enqueue({ kind: "text", text: "a" }, null as never), { code: "DT_INVALID_REQUEST" });
  assert.equal(q.size, 0);
  await q.close();
});
