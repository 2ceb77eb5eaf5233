/**
 * Routing: a conversation's items go to one worker; conversations that only share a system
 * prompt spread; an overloaded owner sheds NEW conversations first; idle workers steal only
 * from a long backlog. (Fake pool: the slot each batch went to is recorded.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BatchQueue } from "../src/queue/queue.js";
import { AffinityRouter } from "../src/pool/router.js";
import type { WireItem } from "../src/pool/protocol.js";
import { FakeClock, FakeRunner } from "./fixtures/pool/fakes.js";

const SYSTEM = { role: "system", content: "You are an airline agent. Policy: ... (shared by every conversation)" };

function slotsOf(runner: FakeRunner, pick: (i: WireItem) => string | null): Map<string, Set<number>> {
  const m = new Map<string, Set<number>>();
  for (const b of runner.sent) {
    for (const it of b.items) {
      const k = pick(it);
      if (k === null) continue;
      m.set(k, (m.get(k) ?? new Set()).add(b.slot));
    }
  }
  return m;
}

test("turns of one conversation meet on one worker; shared system prompts still spread", async () => {
  const runner = new FakeRunner(2);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 2 });
  const tools = [{ type: "function", function: { name: "f" } }];
  // 8 conversations x 4 turns, interleaved; no conversationId: derived from tools + leading messages
  for (let turn = 1; turn <= 4; turn++) {
    for (let c = 0; c < 8; c++) {
      const msgs: unknown[] = [SYSTEM, { role: "user", content: `I am customer ${c}` }];
      for (let k = 1; k < turn; k++) msgs.push({ role: "assistant", content: `answer ${k}` }, { role: "user", content: `follow-up ${k}` });
      q.enqueue({ kind: "prompt", messages: msgs, options: { tools } }, () => {});
    }
  }
  const d = q.drain();
  await runner.completeAll();
  await d;
  const conv = slotsOf(runner, (it) => (it.k === "prompt" && it.messages !== undefined ? String((it.messages[1] as { content: string }).content) : null));
  assert.equal(conv.size, 8);
  for (const [c, slots] of conv) assert.equal(slots.size, 1, `${c} was split across workers`);
  const used = new Set([...conv.values()].map((s) => [...s][0]));
  assert.equal(used.size, 2, "conversations sharing a system prompt spread over both workers");
  await q.close();
});

test("conversationId and JSON request bodies route by conversation too", async () => {
  const runner = new FakeRunner(3);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 1 });
  for (let turn = 1; turn <= 3; turn++) {
    for (let c = 0; c < 6; c++) {
      const msgs: unknown[] = [SYSTEM, { role: "user", content: `hello from ${c}` }];
      for (let k = 1; k < turn; k++) msgs.push({ role: "assistant", content: `a${k}` }, { role: "user", content: `u${k}` });
      q.enqueue({ kind: "ids", json: JSON.stringify({ messages: msgs, tools: [] }) }, () => {});
      q.enqueue({ kind: "prompt", messages: [{ role: "user", content: "any" }], conversationId: `id-${c}` }, () => {});
    }
  }
  const d = q.drain();
  await runner.completeAll();
  await d;
  const byJson = slotsOf(runner, (it) => (it.k === "prompt" && it.json !== undefined ? (/hello from (\d)/.exec(it.json)?.[1] ?? null) : null));
  assert.equal(byJson.size, 6);
  for (const s of byJson.values()) assert.equal(s.size, 1);
  await q.close();
});

test("router: new conversations go to the lightest slot; a live one moves only when its owner is far behind", () => {
  const r = new AffinityRouter(2, { splitFloor: 100 });
  const a = r.route("a");
  r.add(a, 50);
  const b = r.route("b");
  assert.notEqual(a, b, "a new conversation avoids the loaded slot");
  r.add(a, 60); // owner of "a": 110, other: 0 → still within 2×0 + 100? no: 110 > 100
  assert.equal(r.route("a"), b, "moved: the owner is far behind");
  assert.equal(r.stats().moved, 1);
  r.remove(a, 110);
  r.add(b, 90);
  assert.equal(r.route("a"), b, "within the bound the owner keeps it");
  r.setHealthy(b, false);
  assert.equal(r.route("a"), a, "an unhealthy owner loses its conversations");
  r.setHealthy(a, false);
  assert.equal(r.route("z"), -1);
});

test("router: the ownership map is bounded", () => {
  const r = new AffinityRouter(4, { maxTracked: 10 });
  for (let i = 0; i < 100; i++) r.route(`k${i}`);
  assert.equal(r.stats().tracked, 10);
  assert.equal(r.ownerOf("k0"), undefined);
  assert.notEqual(r.ownerOf("k99"), undefined);
});

test("an idle worker steals from a backlog far behind, never from a short one", async () => {
  const runner = new FakeRunner(2);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 4, maxInFlightPerWorker: 1, rebalanceChars: 50_000 });
  // one hot conversation: everything is owned by one slot
  for (let i = 0; i < 40; i++) q.enqueue({ kind: "prompt", messages: [{ role: "user", content: "hot" }], conversationId: "hot" }, () => {});
  const d = q.drain();
  await runner.completeAll();
  await d;
  const slots = new Set(runner.sent.map((b) => b.slot));
  assert.equal(slots.size, 2, "the idle worker took part of the backlog");
  assert.ok(q.stats().stolen > 0);
  assert.ok(q.stats().stolen < 40);
  await q.close();
});

/** 40 items of one conversation drained through two fake workers: the workers used, items stolen. */
async function hotBacklog(content: string, sticky: boolean, rebalanceChars?: number): Promise<{ workers: number; stolen: number }> {
  const runner = new FakeRunner(2);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 4, maxInFlightPerWorker: 1, rebalanceChars });
  for (let i = 0; i < 40; i++) q.enqueue({ kind: "prompt", messages: [{ role: "user", content }], conversationId: "hot", sticky }, () => {});
  const d = q.drain();
  await runner.completeAll();
  await d;
  const out = { workers: new Set(runner.sent.map((b) => b.slot)).size, stolen: q.stats().stolen };
  await q.close();
  return out;
}

test("with the default bound a short backlog is not split", async () => {
  assert.deepEqual(await hotBacklog("hot", false), { workers: 1, stolen: 0 });
});

test("a conversation's items reach its worker in enqueue order, also when another worker hands them over from the shared lane", async () => {
  const runner = new FakeRunner(2);
  const q = await BatchQueue.create({ pool: runner, clock: new FakeClock(), intervalMs: 0, batchItems: 2, maxInFlightPerWorker: 1 });
  const turn = (n: number) => ({ kind: "prompt" as const, messages: [{ role: "user", content: `turn ${n}` }], conversationId: "c", sticky: true });
  // a new conversation's first turns wait in the shared lane; one worker takes the first batch
  // (and so owns the conversation), the other deals the next turns over to it
  for (let n = 1; n <= 6; n++) q.enqueue(turn(n), () => {});
  const d = q.drain();
  await new Promise((r) => setImmediate(r));
  // later turns arrive while the owner is busy and earlier ones may still wait in the shared lane
  for (let n = 7; n <= 10; n++) q.enqueue(turn(n), () => {});
  await runner.completeAll();
  await d;
  const order = runner.sent.flatMap((b) => b.items.map((it) => Number(/turn (\d+)/.exec(it.k === "prompt" ? JSON.stringify(it.messages) : "")?.[1])));
  assert.deepEqual(order, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "sent in enqueue order");
  assert.equal(new Set(runner.sent.map((b) => b.slot)).size, 1, "all on the owner");
  await q.close();
});

test("sticky items are not stolen and their conversation does not move, however long the owner's backlog", async () => {
  assert.deepEqual(await hotBacklog("hot ".repeat(50), true, 10), { workers: 1, stolen: 0 });
});

test("router: a sticky route keeps a healthy owner whatever its load", () => {
  const r = new AffinityRouter(2, { splitFloor: 10 });
  const a = r.route("a");
  r.add(a, 1_000);
  assert.equal(r.route("a", true), a);
  assert.equal(r.stats().moved, 0);
  assert.notEqual(r.route("a"), a, "not sticky: moved");
});
