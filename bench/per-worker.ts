/**
 * Per-worker memory (issue 15): what each pool worker costs, with the tokenizer tables shared
 * (SharedArrayBuffers, the default) and with every worker loading its own, and the projection
 * to 64 and 144 workers; then the encode speed of the shared-table tokenizer against the
 * per-thread one, alternating rounds in one process.
 *
 * Memory: each (tables, workers) configuration runs in its own child process (memory benchmarks
 * never share a process): it starts the pool (workers = 0: one in-process Deltatok), waits for a
 * quiet second, and records the process RSS and each worker's V8 heap after startup; then
 * replays the corpus (every conversation's ISL and OSL, round-robin over the workers, as
 * `deltatok replay` does) and records peak RSS (VmHWM) and RSS after. Per worker =
 * (RSS with the most workers − RSS with 1) / (difference in workers): the slope, so the main
 * thread's own share is not counted into it.
 *
 * Speed: the same tokenizer twice in this thread, one loaded from tokenizer.json and one rebuilt
 * from its shared tables, each behind a TokenEncoder (the Deltatok's path); every
 * message text of the corpus encoded by each in alternating rounds; ratio = shared / own seconds.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { DeltatokOptions } from "../src/api/options.js";
import { Deltatok } from "../src/api/deltatok.js";
import { DeltatokPool } from "../src/pool/pool.js";
import type { WireItem } from "../src/pool/protocol.js";
import { loadTokenizer, shareTokenizer, clearTokenizerCache } from "../src/load/index.js";
import { coreFromShared } from "../src/load/shared-core.js";
import { TokenEncoder } from "../src/tokenize/encoder.js";

const MB = 1024 * 1024;
const mb = (b: number) => Math.round((10 * b) / MB) / 10;

function status(field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"));
  return m === null ? NaN : Number(m[1]) * 1024;
}

const quiet = () => new Promise((r) => setTimeout(r, 1000));

export interface PerWorkerChildOptions {
  corpus: string;
  deltatok: DeltatokOptions;
  workers: number;
  share: boolean;
}

/** One configuration, in this (child) process. */
export async function perWorkerChild(o: PerWorkerChildOptions): Promise<Record<string, unknown>> {
  const lines = readFileSync(o.corpus, "utf8").split("\n").filter((l) => l.trim() !== "");
  const items: WireItem[] = lines.map((json, i) => ({ k: "conversation", json, line: i + 1 }));
  const rssBase = status("VmRSS");
  const t0 = performance.now();
  const out: Record<string, unknown> = { workers: o.workers, tables: o.share ? "shared" : "own" };
  let tokens = 0;
  const count = (rs: unknown[]): void => {
    for (const r of rs as Array<{ ok: boolean; records?: Array<{ isl?: number; osl?: number }> }>) for (const rec of r.records ?? []) tokens += (rec.isl ?? 0) + (rec.osl ?? 0);
  };
  if (o.workers === 0) {
    const dt = await Deltatok.create(o.deltatok);
    out.startup_s = (performance.now() - t0) / 1000;
    await quiet();
    (globalThis as { gc?: () => void }).gc?.();
    out.rss_after_start_mb = mb(status("VmRSS"));
    out.heap_used_mb = mb(process.memoryUsage().heapUsed);
    const { runItem } = await import("../src/pool/work.js");
    count(items.map((it) => runItem(dt, it)));
  } else {
    const pool = await DeltatokPool.create({ deltatok: o.deltatok, workers: o.workers, shareTables: o.share });
    out.startup_s = (performance.now() - t0) / 1000;
    out.table_mb = mb(pool.tables.bytes);
    await quiet();
    (globalThis as { gc?: () => void }).gc?.();
    out.rss_after_start_mb = mb(status("VmRSS"));
    out.main_heap_used_mb = mb(process.memoryUsage().heapUsed);
    out.worker_heap_used_mb = (await pool.stats()).heap.map((h) => mb(h?.usedBytes ?? 0));
    out.worker_load_ms = pool.workers.map((w) => Math.round(w.loadMs));
    const t1 = performance.now();
    const per = Array.from({ length: o.workers }, () => [] as WireItem[]);
    items.forEach((it, i) => per[i % o.workers]?.push(it));
    const rs = await Promise.all(per.map(async (list, slot) => {
      const got: unknown[] = [];
      for (let i = 0; i < list.length; i += 8) got.push(...(await pool.runBatch(slot, list.slice(i, i + 8))));
      return got;
    }));
    for (const r of rs) count(r);
    out.replay_s = (performance.now() - t1) / 1000;
    out.worker_heap_after_replay_mb = (await pool.stats()).heap.map((h) => mb(h?.usedBytes ?? 0));
    await pool.close();
  }
  out.tokens = tokens;
  out.rss_start_of_process_mb = mb(rssBase);
  out.rss_peak_mb = mb(status("VmHWM"));
  return out;
}

export interface PerWorkerOptions {
  corpus: string;
  deltatok: DeltatokOptions;
  workerCounts: number[];
  /** Arguments that run this bench file as `--suite per-worker-child` (without --workers / --tables). */
  childArgs: string[];
  rounds: number;
  skipSpeed: boolean;
  skipMemory: boolean;
}

function child(o: PerWorkerOptions, workers: number, share: boolean): Record<string, unknown> {
  const out = execFileSync(process.execPath, ["--expose-gc", ...o.childArgs, "--workers", String(workers), "--tables", share ? "shared" : "own"], {
    encoding: "utf8",
    maxBuffer: 64 * MB,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return JSON.parse(out) as Record<string, unknown>;
}

function slope(rows: Array<Record<string, unknown>>, field: string): { per_worker_mb: number; base_mb: number; from: string } | null {
  const w = rows.filter((r) => (r.workers as number) > 0).sort((a, b) => (a.workers as number) - (b.workers as number));
  if (w.length < 2) return null;
  const lo = w[0] as Record<string, unknown>;
  const hi = w[w.length - 1] as Record<string, unknown>;
  const per = ((hi[field] as number) - (lo[field] as number)) / ((hi.workers as number) - (lo.workers as number));
  // base: the process with no worker's share = RSS(lo) − lo.workers × per
  const base = (lo[field] as number) - (lo.workers as number) * per;
  return { per_worker_mb: Math.round(per * 10) / 10, base_mb: Math.round(base), from: `(${field}[${hi.workers as number}] − ${field}[${lo.workers as number}]) / ${(hi.workers as number) - (lo.workers as number)}` };
}

function projection(s: { per_worker_mb: number; base_mb: number } | null): Record<string, string> | null {
  if (s === null) return null;
  const out: Record<string, string> = {};
  for (const n of [64, 144]) out[n] = `${s.base_mb} + ${n} × ${s.per_worker_mb} = ${Math.round(s.base_mb + n * s.per_worker_mb)} MB`;
  return out;
}

async function speed(o: PerWorkerOptions): Promise<Record<string, unknown>> {
  const lines = readFileSync(o.corpus, "utf8").split("\n").filter((l) => l.trim() !== "");
  const texts: string[] = [];
  for (const l of lines) for (const m of (JSON.parse(l) as { messages: Array<{ content?: unknown }> }).messages) if (typeof m.content === "string" && m.content !== "") texts.push(m.content);
  const spec = o.deltatok.tokenizer ?? "qwen3";
  const own = await loadTokenizer(spec);
  const shared = await shareTokenizer(spec);
  clearTokenizerCache();
  const core = coreFromShared(shared);
  const encoders = {
    own: new TokenEncoder(own),
    shared: new TokenEncoder({ tokenizer: core.tokenizer, tokenizerJson: core.tokenizerJson }),
  };
  const seconds: Record<"own" | "shared", number[]> = { own: [], shared: [] };
  const cold: Record<string, number> = {};
  let tokens = 0;
  for (let round = 0; round < o.rounds; round++) {
    for (const which of round % 2 === 0 ? (["own", "shared"] as const) : (["shared", "own"] as const)) {
      const e = encoders[which];
      const t0 = performance.now();
      let n = 0;
      for (const t of texts) n += e.encodeWhole(t).length;
      const s = (performance.now() - t0) / 1000;
      if (round === 0) cold[which] = s;
      else seconds[which].push(s);
      tokens = n;
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const mOwn = median(seconds.own);
  const mShared = median(seconds.shared);
  return {
    texts: texts.length,
    tokens_per_round: tokens,
    rounds: o.rounds,
    first_round_s: cold,
    warm_rounds_s: seconds,
    median_s: { own: mOwn, shared: mShared },
    ratio_shared_over_own: Math.round((1000 * mShared) / mOwn) / 1000,
    first_round_ratio: Math.round((1000 * (cold.shared as number)) / (cold.own as number)) / 1000,
  };
}

export async function perWorkerBench(o: PerWorkerOptions): Promise<Record<string, unknown>> {
  const rows: Array<Record<string, unknown>> = [];
  if (!o.skipMemory) for (const share of [false, true]) for (const n of o.workerCounts) if (!(share && n === 0)) rows.push(child(o, n, share));
  const summary: Record<string, unknown> = {};
  for (const t of ["own", "shared"]) {
    const r = rows.filter((x) => x.tables === t || (x.workers === 0 && t === "own"));
    const atRest = slope(r, "rss_after_start_mb");
    const peak = slope(r, "rss_peak_mb");
    summary[t] = { at_rest: atRest, at_rest_projection: projection(atRest), peak: peak, peak_projection: projection(peak) };
  }
  return {
    corpus: o.corpus,
    tokenizer: o.deltatok.tokenizer ?? "qwen3",
    rows,
    summary,
    speed: o.skipSpeed ? null : await speed(o),
    file: fileURLToPath(import.meta.url),
  };
}
