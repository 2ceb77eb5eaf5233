/**
 * Isolation as the last line: workers run with a V8 heap limit, and one that exceeds it dies
 * alone (ERR_WORKER_OUT_OF_MEMORY) instead of aborting the process. Its thread is replaced, its
 * batch retried item by item, and the item that took it down — retried once alone, on another
 * worker where there is one — is answered DT_WORKER_OUT_OF_MEMORY; every other item completes.
 * A replay on a single worker finishes, with the other conversations' records equal to the
 * in-process run's. The fault is a test hook (`testFaults.oomMarker`): the worker allocates
 * until its limit ends it, whatever the template budgets would have caught.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { resolveOptions } from "../src/api/options.js";
import { parseDate } from "../src/load/date.js";
import { DeltatokPool, defaultWorkerHeapMb } from "../src/pool/pool.js";
import { BatchQueue } from "../src/queue/queue.js";
import type { QueueResult } from "../src/queue/types.js";
import { replayCorpus, replayCorpusPooled, type ReplayRecord } from "../src/cli/replay.js";
import { repoPath } from "./helpers/paths.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const deltatok = { renderer: TEST_RENDERER, date: "2026-11-30" } as const;
const MARKER = "__allocate until the heap limit__";
/** Small enough to reach quickly, large enough for a loaded qwen3 worker (60–90 MB of heap). */
const LIMITS = { maxOldGenerationSizeMb: 256 };
const MIB = 1024 * 1024;

test("a worker past its heap limit is replaced; its item is answered DT_WORKER_OUT_OF_MEMORY after one retry; the rest complete", async () => {
  const pool = await DeltatokPool.create({ deltatok, workers: 2, resourceLimits: LIMITS, testFaults: { oomMarker: MARKER } });
  const queue = await BatchQueue.create({ pool, intervalMs: 0, batchItems: 8 });
  const crashes: Array<{ worker: number; error: { code: string } }> = [];
  queue.on("workerCrash", (c: { worker: number; error: { code: string } }) => crashes.push(c));
  const N = 30;
  const BAD = 11;
  const answers: QueueResult[][] = Array.from({ length: N }, () => []);
  for (let i = 0; i < N; i++) {
    const text = i === BAD ? `item ${i} ${MARKER}` : `item ${i}: ${"the quick brown fox ".repeat(1 + (i % 5))}`;
    queue.enqueue({ kind: "text", text }, (r) => answers[i]?.push(r));
  }
  const d = await queue.drain();
  assert.equal(d.state, "complete");
  assert.equal(d.pending, 1, "only the item that exhausts memory is unanswered");
  for (let i = 0; i < N; i++) {
    assert.equal(answers[i]?.length, 1, `item ${i} answered ${answers[i]?.length} times`);
    const r = answers[i]?.[0];
    if (i === BAD) {
      assert.ok(r !== undefined && !r.ok);
      assert.equal(r.error.code, "DT_WORKER_OUT_OF_MEMORY");
    } else {
      assert.ok(r?.ok, `item ${i}: ${JSON.stringify(r)}`);
    }
  }
  assert.equal(crashes.length, 2, "the first death (a batch) and the retry's (the item alone)");
  assert.ok(crashes.every((c) => c.error.code === "DT_WORKER_OUT_OF_MEMORY"));
  assert.notEqual(crashes[0]?.worker, crashes[1]?.worker, "the retry ran on the other worker");
  // both slots have a fresh worker again, and the process is still here
  for (let slot = 0; slot < 2; slot++) {
    const after = await pool.runBatch(slot, [{ k: "text", text: "still alive" }]);
    assert.ok(after[0]?.ok);
  }
  await queue.close();
  await pool.close();
});

test("a replay on one worker finishes: every other conversation's records equal the in-process run, the bad one has the coded error", async () => {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-oom-"));
  const slice = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "").slice(0, 6);
  const poison = slice[2]?.replace(/"id":\s*"([^"]*)"/, `"id": "$1 ${MARKER}"`) as string;
  assert.notEqual(poison, slice[2]);
  const clean = join(dir, "clean.jsonl");
  const bad = join(dir, "bad.jsonl");
  writeFileSync(clean, slice.join("\n") + "\n");
  writeFileSync(bad, [...slice.slice(0, 3), poison, ...slice.slice(3)].join("\n") + "\n");
  const ro = { chatTemplateKwargs: null, parseToolArguments: false, osl: true, progress: false };

  const dt = await Deltatok.create(deltatok);
  const serial: ReplayRecord[] = [];
  await replayCorpus(dt, clean, ro, (r) => void serial.push(r), 0);

  const pool = await DeltatokPool.create({ deltatok, workers: 1, resourceLimits: LIMITS, testFaults: { oomMarker: MARKER } });
  const queue = await BatchQueue.create({ pool, intervalMs: 2, batchItems: 4 });
  const pooled: ReplayRecord[] = [];
  let summary;
  try {
    summary = await replayCorpusPooled(queue, pool, bad, ro, (r) => void pooled.push(r), 0);
  } finally {
    await queue.close();
    await pool.close();
  }
  const badRecords = pooled.filter((r) => r.line === 4);
  assert.equal(badRecords.length, 1);
  assert.equal(badRecords[0]?.index, null);
  assert.equal(badRecords[0]?.error?.code, "DT_WORKER_OUT_OF_MEMORY");
  assert.deepEqual(
    pooled.filter((r) => r.line !== 4),
    serial,
    "the other conversations' records, in order, as in process",
  );
  assert.ok(serial.length > 20);
  assert.deepEqual(summary.errors_by_code, { DT_WORKER_OUT_OF_MEMORY: 1 });
  assert.equal(summary.stopped, undefined);
});

test("workers run with the default heap limit unless told otherwise", async () => {
  const resolved = resolveOptions(deltatok, parseDate);
  const dflt = defaultWorkerHeapMb(resolved);
  assert.equal(dflt, 1757, "512 + 2 × 256 MiB + 48 B × 16,000,000 characters");
  const pool = await DeltatokPool.create({ deltatok, workers: 1 });
  const custom = await DeltatokPool.create({ deltatok: { ...deltatok, cacheBytes: 64 * MIB }, workers: 1, resourceLimits: { maxOldGenerationSizeMb: 300 } });
  try {
    assert.equal(pool.options.resourceLimits.maxOldGenerationSizeMb, dflt);
    assert.equal(custom.options.resourceLimits.maxOldGenerationSizeMb, 300);
    // V8's heap_size_limit is the old-generation limit plus the young generation's (tens of MB)
    const a = (await pool.stats()).heap[0]?.limitBytes ?? 0;
    const b = (await custom.stats()).heap[0]?.limitBytes ?? 0;
    assert.ok(a >= dflt * MIB && a < (dflt + 200) * MIB, `default: heap limit ${a / MIB} MB`);
    assert.ok(b >= 300 * MIB && b < 500 * MIB, `custom: heap limit ${b / MIB} MB`);
  } finally {
    await pool.close();
    await custom.close();
  }
});
