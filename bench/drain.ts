/**
 * Drain benchmark (run it in its own process: RSS is per process, workers included).
 *
 * Enqueues N mixed items with the live lane off (everything deferred to the drain, the worst
 * case for the queue), then drains: half are ~1k-token texts (OSL), half are ISL prompts of
 * the corpora's requests, cycling (each with its conversation id, so turns meet their cache).
 * Texts and message arrays are shared between items (a harness's own copies are the harness's
 * memory, not the queue's). Reports the final state, pending, items/s, peak RSS, and RSS sampled
 * every second against the number of items already answered, with the fitted slope.
 *
 * `kill`: a third of the way through, one worker thread is terminated; every item must still
 * be answered exactly once (lost = answered 0 times, duplicated = answered more than once).
 */
import { readFileSync } from "node:fs";
import type { ResourceLimits } from "node:worker_threads";
import { performance } from "node:perf_hooks";
import type { DeltatokOptions } from "../src/api/options.js";
import { pythonJsonParser } from "../src/api/json.js";
import { assistantIndices, parseCorpusLine } from "../src/corpus/corpus.js";
import { idLabel } from "../src/corpus/id.js";
import { DeltatokPool } from "../src/pool/pool.js";
import { BatchQueue } from "../src/queue/queue.js";
import type { DrainProgress, QueueItem, QueueResult } from "../src/queue/types.js";
import { textsFromCorpora } from "./workers.js";

export interface DrainBenchOptions {
  corpora: string[];
  deltatok: DeltatokOptions;
  items: number;
  workers: number | undefined;
  kill: boolean;
  pin: boolean;
  parseToolArguments: boolean;
  resourceLimits: ResourceLimits;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const mb = (b: number) => Math.round((b / (1024 * 1024)) * 10) / 10;

interface Sample {
  t_s: number;
  answered: number;
  rss_mb: number;
  heap_used_mb: number;
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    den += ((xs[i] as number) - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** RSS (mean and max) while the answered count was in each tenth of N. */
function deciles(samples: Sample[], n: number): Array<{ answered_pct: string; samples: number; rss_mean_mb: number; rss_max_mb: number }> {
  const out = [];
  for (let d = 0; d < 10; d++) {
    const xs = samples.filter((s) => s.answered >= (d * n) / 10 && (s.answered < ((d + 1) * n) / 10 || (d === 9 && s.answered <= n)));
    const rss = xs.map((s) => s.rss_mb);
    out.push({
      answered_pct: `${d * 10}-${d * 10 + 10}`,
      samples: xs.length,
      rss_mean_mb: xs.length === 0 ? 0 : Math.round(rss.reduce((a, b) => a + b, 0) / xs.length),
      rss_max_mb: xs.length === 0 ? 0 : Math.round(Math.max(...rss)),
    });
  }
  return out;
}

export async function drainBench(o: DrainBenchOptions): Promise<Record<string, unknown>> {
  const lines: string[] = [];
  for (const p of o.corpora) for (const l of readFileSync(p, "utf8").split("\n")) if (l.trim() !== "") lines.push(l);
  const prompts: QueueItem[] = [];
  for (let i = 0; i < lines.length; i++) {
    const c = parseCorpusLine(lines[i] as string, i + 1, pythonJsonParser);
    if ("error" in c) continue;
    const options = { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs, parse_tool_arguments: o.parseToolArguments };
    for (const k of assistantIndices(c.messages)) prompts.push({ kind: "prompt", messages: c.messages.slice(0, k), options, conversationId: idLabel(c.id) });
  }
  const texts = textsFromCorpora(lines, 2000).map((text): QueueItem => ({ kind: "text", text }));
  const N = o.items;

  const t0 = performance.now();
  const pool = await DeltatokPool.create({ deltatok: o.deltatok, pin: o.pin, resourceLimits: o.resourceLimits, ...(o.workers === undefined ? {} : { workers: o.workers }) });
  const startup = (performance.now() - t0) / 1000;
  const queue = await BatchQueue.create({ pool, intervalMs: 0, maxItems: N, progressIntervalMs: 2000 });

  const answered = new Uint8Array(N);
  let ok = 0;
  let itemErrors = 0;
  let crashed = 0;
  let islTokens = 0;
  let textTokens = 0;
  let answeredCount = 0;
  const codes: Record<string, number> = {};
  const onResultFor = (i: number) => (r: QueueResult) => {
    answered[i] = (answered[i] as number) + 1;
    answeredCount++;
    if (r.ok) {
      ok++;
      if (r.kind === "prompt") islTokens += r.count;
      else if (r.kind === "text") textTokens += r.count;
    } else {
      codes[r.error.code] = (codes[r.error.code] ?? 0) + 1;
      if (r.error.code === "DT_WORKER_CRASHED") crashed++;
      else itemErrors++;
    }
  };

  const rss0 = process.memoryUsage().rss;
  const tq = performance.now();
  for (let i = 0; i < N; i++) {
    const item = i % 2 === 0 ? (texts[(i >> 1) % texts.length] as QueueItem) : (prompts[(i >> 1) % prompts.length] as QueueItem);
    queue.enqueue(item, onResultFor(i));
  }
  const enqueueS = (performance.now() - tq) / 1000;
  const rssQueued = process.memoryUsage().rss;

  const samples: Sample[] = [];
  const td = performance.now();
  const sample = () => {
    const m = process.memoryUsage();
    samples.push({ t_s: r3((performance.now() - td) / 1000), answered: answeredCount, rss_mb: mb(m.rss), heap_used_mb: mb(m.heapUsed) });
  };
  sample();
  const timer = setInterval(sample, 1000);
  const progress: DrainProgress[] = [];
  let killedAt: number | null = null;
  queue.on("progress", (p: DrainProgress) => {
    progress.push(p);
    process.stderr.write(`drain: ${p.done} done, ${p.pending} pending, ${p.rate.toFixed(0)}/s, ${mb(process.memoryUsage().rss)} MB RSS\n`);
  });
  let killP: Promise<void> | null = null;
  if (o.kill) {
    const check = setInterval(() => {
      if (killedAt === null && answeredCount >= N / 3) {
        killedAt = answeredCount;
        killP = pool.killWorker(0);
        clearInterval(check);
      }
    }, 20);
    check.unref();
  }
  const final = await queue.drain();
  const drainS = (performance.now() - td) / 1000;
  clearInterval(timer);
  sample();
  if (killP !== null) await killP;
  const qstats = queue.stats();
  const pstats = await pool.stats();
  await queue.close();
  await pool.close();

  let lost = 0;
  let duplicated = 0;
  for (let i = 0; i < N; i++) {
    if (answered[i] === 0) lost++;
    else if ((answered[i] as number) > 1) duplicated++;
  }
  // RSS against items answered, after the first 10% (JIT, caches filling).
  const steady = samples.filter((s) => s.answered >= N / 10);
  const perHundredK = slope(
    steady.map((s) => s.answered),
    steady.map((s) => s.rss_mb),
  );
  return {
    corpora: o.corpora,
    items: N,
    mix: { texts: Math.ceil(N / 2), prompts: Math.floor(N / 2), distinct_texts: texts.length, distinct_prompts: prompts.length },
    workers: pool.size,
    startup_s: r3(startup),
    enqueue_s: r3(enqueueS),
    drain: { ...final, elapsedMs: Math.round(final.elapsedMs) },
    drain_s: r3(drainS),
    items_per_s: Math.round(N / drainS),
    answers: { ok, item_errors: itemErrors, crashed, by_code: codes, lost, duplicated },
    kill: o.kill ? { killed_worker: 0, at_answered: killedAt, batch_failures: qstats.batchFailures, retried: qstats.retried } : null,
    tokens: { isl: islTokens, text: textTokens },
    rss: {
      before_enqueue_mb: mb(rss0),
      after_enqueue_mb: mb(rssQueued),
      peak_mb: Math.round(process.resourceUsage().maxRSS / 1024),
      slope_mb_per_100k_answered: r3(perHundredK * 100_000),
      by_decile: deciles(samples, N),
      samples,
    },
    queue: qstats,
    worker_heaps_mb: pstats.heap.map((h) => (h === null ? null : { used: mb(h.usedBytes), total: mb(h.totalBytes) })),
    worker_cache_mb: pstats.workers.map((w) => (w === null ? null : mb(w.bytesHeld))),
    resource_limits: o.resourceLimits,
  };
}
