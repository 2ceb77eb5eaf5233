/**
 * The pool's Deltatok options are named `deltatok`; `engine`, the old name ("engine" alone means
 * the template engine, DESIGN.md glossary), is still read and warns once per process
 * (`DELTATOK_DEPRECATED`, a DeprecationWarning); giving both is DT_INVALID_OPTION.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { DeltatokPool, resolvePoolOptions } from "../src/pool/pool.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const deltatok = { renderer: TEST_RENDERER, date: "2026-11-30", cacheBytes: 32 * 1024 * 1024 } as const;

/** The next process warning (warnings are emitted on the next tick, in order). */
const nextWarning = () => once(process, "warning").then(([w]) => w as Error & { code?: string });

test("deltatok: the workers' options, no warning", async () => {
  const seen = nextWarning();
  const o = resolvePoolOptions({ deltatok, workers: 1 });
  assert.equal(o.deltatok, deltatok);
  assert.equal(o.resolvedDeltatok.cacheBytes, deltatok.cacheBytes);
  process.emitWarning("sentinel", { code: "TEST_SENTINEL" });
  assert.equal((await seen).code, "TEST_SENTINEL");
});

test("engine: read as deltatok, a DELTATOK_DEPRECATED warning once per process; both: DT_INVALID_OPTION", async () => {
  const first = nextWarning();
  const o = resolvePoolOptions({ engine: deltatok, workers: 1 });
  assert.equal(o.deltatok, deltatok);
  assert.equal(o.resolvedDeltatok.cacheBytes, deltatok.cacheBytes);
  process.emitWarning("sentinel", { code: "TEST_SENTINEL" }); // the first warning is the deprecation, not this
  const w = await first;
  assert.equal(w.code, "DELTATOK_DEPRECATED");
  assert.equal(w.name, "DeprecationWarning");
  // once: the next warning after a second use is the test's own
  const second = nextWarning();
  assert.equal(resolvePoolOptions({ engine: deltatok, workers: 1 }).deltatok, deltatok);
  process.emitWarning("sentinel", { code: "TEST_SENTINEL" });
  assert.equal((await second).code, "TEST_SENTINEL");
  assert.throws(() => resolvePoolOptions({ engine: deltatok, deltatok, workers: 1 }), { code: "DT_INVALID_OPTION", path: "options.engine" });
  await assert.rejects(DeltatokPool.create({ engine: deltatok, deltatok, workers: 1 }), { code: "DT_INVALID_OPTION", path: "options.engine" });
});

test("a pool started with the old name validates and starts its workers with those options", async () => {
  const pool = await DeltatokPool.create({ engine: { ...deltatok, counts_only: true } as never, workers: 1 }).catch((e: unknown) => e);
  // counts_only is not a Deltatok option: the options given under `engine` are validated as `deltatok`'s
  assert.equal((pool as { code?: string }).code, "DT_INVALID_OPTION");
  const ok = await DeltatokPool.create({ engine: deltatok, workers: 1 });
  try {
    assert.equal(ok.options.deltatok, deltatok);
    assert.equal(ok.size, 1);
  } finally {
    await ok.close();
  }
});
