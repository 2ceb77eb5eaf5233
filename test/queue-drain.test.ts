/**
 * Queue contract: the live lane and interval 0, drain timeout (complete with pending > 0, late
 * results ignored), abort (one final state), progress events. Fake pool and clock.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BatchQueue } from "../src/queue/queue.js";
import type { DrainProgress, DrainResult, QueueResult } from "../src/queue/types.js";
import { FakeClock, FakeRunner, settle } from "./fixtures/pool/fakes.js";

test("intervalMs 0 defers everything to drain()", async () => {
  const runner = new FakeRunner(1);
  const clock = new FakeClock();
  const q = await BatchQueue.create({ pool: runner, clock, intervalMs: 0 });
  for (let i = 0; i < 5; i++) q.enqueue({ kind: "text", text: "a" }, () => {});
  clock.advance(60_000);
  await settle();
  assert.equal(runner.sent.length, 0);
  const d = q.drain();
  await runner.completeAll();
  assert.equal((await d).pending, 0);
  assert.equal(runner.sent.length, 1);
  await q.close();
});

test("the live lane sends on its interval, then full batches as workers free up", async () => {
  const runner = new FakeRunner(1);
  const clock = new FakeClock();
  const q = await BatchQueue.create({ pool: runner, clock, intervalMs: 50, batchItems: 2, maxInFlightPerWorker: 1 });
  let n = 0;
  for (let i = 0; i < 5; i++) q.enqueue({ kind: "text", text: "a" }, () => n++);
  await settle();
  assert.equal(runner.sent.length, 0, "nothing before the first tick");
  clock.advance(50);
  assert.equal(runner.sent.length, 1);
  runner.complete();
  await settle();
  assert.equal(runner.sent.length, 2, "a full batch goes out as soon as the worker is free");
  runner.complete();
  await settle();
  assert.equal(runner.sent.length, 2, "a partial batch waits for the next tick");
  clock.advance(50);
  assert.equal(runner.sent.length, 3);
  runner.complete();
  await settle();
  assert.equal(n, 5);
  await q.close();
});

test("a drain that times out is complete with pending > 0; late results are ignored", async () => {
  const runner = new FakeRunner(1);
  const clock = new FakeClock();
  const q = await BatchQueue.create({ pool: runner, clock, intervalMs: 0, batchItems: 2, maxInFlightPerWorker: 1 });
  const got = new Map<number, QueueResult[]>();
  for (let i = 0; i < 6; i++) q.enqueue({ kind: "text", text: "abc" }, (r) => got.set(i, [...(got.get(i) ?? []), r]));
  const states: DrainResult[] = [];
  q.on("drain", (d) => states.push(d));
  const drained = q.drain({ timeoutMs: 1000 });
  await settle();
  runner.complete(); // items 0, 1 done
  await settle();
  assert.equal(runner.pending.length, 1); // items 2, 3 in flight; 4, 5 queued
  clock.advance(1000);
  const d = await drained;
  assert.equal(d.state, "complete");
  assert.equal(d.reason, "timeout");
  assert.equal(d.pending, 4);
  assert.equal(d.done, 2);
  for (const i of [2, 3, 4, 5]) {
    const r = got.get(i)?.[0];
    assert.equal(r !== undefined && !r.ok && r.error.code, "DT_DRAIN_TIMEOUT");
  }
  runner.complete(); // the batch that was in flight finishes late
  await settle();
  for (const rs of got.values()) assert.equal(rs.length, 1, "answered exactly once");
  assert.equal(states.length, 1, "one final state");
  assert.equal(q.size, 0);
  await q.close();
});

test("aborting a drain (SIGTERM) yields one final state; abort again changes nothing", async () => {
  const runner = new FakeRunner(2);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 1, maxInFlightPerWorker: 1 });
  const answers = new Map<number, number>();
  for (let i = 0; i < 5; i++) q.enqueue({ kind: "text", text: "x" }, () => answers.set(i, (answers.get(i) ?? 0) + 1));
  const states: DrainResult[] = [];
  q.on("drain", (d) => states.push(d));
  const ac = new AbortController();
  const drained = q.drain({ signal: ac.signal });
  const again = q.drain();
  assert.equal(again, drained, "a second drain() during a drain is the same drain");
  await settle();
  runner.complete();
  await settle();
  ac.abort();
  q.abortDrain();
  const d = await drained;
  assert.equal(d.reason, "aborted");
  assert.equal(d.state, "complete");
  assert.ok(d.pending > 0);
  assert.equal(d.pending + d.done, 5);
  await runner.completeAll();
  assert.equal(states.length, 1);
  assert.equal(answers.size, 5);
  for (const c of answers.values()) assert.equal(c, 1);
  await q.close();
});

test("a drain with an already-aborted signal ends at once", async () => {
  const runner = new FakeRunner(1);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0 });
  let code: string | undefined;
  q.enqueue({ kind: "text", text: "x" }, (r) => (code = r.ok ? "ok" : r.error.code));
  const d = await q.drain({ signal: AbortSignal.abort() });
  assert.deepEqual([d.state, d.reason, d.pending], ["complete", "aborted", 1]);
  assert.equal(code, "DT_CLOSED");
  await q.close();
});

test("an empty drain completes at once with pending 0", async () => {
  const q = await BatchQueue.create({ pool: new FakeRunner(1), clock: new FakeClock(), intervalMs: 0 });
  const d = await q.drain({ timeoutMs: 5 });
  assert.deepEqual([d.state, d.reason, d.pending, d.done], ["complete", "drained", 0, 0]);
  await q.close();
});

test("progress events report done, pending and rate on the clock", async () => {
  const runner = new FakeRunner(1);
  const clock = new FakeClock();
  const seen: DrainProgress[] = [];
  const q = await BatchQueue.create({ pool: runner, clock, intervalMs: 0, batchItems: 2, maxInFlightPerWorker: 1, progressIntervalMs: 1000, onProgress: (p) => seen.push(p) });
  const events: DrainProgress[] = [];
  q.on("progress", (p) => events.push(p));
  for (let i = 0; i < 4; i++) q.enqueue({ kind: "text", text: "x" }, () => {});
  const drained = q.drain();
  await settle();
  runner.complete();
  await settle();
  clock.advance(1000);
  assert.equal(events.length, 1);
  assert.deepEqual({ done: events[0]?.done, pending: events[0]?.pending, rate: events[0]?.rate }, { done: 2, pending: 2, rate: 2 });
  await runner.completeAll();
  await drained;
  assert.equal(events.at(-1)?.done, 4, "a last event at the end");
  assert.equal(events.at(-1)?.pending, 0);
  assert.deepEqual(seen, events);
  await q.close();
});
