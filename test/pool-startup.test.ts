/**
 * Pool startup: every worker loads its Deltatok in parallel; one that cannot is a coded startup
 * error carrying the worker's own error as cause (never a silent fallback). Options are checked
 * before any thread starts. close() is idempotent and ends the pool.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DeltatokError } from "../src/errors.js";
import { DeltatokPool } from "../src/pool/pool.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

test("a bad tokenizer path fails startup with DT_WORKER_STARTUP and the cause's code", async () => {
  await assert.rejects(DeltatokPool.create({ deltatok: { tokenizer: "/nonexistent/dir/tokenizer.json", renderer: TEST_RENDERER }, workers: 2 }), (e: unknown) => {
    assert.ok(e instanceof DeltatokError);
    assert.equal(e.code, "DT_WORKER_STARTUP");
    assert.ok(e.cause instanceof DeltatokError);
    assert.equal(e.cause.code, "DT_TOKENIZER_NOT_FOUND");
    return true;
  });
});

test("a warm-up budget too small to load is a startup error", async () => {
  await assert.rejects(DeltatokPool.create({ deltatok: { renderer: TEST_RENDERER }, workers: 1, startupTimeoutMs: 1 }), { code: "DT_WORKER_STARTUP" });
});

test("bad options are refused before any worker starts", async () => {
  await assert.rejects(DeltatokPool.create({ workers: 0 }), { code: "DT_INVALID_OPTION" });
  await assert.rejects(DeltatokPool.create({ workers: 1.5 }), { code: "DT_INVALID_OPTION" });
  await assert.rejects(DeltatokPool.create({ deltatok: { mode: "fast" as never } }), { code: "DT_INVALID_OPTION" });
  await assert.rejects(DeltatokPool.create({ deltatok: { date: "2026-02-30" } }), { code: "DT_INVALID_DATE" });
});

test("a started pool reports its workers, runs batches, and closes idempotently", async () => {
  const pool = await DeltatokPool.create({ deltatok: { renderer: TEST_RENDERER, date: "2026-11-30" }, workers: 2 });
  try {
    assert.equal(pool.size, 2);
    assert.deepEqual(
      pool.workers.map((w) => w.slot),
      [0, 1],
    );
    assert.ok(pool.workers.every((w) => w.loadMs > 0));
    const results = await pool.runBatch(1, [
      { k: "text", text: "hello world" },
      { k: "prompt", json: '{"messages": [{"role": "user", "content": "hi"}]}', ids: true },
      { k: "message", json: "{not json" },
    ]);
    assert.equal(results.length, 3);
    assert.ok(results[0]?.ok && "count" in results[0] && results[0].count === 2);
    assert.ok(results[1]?.ok && "ids" in results[1] && results[1].ids instanceof Uint32Array && results[1].ids.length === results[1].count);
    assert.ok(!results[2]?.ok && results[2]?.error.code === "DT_INVALID_JSON");
    const stats = await pool.stats();
    assert.equal(stats.workers.length, 2);
    assert.equal(stats.total.requests, 1);
  } finally {
    const a = pool.close();
    const b = pool.close();
    assert.equal(a, b);
    await a;
  }
  await assert.rejects(pool.runBatch(0, [{ k: "text", text: "x" }]), { code: "DT_CLOSED" });
});
