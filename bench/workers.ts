/**
 * Worker scaling: throughput of the pool + queue with 1, 2, … workers on
 * - ISL replay of corpora (every request of every conversation, each line sent as raw JSON to
 *   its conversation's worker, exactly as `deltatok replay --workers N --no-osl` does), and
 * - plain-text OSL counting (`text` items of ~1k tokens, made of the corpora's own message
 *   contents).
 * Each run gets a fresh pool. Before timing, every worker is warmed on the same work (as the
 * replay suite warms its Deltatok: JIT before timing), then the conversation caches are cleared,
 * so every run does the same work from cold conversation caches but warm code (and a warm
 * tokenizer word memo). That is the steady state of a long benchmark run; each worker is its own
 * V8 isolate and JIT-compiles on its own, which on 2 CPUs competes with the other worker while
 * code is still warming — `--warm-every 25` (a slice) and `--cold` (none) measure that.
 * Pool startup is reported apart from the timed part. Ratios are against the 1-worker run of
 * the same repeat.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { ResourceLimits } from "node:worker_threads";
import { performance } from "node:perf_hooks";
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions } from "../src/api/options.js";
import { DeltatokPool } from "../src/pool/pool.js";
import { detectCpus } from "../src/pool/cpus.js";
import { replayLine } from "../src/corpus/replay.js";
import { BatchQueue } from "../src/queue/queue.js";
import type { QueueItem, QueueResult } from "../src/queue/types.js";
import type { ReplayItemOptions, WireItem } from "../src/pool/protocol.js";

export interface WorkersBenchOptions {
  corpora: string[];
  deltatok: DeltatokOptions;
  workerCounts: number[];
  /** Runs of each configuration. */
  repeat: number;
  /** Number of ~1k-token texts for the OSL part. */
  texts: number;
  /** Pin worker threads to CPUs. */
  pin: boolean;
  parseToolArguments: boolean;
  /** Also time the in-process baseline (no workers). */
  serial: boolean;
  /** V8 heap limits of each worker. */
  resourceLimits: ResourceLimits;
  /** Time from cold code (no warm-up slice). */
  cold: boolean;
  /**
   * The ISL warm-up is every `warmEvery`-th corpus line (default 1: all of it). With a slice
   * (25), each worker still JIT-compiles during a good part of the timed run (V8's optimizing
   * compiler runs on background threads, per worker).
   */
  warmEvery?: number;
  /**
   * When set, also measure the machine's own 2-process ceiling first (see machineCeiling): the
   * arguments that re-run this bench as `--suite serial-isl` on the same corpora.
   */
  ceiling?: string[];
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** CPU seconds of each thread of this process (/proc/self/task/<tid>/stat), or null off Linux. */
export function threadCpuSeconds(): Map<number, number> | null {
  try {
    const out = new Map<number, number>();
    for (const t of readdirSync("/proc/self/task")) {
      try {
        const st = readFileSync(`/proc/self/task/${t}/stat`, "utf8");
        const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
        out.set(Number(t), (Number(f[11]) + Number(f[12])) / 100); // utime, stime (fields 14, 15)
      } catch {
        // the thread ended meanwhile
      }
    }
    return out;
  } catch {
    return null;
  }
}

/** CPU seconds between two thread snapshots, split into worker threads, the main thread and the rest. */
function splitThreads(a: Map<number, number> | null, b: Map<number, number> | null, workerTids: Set<number>): { workers: number; main: number; background: number } | null {
  if (a === null || b === null) return null;
  let workers = 0;
  let main = 0;
  let background = 0;
  for (const [tid, v] of b) {
    const d = v - (a.get(tid) ?? 0);
    if (tid === process.pid) main += d;
    else if (workerTids.has(tid)) workers += d;
    else background += d;
  }
  return { workers: r3(workers), main: r3(main), background: r3(background) };
}

/** Busy CPU seconds of the whole machine so far (/proc/stat, USER_HZ = 100), or null. */
export function machineBusySeconds(): number | null {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
    return (user + nice + system + irq + softirq + steal) / 100;
  } catch {
    return null;
  }
}

function corpusLines(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) for (const l of readFileSync(p, "utf8").split("\n")) if (l.trim() !== "") out.push(l);
  return out;
}

/** ~1k-token texts (3,200 characters: ~1,000 Qwen3 tokens on this material) cut from the corpora's distinct message contents. */
export function textsFromCorpora(lines: string[], n: number, chars = 3200): string[] {
  const seen = new Set<string>();
  const pool: string[] = [];
  for (const l of lines) {
    const c = JSON.parse(l) as { messages?: Array<{ content?: unknown }> };
    for (const m of c.messages ?? []) {
      if (typeof m.content === "string" && m.content.length > 40 && !seen.has(m.content)) {
        seen.add(m.content);
        pool.push(m.content);
      }
    }
  }
  const out: string[] = [];
  let buf = "";
  for (let i = 0; out.length < n; i++) {
    buf += (buf === "" ? "" : "\n\n") + (pool[i % pool.length] as string);
    while (buf.length >= chars && out.length < n) {
      out.push(buf.slice(0, chars));
      buf = buf.slice(chars);
    }
  }
  return out;
}

interface RunResult {
  workers: number;
  seconds: number;
  items: number;
  tokens: number;
  errors: number;
  /** Main-thread event-loop utilization during the timed part. */
  main_elu: number;
  /** Process CPU seconds (all threads) during the timed part. */
  cpu_s: number;
  /** CPU seconds used by OTHER processes on the machine meanwhile (noise; null off Linux). */
  other_cpu_s: number | null;
  /** This process's CPU by thread: worker threads, main thread, the rest (V8 GC/JIT helpers, libuv). */
  threads_cpu_s: { workers: number; main: number; background: number } | null;
  startup_s: number;
}

async function timeQueue(
  n: number,
  o: WorkersBenchOptions,
  items: QueueItem[],
  queueOpts: { batchItems: number; batchChars: number },
  tokensOf: (r: QueueResult) => { tokens: number; items: number },
  warm: WireItem[],
): Promise<RunResult> {
  const t0 = performance.now();
  const pool = await DeltatokPool.create({ deltatok: o.deltatok, workers: n, pin: o.pin, resourceLimits: o.resourceLimits });
  const startup = (performance.now() - t0) / 1000;
  if (!o.cold) {
    for (let slot = 0; slot < n; slot++) await pool.runBatch(slot, warm);
    await pool.clearCache();
  }
  const queue = await BatchQueue.create({ pool, intervalMs: 2, maxInFlightPerWorker: 2, ...queueOpts });
  let tokens = 0;
  let count = 0;
  let errors = 0;
  const onResult = (r: QueueResult) => {
    if (!r.ok) errors++;
    const t = tokensOf(r);
    tokens += t.tokens;
    count += t.items;
  };
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const busy0 = machineBusySeconds();
  const th0 = threadCpuSeconds();
  const t1 = performance.now();
  for (const it of items) queue.enqueue(it, onResult);
  const d = await queue.drain();
  const seconds = (performance.now() - t1) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const busy1 = machineBusySeconds();
  const th1 = threadCpuSeconds();
  const workerTids = new Set(pool.workers.map((w) => w.tid).filter((t): t is number => t !== null));
  const elu = performance.eventLoopUtilization(elu0);
  if (d.pending !== 0) throw new Error(`drain left ${d.pending} pending`);
  await queue.close();
  await pool.close();
  return { workers: n, seconds: r3(seconds), items: count, tokens, errors, main_elu: r3(elu.utilization), cpu_s: r3((cpu.user + cpu.system) / 1e6), other_cpu_s: busy0 === null || busy1 === null ? null : r3(Math.max(0, busy1 - busy0 - (cpu.user + cpu.system) / 1e6)), threads_cpu_s: splitThreads(th0, th1, workerTids), startup_s: r3(startup) };
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : r3(((s[m - 1] as number) + (s[m] as number)) / 2);
}

function medians(r: Record<string, number[]>): Record<string, number> {
  return Object.fromEntries(Object.entries(r).map(([k, xs]) => [k, median(xs)]));
}

function ratios(runs: RunResult[], rate: (r: RunResult) => number): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  const ones = runs.filter((r) => r.workers === 1);
  for (const r of runs) {
    if (r.workers <= 1) continue;
    const i = runs.filter((x) => x.workers === r.workers).indexOf(r);
    const base = ones[i] ?? ones[0];
    if (base === undefined) continue;
    (out[`${r.workers}_over_1`] ??= []).push(r3(rate(r) / rate(base)));
  }
  return out;
}

/** Times the in-process ISL replay of every line (warm code, the Deltatok's caches as given). */
function timeSerialIsl(dt: Deltatok, lines: string[], replay: ReplayItemOptions): { seconds: number; requests: number; tokens: number } {
  let requests = 0;
  let tokens = 0;
  const t0 = performance.now();
  for (let i = 0; i < lines.length; i++) {
    for (const r of replayLine(dt, lines[i] as string, i + 1, replay).records) {
      requests++;
      tokens += r.isl ?? 0;
    }
  }
  return { seconds: (performance.now() - t0) / 1000, requests, tokens };
}

/**
 * The child side of the ceiling measurement: warm on the whole ISL work, clear the caches, time
 * one more pass in this process (no pool), print `{"seconds": …}`.
 */
export async function serialIslChild(corpora: string[], deltatok: DeltatokOptions, parseToolArguments: boolean): Promise<Record<string, unknown>> {
  const lines = corpusLines(corpora);
  const replay = { osl: false, parseToolArguments, chatTemplateKwargs: null };
  const dt = await Deltatok.create(deltatok);
  timeSerialIsl(dt, lines, replay);
  dt.clearCache();
  const r = timeSerialIsl(dt, lines, replay);
  return { seconds: r3(r.seconds), requests: r.requests, tokens: r.tokens };
}

/**
 * What this machine gives two copies of the ISL work without any pool: the serial replay alone
 * in one child process, then in two child processes at once (`args` re-run this bench as
 * `--suite serial-isl`). `throughput_2_over_1` = 2 × alone / mean(together), the scaling two
 * independent processes reach; a pool cannot beat the hardware it runs on.
 */
async function machineCeiling(args: string[], repeat: number): Promise<Record<string, unknown>> {
  const run = (): Promise<number> =>
    new Promise((resolve, reject) => {
      execFile(process.execPath, args, { maxBuffer: 1 << 20 }, (err, stdout) => {
        if (err !== null) return reject(err);
        resolve((JSON.parse(stdout) as { seconds: number }).seconds);
      });
    });
  const runs: Array<{ alone_s: number; together_s: [number, number]; throughput_2_over_1: number }> = [];
  for (let i = 0; i < repeat; i++) {
    const alone = await run();
    const together = (await Promise.all([run(), run()])) as [number, number];
    runs.push({ alone_s: alone, together_s: together, throughput_2_over_1: r3((2 * alone) / ((together[0] + together[1]) / 2)) });
  }
  return { what: "in-process ISL replay (warm), one child process alone vs two at once; no pool", runs, median: median(runs.map((r) => r.throughput_2_over_1)) };
}

export async function workersBench(o: WorkersBenchOptions): Promise<Record<string, unknown>> {
  const lines = corpusLines(o.corpora);
  const texts = textsFromCorpora(lines, o.texts);
  const replay = { osl: false, parseToolArguments: o.parseToolArguments, chatTemplateKwargs: null };
  const convItems: QueueItem[] = lines.map((json, i) => {
    const id = (JSON.parse(json) as { id?: unknown }).id;
    return { kind: "conversation", json, line: i + 1, replay, conversationId: String(id ?? i) };
  });
  const textItems: QueueItem[] = texts.map((text) => ({ kind: "text", text }));
  const islOf = (r: QueueResult) => {
    if (!r.ok || r.kind !== "conversation") return { tokens: 0, items: 0 };
    let t = 0;
    for (const rec of r.records) t += rec.isl ?? 0;
    return { tokens: t, items: r.records.length };
  };
  // warm-up: every warmEvery-th line (default all), 100 texts (the same for every worker)
  const warmEvery = o.warmEvery ?? 1;
  const warmIsl: WireItem[] = lines.filter((_l, i) => i % warmEvery === 0).map((json, i) => ({ k: "conversation", json, line: i + 1, replay }));
  const warmText: WireItem[] = texts.slice(0, 100).map((text) => ({ k: "text", text }));
  const textOf = (r: QueueResult) => (r.ok && r.kind === "text" ? { tokens: r.count, items: 1 } : { tokens: 0, items: 0 });

  let serial: Record<string, unknown> | null = null;
  if (o.serial) {
    const dt = await Deltatok.create(o.deltatok);
    if (!o.cold) {
      for (const w of warmIsl) if (w.k === "conversation") replayLine(dt, w.json, w.line, replay);
      for (const t of texts.slice(0, 100)) dt.countText(t);
      dt.clearCache();
    }
    const { seconds: islS, requests: req, tokens: tok } = timeSerialIsl(dt, lines, replay);
    let ttok = 0;
    const t1 = performance.now();
    for (const t of texts) ttok += dt.countText(t);
    const txtS = (performance.now() - t1) / 1000;
    serial = {
      isl: { seconds: r3(islS), requests: req, tokens: tok, requests_per_s: Math.round(req / islS) },
      osl_text: { seconds: r3(txtS), texts: texts.length, tokens: ttok, texts_per_s: Math.round(texts.length / txtS), tokens_per_s: Math.round(ttok / txtS) },
    };
  }

  const ceiling = o.ceiling === undefined ? null : await machineCeiling(o.ceiling, o.repeat);

  const isl: RunResult[] = [];
  const txt: RunResult[] = [];
  for (let rep = 0; rep < o.repeat; rep++) {
    for (const n of o.workerCounts) {
      isl.push(await timeQueue(n, o, convItems, { batchItems: 4, batchChars: 1 << 20 }, islOf, warmIsl));
      txt.push(await timeQueue(n, o, textItems, { batchItems: 64, batchChars: 1 << 20 }, textOf, warmText));
    }
  }
  const tokSets = new Set(isl.map((r) => r.tokens));
  if (tokSets.size !== 1) throw new Error(`ISL totals differ between runs: ${[...tokSets].join(", ")}`);
  return {
    corpora: o.corpora,
    conversations: lines.length,
    texts: { count: texts.length, chars_each: 3200 },
    cpus: detectCpus(),
    pin: o.pin,
    warm_up: o.cold ? null : { conversations: warmIsl.length, every: warmEvery, texts: warmText.length, what: "run on every worker before timing, then conversation caches cleared" },
    resource_limits: o.resourceLimits,
    serial,
    ceiling,
    isl: {
      runs: isl.map((r) => ({ ...r, requests_per_s: Math.round(r.items / r.seconds) })),
      ratios: ratios(isl, (r) => r.items / r.seconds),
      median: medians(ratios(isl, (r) => r.items / r.seconds)),
    },
    osl_text: {
      runs: txt.map((r) => ({ ...r, texts_per_s: Math.round(r.items / r.seconds), tokens_per_s: Math.round(r.tokens / r.seconds) })),
      ratios: ratios(txt, (r) => r.items / r.seconds),
      median: medians(ratios(txt, (r) => r.items / r.seconds)),
    },
  };
}
