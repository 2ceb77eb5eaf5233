/**
 * Queue contract for workers that die of memory: the batch is re-queued like any crash, each item
 * retried once alone on another worker, and the second death — the item alone on its worker —
 * decides the code: DT_WORKER_OUT_OF_MEMORY when that worker ran out of its heap limit,
 * DT_WORKER_CRASHED otherwise. Either way the item counts as pending in a drain.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DeltatokError } from "../src/errors.js";
import { BatchQueue, isInfrastructureError } from "../src/queue/queue.js";
import type { QueueResult } from "../src/queue/types.js";
import { FakeClock, FakeRunner, settle } from "./fixtures/pool/fakes.js";

const oom = () => new DeltatokError("DT_WORKER_OUT_OF_MEMORY", "worker ran out of its memory limit");
const crash = () => new DeltatokError("DT_WORKER_CRASHED", "worker exited with code: 1");

async function poisonRun(first: DeltatokError, second: DeltatokError): Promise<{ poison: QueueResult[]; fine: QueueResult[]; pending: number; retried: number }> {
  const runner = new FakeRunner(2);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 8 });
  const poison: QueueResult[] = [];
  const fine: QueueResult[] = [];
  q.enqueue({ kind: "text", text: "poison" }, (r) => poison.push(r));
  for (let i = 0; i < 3; i++) q.enqueue({ kind: "text", text: `fine ${i}` }, (r) => fine.push(r));
  const drained = q.drain();
  await settle();
  const isPoison = (b: { items: Array<{ k: string; text?: string }> }) => b.items.some((i) => i.k === "text" && i.text === "poison");
  const held = runner.pending.findIndex(isPoison);
  assert.ok(held >= 0);
  const { slot, items } = runner.pending[held] as (typeof runner.pending)[number];
  const sentBefore = runner.sent.length;
  runner.fail(held, first);
  await settle();
  // finish the other work until the poison's retry is sent
  for (let guard = 0; runner.pending.findIndex(isPoison) < 0; guard++) {
    assert.ok(guard < 100 && runner.pending.length > 0, "the poison item is retried");
    runner.complete(0);
    await settle();
  }
  const texts = new Set(items.map((i) => (i.k === "text" ? i.text : "")));
  const retries = runner.sent.slice(sentBefore).filter((b) => b.items.some((i) => i.k === "text" && texts.has(i.text)));
  assert.ok(retries.length >= 1 && retries.every((b) => b.items.length === 1 && b.slot !== slot), "retried alone, on the other worker");
  runner.fail(runner.pending.findIndex(isPoison), second);
  await runner.completeAll();
  const d = await drained;
  const retried = q.stats().retried;
  await q.close();
  return { poison, fine, pending: d.pending, retried };
}

test("an item that takes its worker past the memory limit twice is answered DT_WORKER_OUT_OF_MEMORY; the others complete", async () => {
  const r = await poisonRun(oom(), oom());
  assert.equal(r.poison.length, 1);
  const p = r.poison[0];
  assert.ok(p !== undefined && !p.ok);
  assert.equal(p.error.code, "DT_WORKER_OUT_OF_MEMORY");
  assert.ok(isInfrastructureError(p.error.code));
  assert.equal(r.fine.length, 3);
  assert.ok(r.fine.every((x) => x.ok));
  assert.equal(r.pending, 1, "counted as pending by the drain");
  assert.ok(r.retried >= 1);
});

test("the second death decides the code: memory first then a crash is DT_WORKER_CRASHED, and the reverse is DT_WORKER_OUT_OF_MEMORY", async () => {
  const a = await poisonRun(oom(), crash());
  assert.equal(a.poison[0]?.ok === false && a.poison[0].error.code, "DT_WORKER_CRASHED");
  const b = await poisonRun(crash(), oom());
  assert.equal(b.poison[0]?.ok === false && b.poison[0].error.code, "DT_WORKER_OUT_OF_MEMORY");
  assert.ok(a.fine.every((x) => x.ok) && b.fine.every((x) => x.ok));
});
