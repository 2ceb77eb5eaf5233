/**
 * Pool size and startup: at most 4 × the usable CPUs workers (DT_INVALID_OPTION naming the
 * option, before any thread starts; `--workers` above it is a usage error, exit 2, at once);
 * one warning above the CPU count; unknown pool and queue options refused by name; startup
 * reports each worker as it becomes ready and can be aborted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DeltatokError } from "../src/errors.js";
import { DeltatokPool, checkWorkers, maxWorkers, WORKERS_PER_CPU, type StartupProgress } from "../src/pool/pool.js";
import { detectCpus, type CpuInfo } from "../src/pool/cpus.js";
import { BatchQueue } from "../src/queue/queue.js";
import { runCli } from "./helpers/cli.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const deltatok = { renderer: TEST_RENDERER, date: "2026-11-30" } as const;

function invalid(path: string) {
  return (e: unknown) => {
    assert.ok(e instanceof DeltatokError, String(e));
    assert.equal(e.code, "DT_INVALID_OPTION");
    assert.equal(e.path, path);
    return true;
  };
}

test("the maximum is 4 × the usable CPUs; above it create rejects naming the option", async () => {
  const cpus = detectCpus();
  assert.equal(maxWorkers(cpus), WORKERS_PER_CPU * cpus.count);
  assert.equal(WORKERS_PER_CPU, 4);
  await assert.rejects(DeltatokPool.create({ deltatok, workers: maxWorkers() + 1 }), invalid("options.workers"));
  await assert.rejects(DeltatokPool.create({ deltatok, workers: 10_000 }), invalid("options.workers"));
  await assert.rejects(BatchQueue.create({ poolOptions: { deltatok, workers: 10_000 } }), invalid("options.poolOptions.workers"));
  await assert.rejects(BatchQueue.create({ poolOptions: { deltatok, workers: 0 } }), invalid("options.poolOptions.workers"));
});

test("unknown or malformed pool and queue options are refused by name", async () => {
  await assert.rejects(DeltatokPool.create({ deltatok, workers: 1, wrokers: 2 } as never), invalid("options.wrokers"));
  await assert.rejects(DeltatokPool.create({ deltatok, workers: 1, resourceLimits: { maxOldGenerationSizeMb: -1 } }), invalid("options.resourceLimits.maxOldGenerationSizeMb"));
  await assert.rejects(DeltatokPool.create({ deltatok, workers: 1, resourceLimits: { maxOldGenrationSizeMb: 512 } as never }), invalid("options.resourceLimits.maxOldGenrationSizeMb"));
  await assert.rejects(BatchQueue.create({ poolOptions: { deltatok, workers: 1 }, intervalMS: 5 } as never), invalid("options.intervalMS"));
});

test("above the CPU count: allowed, with one warning per process (DELTATOK_WORKERS_OVER_CPUS)", () => {
  const one: CpuInfo = { count: 1, affinity: [0], affinityCount: 1, quota: null, quotaSource: null };
  const original = process.emitWarning;
  // process.emitWarning delivers on the next tick; count the calls themselves
  let calls = 0;
  process.emitWarning = ((...args: Parameters<typeof process.emitWarning>) => {
    calls++;
    assert.equal((args[1] as { code?: string }).code, "DELTATOK_WORKERS_OVER_CPUS");
  }) as typeof process.emitWarning;
  try {
    assert.equal(checkWorkers(1, one), 1);
    assert.equal(calls, 0, "at the CPU count: no warning");
    assert.equal(checkWorkers(3, one), 3);
    assert.equal(checkWorkers(4, one), 4);
    assert.equal(calls, 1, "warned once");
    assert.throws(() => checkWorkers(5, one), invalid("options.workers"));
  } finally {
    process.emitWarning = original;
  }
});

test("startup reports each worker as it becomes ready", async () => {
  const seen: StartupProgress[] = [];
  const pool = await DeltatokPool.create({ deltatok, workers: 2, onWorkerReady: (p) => seen.push(p) });
  try {
    assert.deepEqual(
      seen.map((p) => [p.ready, p.workers]),
      [
        [1, 2],
        [2, 2],
      ],
    );
    assert.deepEqual(new Set(seen.map((p) => p.slot)), new Set([0, 1]));
  } finally {
    await pool.close();
  }
});

test("an aborted startup ends create with DT_CLOSED", async () => {
  const ac = new AbortController();
  const p = DeltatokPool.create({ deltatok, workers: 1, signal: ac.signal });
  ac.abort();
  await assert.rejects(p, { code: "DT_CLOSED" });
  const pre = new AbortController();
  pre.abort();
  await assert.rejects(DeltatokPool.create({ deltatok, workers: 1, signal: pre.signal }), { code: "DT_CLOSED" });
});

test("deltatok replay --workers above the maximum is a usage error at once, with nothing written", async () => {
  for (const n of ["10000", String(maxWorkers() + 1)]) {
    const r = await runCli(["replay", "no-such-corpus.jsonl", "--workers", n]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /--workers must be at most/);
  }
  const serve = await runCli(["serve", "--workers", "10000"]);
  assert.equal(serve.code, 2, serve.stderr);
});
