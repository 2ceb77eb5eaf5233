/**
 * A pool's workers attach to tokenizer tables built once for them (src/pool/tables.ts): they
 * answer exactly as workers that load their own tokenizer; a replacement worker attaches after
 * the thread that built the tables exited and the main thread dropped its tokenizer and
 * collected it; workers that die (process.exit,
 * out of memory) leave the tables byte-for-byte as they were and the others' answers unchanged;
 * a tokenizer the tables cannot describe is loaded per worker with a warning, never silently.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { DeltatokPool } from "../src/pool/pool.js";
import type { WireItem, WireResult } from "../src/pool/protocol.js";
import { clearTokenizerCache, loadTokenizer, type SharedTokenizer } from "../src/load/index.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const deltatok = { renderer: TEST_RENDERER, date: "2026-11-30" } as const;
const CORPUS = fileURLToPath(new URL("../../data/tau-bench-airline-20.jsonl", import.meta.url));
const lines = readFileSync(CORPUS, "utf8").split("\n").filter((l) => l.trim() !== "");
const items = (): WireItem[] => lines.slice(0, 6).map((json, i) => ({ k: "conversation", json, line: i + 1, replay: { osl: true } }));
const TEXTS = ["hello world", "a".repeat(5_000), "Größe 東京 😀 <|im_start|>user", "9".repeat(400) + " end"];

function gc(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

/** The records a batch answered, without timing fields. */
function answers(rs: WireResult[]): unknown[] {
  return rs.map((r) => (r.ok && "records" in r ? r.records : r.ok && "count" in r ? r.count : r));
}

async function run(pool: DeltatokPool, slot: number): Promise<unknown[]> {
  const textItems: WireItem[] = TEXTS.map((text) => ({ k: "text", text }));
  return [...answers(await pool.runBatch(slot, items())), ...answers(await pool.runBatch(slot, textItems))];
}

/** Every SharedArrayBuffer of the tables. */
function tableBuffers(s: SharedTokenizer): SharedArrayBuffer[] {
  return Object.values(s.encoder.tables).filter((b): b is SharedArrayBuffer => b instanceof SharedArrayBuffer);
}

/** A checksum of every table buffer (FNV-1a over 32-bit words). */
function checksum(s: SharedTokenizer): number {
  let h = 0x811c9dc5;
  for (const b of tableBuffers(s)) {
    const words = new Int32Array(b, 0, b.byteLength >> 2);
    for (let i = 0; i < words.length; i++) h = Math.imul(h ^ (words[i] as number), 0x01000193);
    const bytes = new Uint8Array(b, words.length << 2);
    for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  }
  return h >>> 0;
}

test("workers on shared tables answer as workers that load their own tokenizer", async () => {
  const own = await DeltatokPool.create({ deltatok, workers: 1, shareTables: false });
  let want: unknown[];
  try {
    assert.deepEqual(own.tables, { shared: false, bytes: 0, unshared: "option" });
    assert.equal(own.workers[0]?.tables, "own");
    want = await run(own, 0);
  } finally {
    await own.close();
  }
  const pool = await DeltatokPool.create({ deltatok, workers: 2 });
  try {
    assert.equal(pool.tables.shared, true);
    assert.ok(pool.tables.bytes > 1_000_000);
    assert.deepEqual(pool.workers.map((w) => w.tables), ["shared", "shared"]);
    assert.deepEqual(await run(pool, 0), want);
    assert.deepEqual(await run(pool, 1), want);
  } finally {
    await pool.close();
  }
});

test("a replacement worker attaches after the building thread exited and the main thread dropped and collected its tokenizer", async () => {
  clearTokenizerCache();
  await loadTokenizer("qwen3"); // a main-thread copy, dropped below
  const pool = await DeltatokPool.create({ deltatok, workers: 2 });
  try {
    const want = await run(pool, 0);
    clearTokenizerCache(); // nothing in this thread holds a tokenizer now; the builder thread is gone
    gc();
    gc();
    await pool.killWorker(0);
    // the slot's replacement starts from the pool's workerData: the shared buffers alone
    assert.deepEqual(await run(pool, 0), want);
    assert.deepEqual(await run(pool, 1), want);
  } finally {
    await pool.close();
  }
});

test("workers that exit or run out of memory leave the tables unchanged and the other workers exact", async () => {
  const EXIT = "__exit now__";
  const OOM = "__oom now__";
  const pool = await DeltatokPool.create({ deltatok, workers: 2, testFaults: { exitText: EXIT, oomMarker: OOM }, resourceLimits: { maxOldGenerationSizeMb: 256 } });
  const shared = pool.sharedTokenizer;
  assert.ok(shared !== null);
  const before = checksum(shared);
  try {
    assert.equal(pool.tables.bytes, tableBuffers(shared).reduce((s, b) => s + b.byteLength, 0));
    const want = await run(pool, 1);
    await assert.rejects(pool.runBatch(0, [{ k: "text", text: "x" }, { k: "text", text: EXIT }]), { code: "DT_WORKER_CRASHED" });
    await assert.rejects(pool.runBatch(0, [{ k: "text", text: OOM }]), { code: "DT_WORKER_OUT_OF_MEMORY" });
    assert.equal(checksum(shared), before);
    assert.deepEqual(await run(pool, 1), want);
    assert.deepEqual(await run(pool, 0), want, "the twice-replaced worker");
  } finally {
    await pool.close();
    clearTokenizerCache();
  }
});

test("a tokenizer without a shared form is loaded per worker, with a DELTATOK_TABLES_UNSHARED warning", async () => {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-wordlevel-"));
  try {
    const vocab: Record<string, number> = { "[UNK]": 0, hello: 1, world: 2, "!": 3 };
    writeFileSync(
      join(dir, "tokenizer.json"),
      JSON.stringify({
        version: "1.0",
        added_tokens: [{ id: 4, content: "<s>", special: true, lstrip: false, rstrip: false, single_word: false, normalized: false }],
        normalizer: null,
        pre_tokenizer: { type: "Whitespace" },
        post_processor: null,
        decoder: null,
        model: { type: "WordLevel", vocab, unk_token: "[UNK]" },
      }),
    );
    writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ chat_template: "{% for m in messages %}{{ m.content }} {% endfor %}" }));
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => warnings.push(String(w.code));
    process.on("warning", onWarning);
    const pool = await DeltatokPool.create({ deltatok: { ...deltatok, tokenizer: dir }, workers: 1 });
    try {
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
      assert.ok(warnings.includes("DELTATOK_TABLES_UNSHARED"), warnings.join(","));
      assert.equal(pool.tables.shared, false);
      assert.match(pool.tables.unshared ?? "", /library fallback \(model\.type WordLevel\)/);
      assert.equal(pool.workers[0]?.tables, "own");
      const [r] = await pool.runBatch(0, [{ k: "text", text: "hello world ! nope" }]);
      assert.ok(r?.ok && "count" in r && r.count === 4);
    } finally {
      process.off("warning", onWarning);
      await pool.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("shareTables must be a boolean", async () => {
  await assert.rejects(DeltatokPool.create({ deltatok, workers: 1, shareTables: "yes" as never }), { code: "DT_INVALID_OPTION", path: "options.shareTables" });
});
