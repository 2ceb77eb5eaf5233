/**
 * Affinity on real workers: every turn of a conversation after the first finds the previous
 * turn in its worker's cache (reused > 0), whether the conversation is named by an id, derived
 * from its leading messages, or sent as JSON text — while conversations that share only the
 * system prompt use both workers.
 */
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { DeltatokPool } from "../src/pool/pool.js";
import { BatchQueue } from "../src/queue/queue.js";
import type { QueueItem, QueueResult } from "../src/queue/types.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

let pool: DeltatokPool;
let queue: BatchQueue;

before(async () => {
  pool = await DeltatokPool.create({ deltatok: { renderer: TEST_RENDERER, date: "2026-11-30" }, workers: 2 });
  queue = await BatchQueue.create({ pool, intervalMs: 1 });
});
after(async () => {
  await queue.close();
  await pool.close();
});

const SYSTEM = { role: "system", content: "You are a careful travel agent. Follow the airline policy exactly. ".repeat(20) };
const TOOLS = [{ type: "function", function: { name: "get_reservation", description: "Look up a reservation", parameters: { type: "object", properties: { id: { type: "string" } } } } }];

function conversation(c: number, turns: number): unknown[] {
  const msgs: unknown[] = [SYSTEM, { role: "user", content: `Hello, I am passenger number ${c} and my flight was cancelled.` }];
  for (let t = 1; t < turns; t++) {
    msgs.push({ role: "assistant", content: `Turn ${t}: I can help with that, passenger ${c}. Let me look into your reservation details.` });
    msgs.push({ role: "user", content: `Turn ${t}: my reservation code is ABC${c}${t}, please check the options for tomorrow.` });
  }
  return msgs;
}

function ask(item: QueueItem): Promise<QueueResult> {
  return new Promise((resolve) => queue.enqueue(item, resolve));
}

type Form = "derived" | "id" | "json";

async function runConversations(form: Form, base: number): Promise<Map<number, QueueResult[]>> {
  const out = new Map<number, QueueResult[]>();
  const TURNS = 5;
  for (let turn = 1; turn <= TURNS; turn++) {
    // all conversations' turn k in flight together; turn k+1 only after turn k was answered
    const round = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) => {
        const c = base + i;
        const messages = conversation(c, turn);
        const item: QueueItem =
          form === "json"
            ? { kind: "prompt", json: JSON.stringify({ messages, tools: TOOLS }) }
            : form === "id"
              ? { kind: "prompt", messages, options: { tools: TOOLS }, conversationId: `conv-${c}` }
              : { kind: "prompt", messages, options: { tools: TOOLS } };
        return ask(item).then((r) => [c, r] as const);
      }),
    );
    for (const [c, r] of round) out.set(c, [...(out.get(c) ?? []), r]);
  }
  return out;
}

for (const [form, base] of [
  ["derived", 0],
  ["id", 100],
  ["json", 200],
] as Array<[Form, number]>) {
  test(`${form}: each turn after the first reuses its worker's cache`, async () => {
    const byConv = await runConversations(form, base);
    const workersUsed = new Set<number>();
    for (const [c, results] of byConv) {
      assert.equal(results.length, 5);
      const workers = new Set(results.map((r) => (r.ok ? r.worker : -1)));
      assert.equal(workers.size, 1, `conversation ${c} was answered by workers ${[...workers].join(",")}`);
      workersUsed.add([...workers][0] as number);
      results.forEach((r, turn) => {
        assert.ok(r.ok && r.kind === "prompt", JSON.stringify(r));
        if (turn > 0) {
          assert.ok(r.reused > 0, `conversation ${c} turn ${turn + 1}: reused ${r.reused} (${r.outcome})`);
          assert.notEqual(r.outcome, "miss");
          // nearly all of the previous turn: only this conversation's own cache entry has it
          // (another conversation on the same worker shares just the system prompt and tools)
          const prev = results[turn - 1];
          assert.ok(prev?.ok && prev.kind === "prompt" && r.reused >= prev.count - 16, `turn ${turn + 1} reused ${r.reused} of ${prev?.ok && prev.kind === "prompt" ? prev.count : "?"}`);
        }
      });
    }
    assert.equal(workersUsed.size, 2, "conversations sharing only the system prompt spread over both workers");
  });
}

test("ids items return the same ids as counts", async () => {
  const messages = conversation(999, 3);
  const [a, b] = await Promise.all([
    ask({ kind: "ids", messages, conversationId: "ids-check" }),
    ask({ kind: "prompt", messages, conversationId: "ids-check" }),
  ]);
  assert.ok(a?.ok && a.kind === "ids" && b?.ok && b.kind === "prompt");
  assert.equal(a.ids.length, b.count);
  assert.equal(a.count, b.count);
});
