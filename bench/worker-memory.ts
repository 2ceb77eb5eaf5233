/**
 * Worker memory: which V8 heap limit (`maxOldGenerationSizeMb`) a worker needs for the largest
 * legal work, the measurement behind `defaultWorkerHeapMb` (src/pool/pool.ts).
 *
 * For each limit, a fresh one-worker pool runs one workload:
 * - `big`: one prompt of `maxPromptChars` − 10,000 characters of real message text (ISL with ids,
 *   then the same text as plain text): the largest request the Deltatok accepts;
 * - `fill`: the corpus again and again, each round with a different system prompt (so nothing
 *   hits), until the cache holds ≥ 95% of `cacheBytes`;
 * - `fill+big`: both, in that order: a full cache and then the largest request.
 * Reports whether the worker survived (or died of its limit: DT_WORKER_OUT_OF_MEMORY) and its
 * heap after each step. Workers are separate isolates, so one process can run them all.
 */
import { readFileSync } from "node:fs";
import type { DeltatokOptions } from "../src/api/options.js";
import { resolveOptions } from "../src/api/options.js";
import { parseDate } from "../src/load/date.js";
import { DeltatokPool, defaultWorkerHeapMb } from "../src/pool/pool.js";
import type { WireItem } from "../src/pool/protocol.js";

export interface WorkerMemoryOptions {
  corpus: string;
  deltatok: DeltatokOptions;
  /** Old-generation limits in MB; 0 means the default (no resourceLimits given). */
  limits: number[];
  workloads: string[];
}

const mb = (b: number) => Math.round(b / (1024 * 1024));

function bigText(lines: string[], chars: number): string {
  let text = "";
  for (const l of lines) {
    for (const m of (JSON.parse(l) as { messages: Array<{ content?: unknown }> }).messages) if (typeof m.content === "string") text += m.content + "\n";
    if (text.length > 4_000_000) break;
  }
  while (text.length < chars) text += text;
  return text.slice(0, chars);
}

async function heap(pool: DeltatokPool): Promise<{ heap_used_mb: number; heap_total_mb: number; bytes_held_mb: number }> {
  const s = await pool.stats();
  const h = s.heap[0];
  return { heap_used_mb: mb(h?.usedBytes ?? 0), heap_total_mb: mb(h?.totalBytes ?? 0), bytes_held_mb: mb(s.total.bytesHeld) };
}

export async function workerMemoryBench(o: WorkerMemoryOptions): Promise<Record<string, unknown>> {
  const resolved = resolveOptions(o.deltatok, parseDate);
  const lines = readFileSync(o.corpus, "utf8").split("\n").filter((l) => l.trim() !== "");
  const text = bigText(lines, resolved.maxPromptChars - 10_000);
  const runs: Array<Record<string, unknown>> = [];
  for (const workload of o.workloads) {
    for (const limit of o.limits) {
      const t0 = performance.now();
      const pool = await DeltatokPool.create({ deltatok: o.deltatok, workers: 1, ...(limit > 0 ? { resourceLimits: { maxOldGenerationSizeMb: limit } } : {}) });
      const run: Record<string, unknown> = { workload, limit_mb: pool.options.resourceLimits.maxOldGenerationSizeMb, after_load: await heap(pool) };
      try {
        if (workload.includes("fill")) {
          let round = 0;
          for (; round < 256; round++) {
            for (let i = 0; i < lines.length; i += 8) {
              const items: WireItem[] = lines.slice(i, i + 8).map((l, j) => {
                const c = JSON.parse(l) as { id: string; messages: Array<{ role?: string; content?: unknown }> };
                c.id = `${c.id}-r${round}`;
                for (const m of c.messages) if (m.role === "system" && typeof m.content === "string") m.content = `[run ${round}] ${m.content}`;
                return { k: "conversation", json: JSON.stringify(c), line: i + j + 1, replay: { osl: false } };
              });
              await pool.runBatch(0, items);
            }
            if ((await pool.stats()).total.bytesHeld >= 0.95 * resolved.cacheBytes) break;
          }
          run.fill_rounds = round + 1;
          run.after_fill = await heap(pool);
        }
        if (workload.includes("big")) {
          const r = await pool.runBatch(0, [
            { k: "prompt", json: JSON.stringify({ messages: [{ role: "user", content: text }] }), ids: true },
            { k: "text", text },
          ]);
          run.big = r.map((x) => (x.ok && "count" in x ? { count: x.count } : x));
          run.after_big = await heap(pool);
        }
        run.survived = true;
      } catch (e) {
        run.survived = false;
        run.error = (e as { code?: string }).code ?? String(e);
      }
      run.seconds = Math.round((performance.now() - t0) / 100) / 10;
      await pool.close();
      process.stderr.write(`worker-memory: ${JSON.stringify(run)}\n`);
      runs.push(run);
    }
  }
  return {
    corpus: o.corpus,
    max_prompt_chars: resolved.maxPromptChars,
    cache_bytes: resolved.cacheBytes,
    default_limit_mb: defaultWorkerHeapMb(resolved),
    runs,
  };
}
