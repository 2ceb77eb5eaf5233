/**
 * Queue contract: a batch whose worker died is re-queued (none lost), each item retried once,
 * alone, on another worker; a second failure answers it DT_WORKER_CRASHED. During a drain that
 * failure is final and counted as pending.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DeltatokError } from "../src/errors.js";
import { BatchQueue } from "../src/queue/queue.js";
import type { QueueResult } from "../src/queue/types.js";
import { FakeClock, FakeRunner, settle } from "./fixtures/pool/fakes.js";

test("live lane: a failed batch is re-queued and every item answered once", async () => {
  const runner = new FakeRunner(2);
  const clock = new FakeClock();
  const q = await BatchQueue.create({ pool: runner, clock, intervalMs: 10, batchItems: 4 });
  const crashes: unknown[] = [];
  q.on("workerCrash", (c) => crashes.push(c));
  const got = new Map<number, QueueResult[]>();
  for (let i = 0; i < 8; i++) q.enqueue({ kind: "text", text: `t${i}` }, (r) => got.set(i, [...(got.get(i) ?? []), r]));
  clock.advance(10); // live tick: the 8 items are dealt out to both workers
  assert.equal(runner.pending.length, 2);
  const failed = runner.pending[0] as (typeof runner.pending)[number];
  const sentBefore = runner.sent.length;
  runner.fail(0);
  await settle();
  assert.equal(crashes.length, 1);
  assert.equal(got.size, 0, "nothing answered yet: the items were re-queued, not failed");
  await runner.completeAll();
  clock.advance(10);
  await runner.completeAll();
  const retries = runner.sent.slice(sentBefore);
  assert.equal(retries.length, failed.items.length, "each failed item is retried alone");
  assert.ok(retries.every((b) => b.items.length === 1 && b.slot !== failed.slot), "on the other worker");
  assert.equal(got.size, 8);
  for (const rs of got.values()) {
    assert.equal(rs.length, 1);
    assert.ok(rs[0]?.ok);
  }
  assert.equal(q.stats().retried, failed.items.length);
  assert.equal(q.stats().batchFailures, 1);
  await q.close();
});

test("a second failure answers DT_WORKER_CRASHED; in a drain it stays counted as pending", async () => {
  const runner = new FakeRunner(2);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 8 });
  const got: QueueResult[] = [];
  q.enqueue({ kind: "text", text: "poison" }, (r) => got.push(r));
  q.enqueue({ kind: "text", text: "fine" }, (r) => got.push(r));
  const drained = q.drain();
  await settle();
  runner.fail(0); // both items die with the worker
  await settle();
  // retries: one single-item batch each; fail the poison's again, complete the other
  const poison = runner.pending.findIndex((b) => b.items[0]?.k === "text" && b.items[0].text === "poison");
  assert.ok(poison >= 0);
  runner.fail(poison);
  await runner.completeAll();
  const d = await drained;
  assert.equal(d.state, "complete");
  assert.equal(d.pending, 1);
  assert.equal(got.length, 2);
  const p = got.find((r) => !r.ok);
  assert.equal(p !== undefined && !p.ok && p.error.code, "DT_WORKER_CRASHED");
  assert.ok(got.some((r) => r.ok));
  await q.close();
});

test("a pool with one worker retries on its replacement", async () => {
  const runner = new FakeRunner(1);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0 });
  let ok = 0;
  for (let i = 0; i < 3; i++) q.enqueue({ kind: "text", text: "z" }, (r) => (ok += r.ok ? 1 : 0));
  const drained = q.drain();
  await settle();
  runner.fail(0);
  await runner.completeAll();
  assert.equal((await drained).pending, 0);
  assert.equal(ok, 3);
  await q.close();
});

test("a worker that cannot be restarted is taken out of routing", async () => {
  const runner = new FakeRunner(2);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 1, maxInFlightPerWorker: 1 });
  const slots: number[] = [];
  for (let i = 0; i < 6; i++) q.enqueue({ kind: "prompt", messages: [{ role: "user", content: `c${i}` }], conversationId: `c${i}` }, (r) => r.ok && slots.push(r.worker));
  const drained = q.drain();
  await settle();
  const dead = runner.pending[0]?.slot as number;
  runner.fail(0, new DeltatokError("DT_WORKER_STARTUP", "replacement failed to load"));
  await runner.completeAll();
  assert.equal((await drained).pending, 0);
  assert.equal(slots.length, 6);
  assert.ok(runner.sent.slice(1).every((b) => b.slot !== dead), "nothing more is sent to the dead slot");
  await q.close();
});
