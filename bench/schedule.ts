/**
 * `--suite schedule`: the scheduling simulation of issue 15. First the per-conversation cost of a
 * real replay is measured (this process, one thread, one engine for every corpus as one worker
 * would hold it: CPU ms of `replayConversation`, the code a worker runs, per corpus line), or read
 * back from `--costs FILE` when that file exists (it is written after measuring). Then those
 * costs are replayed through the pool's own scheduling decision (src/pool/schedule.ts,
 * LongestFirst, deciding from the line's bytes as the pool does, while the simulated workers take
 * the measured milliseconds) for N = 2 … 144 workers, and the predicted makespan is set against
 * the lower bound max(total / N, longest). For comparison the same simulation with corpus order
 * (what a streaming reader does), and a second lower bound where LPT's own arithmetic allows
 * more: with more jobs than workers, two of the N + 1 costliest share a worker, so no schedule
 * beats p_N + p_{N+1} (costs sorted down).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions } from "../src/api/options.js";
import { pythonJsonParser } from "../src/api/json.js";
import { corpusLines, openCorpus, parseCorpusLine } from "../src/corpus/corpus.js";
import { replayConversation } from "../src/pool/work.js";
import { LongestFirst } from "../src/pool/schedule.js";

export interface ScheduleBenchOptions {
  corpora: string[];
  engine: DeltatokOptions;
  /** Read costs from here when it exists; write them here after measuring. */
  costsFile: string | undefined;
  workers: number[];
  depth: number;
}

interface Cost {
  corpus: string;
  line: number;
  bytes: number;
  cpu_ms: number;
}

async function measure(corpora: string[], engine: DeltatokOptions): Promise<Cost[]> {
  const dt = await Deltatok.create(engine);
  const out: Cost[] = [];
  for (const path of corpora) {
    const file = await openCorpus(path);
    for await (const l of corpusLines(file)) {
      if (l.error !== undefined || l.text.trim() === "") continue;
      const c = parseCorpusLine(l.text, l.line, pythonJsonParser);
      if ("error" in c) continue;
      const u0 = process.cpuUsage();
      replayConversation(dt, c, { chatTemplateKwargs: null, parseToolArguments: false, osl: true });
      const u = process.cpuUsage(u0);
      out.push({ corpus: basename(path), line: l.line, bytes: Buffer.byteLength(l.text), cpu_ms: (u.user + u.system) / 1000 });
      process.stderr.write(`schedule: measured ${out.length} conversations\r`);
    }
  }
  process.stderr.write("\n");
  return out;
}

/**
 * Simulates `workers` workers running the jobs as LongestFirst hands them out (estimates:
 * `estimate`; true durations: `ms`). Each worker runs its jobs in the order given, one at a
 * time. `corpusOrder`: the scheduler always takes the earliest job (a streaming reader).
 */
export function simulate(estimate: readonly number[], ms: readonly number[], workers: number, depth: number, corpusOrder = false, tail?: number): number {
  const s = new LongestFirst(estimate, tail === undefined ? { workers, depth } : { workers, depth, tail });
  const queues: number[][] = Array.from({ length: workers }, () => []);
  const endOf = new Float64Array(workers).fill(-1); // end of the running job, -1: none running
  let now = 0;
  let makespan = 0;
  const dispatch = () => {
    for (let a = s.next(corpusOrder); a !== null; a = s.next(corpusOrder)) queues[a.worker]?.push(a.job);
    for (let w = 0; w < workers; w++) {
      const q = queues[w] as number[];
      if (endOf[w] === -1 && q.length > 0) endOf[w] = now + (ms[q[0] as number] as number);
    }
  };
  dispatch();
  for (;;) {
    let w = -1;
    for (let i = 0; i < workers; i++) if (endOf[i] !== -1 && (w < 0 || (endOf[i] as number) < (endOf[w] as number))) w = i;
    if (w < 0) break;
    now = endOf[w] as number;
    makespan = now;
    const q = queues[w] as number[];
    const job = q.shift() as number;
    endOf[w] = -1;
    s.done(job, w);
    dispatch();
  }
  return makespan;
}

function bounds(ms: readonly number[], n: number): { lower: number; lpt_lower: number } {
  const total = ms.reduce((a, b) => a + b, 0);
  const sorted = [...ms].sort((a, b) => b - a);
  const lower = Math.max(total / n, sorted[0] ?? 0);
  const pair = sorted.length > n ? (sorted[n - 1] as number) + (sorted[n] as number) : 0;
  return { lower, lpt_lower: Math.max(lower, pair) };
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export async function scheduleBench(o: ScheduleBenchOptions): Promise<Record<string, unknown>> {
  let costs: Cost[];
  let source: string;
  if (o.costsFile !== undefined && existsSync(o.costsFile)) {
    costs = JSON.parse(readFileSync(o.costsFile, "utf8")) as Cost[];
    source = `read from ${o.costsFile}`;
  } else {
    costs = await measure(o.corpora, o.engine);
    source = "measured in this run (CPU ms of replayConversation per line, one thread)";
    if (o.costsFile !== undefined) writeFileSync(o.costsFile, JSON.stringify(costs) + "\n");
  }
  const groups = new Map<string, Cost[]>();
  for (const c of costs) groups.set(c.corpus, [...(groups.get(c.corpus) ?? []), c]);
  groups.set("all corpora together", costs);
  const results: Array<Record<string, unknown>> = [];
  let worst = 0;
  let worstLpt = 0;
  for (const [name, cs] of groups) {
    const est = cs.map((c) => c.bytes);
    const ms = cs.map((c) => c.cpu_ms);
    const total = ms.reduce((a, b) => a + b, 0);
    const rows = o.workers.map((n) => {
      const b = bounds(ms, n);
      const lpt = simulate(est, ms, n, o.depth);
      const fifo = simulate(est, ms, n, o.depth, true);
      // the same decision code with perfect estimates (the measured ms): what the estimate costs
      const oracle = simulate(ms, ms, n, o.depth);
      const over = lpt / b.lower - 1;
      const overLpt = lpt / b.lpt_lower - 1;
      if (over > worst) worst = over;
      if (overLpt > worstLpt) worstLpt = overLpt;
      return {
        workers: n,
        makespan_ms: r3(lpt),
        lower_bound_ms: r3(b.lower),
        over_bound_pct: r3(100 * over),
        pair_bound_ms: r3(b.lpt_lower),
        over_pair_bound_pct: r3(100 * overLpt),
        known_costs_over_bound_pct: r3(100 * (oracle / b.lower - 1)),
        corpus_order_makespan_ms: r3(fifo),
        corpus_order_over_bound_pct: r3(100 * (fifo / b.lower - 1)),
      };
    });
    const longest = Math.max(...ms);
    results.push({ corpus: name, conversations: cs.length, total_cpu_ms: r3(total), longest_ms: r3(longest), rows });
    process.stderr.write(`\n${name}: ${cs.length} conversations, total ${(total / 1000).toFixed(1)} s, longest ${(longest / 1000).toFixed(2)} s\n`);
    process.stderr.write(`  N   makespan_s  bound_s   over%   pair_bound_s  over_pair%  known-costs over%  corpus-order over%\n`);
    for (const r of rows) {
      process.stderr.write(
        `  ${String(r.workers).padStart(3)} ${(r.makespan_ms / 1000).toFixed(3).padStart(10)} ${(r.lower_bound_ms / 1000).toFixed(3).padStart(9)} ${r.over_bound_pct.toFixed(2).padStart(7)} ${(r.pair_bound_ms / 1000).toFixed(3).padStart(13)} ${r.over_pair_bound_pct.toFixed(2).padStart(11)} ${r.known_costs_over_bound_pct.toFixed(2).padStart(18)} ${r.corpus_order_over_bound_pct.toFixed(2).padStart(19)}\n`,
      );
    }
  }
  return {
    costs: source,
    scheduler: `LongestFirst (src/pool/schedule.ts), depth ${o.depth}, estimates = line bytes, durations = measured CPU ms`,
    worst_over_bound_pct: r3(100 * worst),
    worst_over_pair_bound_pct: r3(100 * worstLpt),
    results,
  };
}
