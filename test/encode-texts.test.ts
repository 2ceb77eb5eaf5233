/**
 * Batch encode: Deltatok.encodeTexts, DeltatokPool.encodeTexts (chunks over every worker, in
 * order, with progress) and the sidecar's encode_batch (in process and on a pool, as lists or
 * base64 with lengths) answer exactly encodeText of each text; a bad text fails the whole call
 * with its code and index, and the connection stays usable.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { DeltatokPool, ENCODE_CHUNK_TEXTS } from "../src/pool/pool.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { PoolBackend } from "../src/serve/pool-backend.js";
import { stdioExchange as exchange } from "./helpers/serve.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

// more texts than one chunk holds, so the pool splits them; lengths from a fixed rule (no randomness)
const TEXTS: string[] = [];
for (let i = 0; i < ENCODE_CHUNK_TEXTS * 2 + 37; i++) TEXTS.push(i % 7 === 0 ? "" : `text ${i}: ${"naïve café 日本語 ".repeat(i % 5)}${"x".repeat(i % 13)}`);

test("Deltatok.encodeTexts equals encodeText of each text; progress per text; a bad text names its index", async () => {
  const dt = await Deltatok.create({ renderer: TEST_RENDERER, date: "2026-11-30" });
  const seen: number[] = [];
  const got = dt.encodeTexts(TEXTS.slice(0, 50), { add_special_tokens: true, onProgress: (d) => seen.push(d) });
  assert.deepEqual(got.map((x) => Array.from(x)), TEXTS.slice(0, 50).map((t) => Array.from(dt.encodeText(t, { add_special_tokens: true }))));
  assert.deepEqual(seen, Array.from({ length: 50 }, (_, i) => i + 1));
  assert.throws(() => dt.encodeTexts(["ok", "bad \uD800"]), (e: { code?: string; path?: string }) => e.code === "DT_LONE_SURROGATE" && e.path === "texts[1]");
  assert.throws(() => dt.encodeTexts(["ok"], { nope: true } as never), (e: { code?: string }) => e.code === "DT_INVALID_OPTION");
});

test("DeltatokPool.encodeTexts spreads chunks over the workers and answers in order", async () => {
  const dt = await Deltatok.create({ renderer: TEST_RENDERER, date: "2026-11-30" });
  const pool = await DeltatokPool.create({ deltatok: { renderer: TEST_RENDERER, date: "2026-11-30" }, workers: 2 });
  try {
    const progress: number[] = [];
    const got = await pool.encodeTexts(TEXTS, { onProgress: (d, total) => (assert.equal(total, TEXTS.length), progress.push(d)) });
    assert.deepEqual(got.map((x) => Array.from(x)), TEXTS.map((t) => Array.from(dt.encodeText(t))));
    assert.ok(progress.length >= 3, `progress per chunk: ${progress.join(",")}`);
    assert.equal(progress[progress.length - 1], TEXTS.length);
    const bad = TEXTS.slice();
    bad[ENCODE_CHUNK_TEXTS + 5] = "x\uDC00";
    await assert.rejects(pool.encodeTexts(bad), (e: { code?: string; path?: string }) => e.code === "DT_LONE_SURROGATE" && e.path === `texts[${ENCODE_CHUNK_TEXTS + 5}]`);
    // the pool still answers
    assert.deepEqual(Array.from((await pool.encodeTexts(["Hello world"]))[0] as Uint32Array), Array.from(dt.encodeText("Hello world")));
  } finally {
    await pool.close();
  }
});

for (const kind of ["in-process", "pool"] as const) {
  test(`${kind}: the sidecar's encode_batch answers encode_text of each text`, async () => {
    const dt = await Deltatok.create({ date: "2026-11-30" });
    const backend = kind === "pool" ? await PoolBackend.create({ date: "2026-11-30" }, 2) : new InProcessBackend(await Deltatok.create({ date: "2026-11-30" }));
    const texts = TEXTS.slice(0, 300);
    const answers = await exchange(backend, [
      { id: 1, method: "encode_batch", params: { texts, add_special_tokens: false } },
      { id: 2, method: "encode_batch", params: { texts, ids_encoding: "base64" } },
      { id: 3, method: "encode_batch", params: { texts: ["ok", 5] } },
      { id: 4, method: "encode_batch", params: { texts: ["ok"], extra: 1 } },
      { id: 5, method: "encode_batch", params: { texts: [] } },
      { id: 6, method: "health", params: {} },
    ]);
    const want = texts.map((t) => Array.from(dt.encodeText(t)));
    assert.deepEqual(answers.get(1)?.result, { ids: want, count: want.flat().length });
    const b = answers.get(2)?.result as { ids: string; lengths: number[]; count: number };
    const flat = new Uint32Array(new Uint8Array(Buffer.from(b.ids, "base64")).buffer);
    assert.deepEqual(Array.from(flat), want.flat());
    assert.deepEqual(b.lengths, want.map((x) => x.length));
    assert.equal((answers.get(3)?.error as { code: string; path: string }).path, "texts[1]");
    assert.equal((answers.get(4)?.error as { code: string }).code, "DT_INVALID_OPTION");
    assert.deepEqual(answers.get(5)?.result, { ids: [], count: 0 });
    assert.equal((answers.get(6)?.result as { status: string }).status, "ok");
    await backend.close();
  });
}
