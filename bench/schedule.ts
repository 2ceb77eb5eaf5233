/**
 * `--suite schedule`: the scheduling simulation of issue 15. First the per-conversation cost of a
 * real replay is measured (this process, one thread, one Deltatok for every corpus as one worker
 * would hold it: CPU ms of `replayLine`, the code a worker runs, per corpus line, the least of a
 * few passes), or read back from `--costs FILE` when that file exists (it is written after
 * measuring). Then those costs are replayed through the pool's own scheduling decision
 * (src/pool/schedule.ts, LongestFirst, deciding from the pool's estimates, src/pool/cost.ts, while
 * the simulated workers take the measured milliseconds) for N = 2 … 144 workers, and the
 * predicted makespan is set against the lower bound max(total / N, longest); the same with line
 * bytes as the estimates (the previous model), with the model refitted without the corpus (held
 * out), and with the measured costs as the estimates. Where it is over 5%, an exact search
 * (bench/schedule-bounds.ts) says whether any schedule can be within 5%. `--fit` fits the model's
 * coefficients (bench/cost-model.ts) on the corpora named and uses them.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions } from "../src/api/options.js";
import { pythonJsonParser } from "../src/api/json.js";
import { corpusLines, openCorpus, parseCorpusLine, type Conversation } from "../src/corpus/corpus.js";
import { LEADING_ROLES } from "../src/json/skim.js";
import { replayLine } from "../src/corpus/replay.js";
import { LongestFirst } from "../src/pool/schedule.js";
import { COST_MODEL, lineFeatures, type LineFeatures } from "../src/pool/cost.js";
import { estimate, fitModel, relativeError, type ErrorStats, type Model } from "./cost-model.js";
import { lowerBounds, optimum } from "./schedule-bounds.js";

export interface ScheduleBenchOptions {
  corpora: string[];
  deltatok: DeltatokOptions;
  /** Read costs from here when it exists; write them here after measuring. */
  costsFile: string | undefined;
  workers: number[];
  depth: number;
  /** Measuring passes; each conversation's cost is its least. */
  passes: number;
  /** Fit the cost model on the corpora whose names start with these, instead of COST_MODEL. */
  fit?: string[] | undefined;
  /** Node limit of one exact search step (schedule-bounds.ts). */
  exactNodes: number;
}

interface Cost {
  corpus: string;
  line: number;
  bytes: number;
  cpu_ms: number;
  /** Each pass's measurement (cpu_ms is their least). */
  passes_ms?: number[];
}

/**
 * What a worker pays once, not per conversation: the corpus's shared system prompt and tools
 * (a prompt of its first conversation's leading system/developer messages), so the first
 * conversation measured is not charged with what every later one finds in the cache.
 */
function warmUp(dt: Deltatok, c: Conversation): void {
  let k = 0;
  while (k < c.messages.length && LEADING_ROLES.has(String((c.messages[k] as { role?: unknown } | null)?.role))) k++;
  if (k === 0) return;
  try {
    dt.countPrompt(c.messages.slice(0, k), { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs });
  } catch {
    // a template that refuses a prompt of system messages only: nothing is warmed, the first
    // conversation carries it, as without this step
  }
}

/**
 * CPU ms of `replayLine` per corpus line (what a worker runs for a conversation: the parse and the
 * replay), the least of `passes` passes, each with a fresh
 * Deltatok (so each pass starts with cold caches, as a worker does): a pass on this shared machine
 * sees garbage collections and other processes' bursts land on one conversation (a 26 kB
 * tau-bench line measured 156 ms once, 10 ms in the next pass), and the least of a few is the
 * conversation's own cost.
 */
async function measure(corpora: string[], deltatok: DeltatokOptions, passes: number): Promise<Cost[]> {
  const out: Cost[] = [];
  for (let p = 0; p < passes; p++) {
    const dt = await Deltatok.create(deltatok);
    let k = 0;
    for (const path of corpora) {
      const file = await openCorpus(path);
      let warm = false;
      for await (const l of corpusLines(file)) {
        if (l.error !== undefined || l.text.trim() === "") continue;
        const c = parseCorpusLine(l.text, l.line, pythonJsonParser);
        if ("error" in c) continue;
        if (!warm) {
          warmUp(dt, c);
          warm = true;
        }
        const u0 = process.cpuUsage();
        replayLine(dt, l.text, l.line, { chatTemplateKwargs: null, parseToolArguments: false, osl: true });
        const u = process.cpuUsage(u0);
        const ms = (u.user + u.system) / 1000;
        const had = out[k];
        if (had === undefined) out.push({ corpus: basename(path), line: l.line, bytes: Buffer.byteLength(l.text), cpu_ms: ms, passes_ms: [ms] });
        else {
          if (ms < had.cpu_ms) had.cpu_ms = ms;
          had.passes_ms?.push(ms);
        }
        k++;
        process.stderr.write(`schedule: pass ${p + 1}/${passes}, measured ${k} conversations\r`);
      }
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

/** The shipped model's calibration corpora (src/pool/cost.ts COST_MODEL): its error on them is in-sample. */
const CALIBRATION = ["tau-bench-airline-gpt-4o.jsonl", "minisweagent-gemini-3-pro-swebench-verified-top50.jsonl"];

interface Line {
  cost: Cost;
  features: LineFeatures | null;
  chars: number;
}

/** The skim of every measured line, read again from the corpora (nothing of a line is kept but its counts). */
async function skimLines(corpora: string[], costs: Cost[]): Promise<{ lines: Line[]; skimMs: number }> {
  const byKey = new Map<string, Cost>();
  for (const c of costs) byKey.set(`${c.corpus}\u0000${c.line}`, c);
  const lines: Line[] = [];
  let skimMs = 0;
  for (const path of corpora) {
    const file = await openCorpus(path);
    for await (const l of corpusLines(file)) {
      const c = l.error === undefined ? byKey.get(`${basename(path)}\u0000${l.line}`) : undefined;
      if (c === undefined || l.error !== undefined) continue;
      const t = performance.now();
      const features = lineFeatures(l.text);
      skimMs += performance.now() - t;
      lines.push({ cost: c, features, chars: l.text.length });
    }
  }
  if (lines.length !== costs.length) throw new Error(`the costs name ${costs.length} lines, the corpora given (--corpus) have ${lines.length} of them`);
  return { lines, skimMs };
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const pct = (x: number) => r3(100 * x);

/** A model as its four coefficients, for the output. */
const shown = (m: Model) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Number(v.toPrecision(4))]));

export async function scheduleBench(o: ScheduleBenchOptions): Promise<Record<string, unknown>> {
  let costs: Cost[];
  let source: string;
  if (o.costsFile !== undefined && existsSync(o.costsFile)) {
    costs = JSON.parse(readFileSync(o.costsFile, "utf8")) as Cost[];
    source = `read from ${o.costsFile}`;
  } else {
    costs = await measure(o.corpora, o.deltatok, o.passes);
    source = `measured in this run (CPU ms of replayLine per line, one thread, least of ${o.passes} passes)`;
    if (o.costsFile !== undefined) writeFileSync(o.costsFile, JSON.stringify(costs) + "\n");
  }
  const { lines, skimMs } = await skimLines(o.corpora, costs);
  const corpusNames = [...new Set(lines.map((l) => l.cost.corpus))];
  const rowsOf = (ls: Line[]) => ls.filter((l) => l.features !== null).map((l) => ({ features: l.features as LineFeatures, ms: l.cost.cpu_ms }));
  const fitOn = o.fit ?? [];
  const fitted = fitOn.length > 0 ? fitModel(rowsOf(lines.filter((l) => fitOn.some((f) => l.cost.corpus.startsWith(f))))) : undefined;
  const model: Model = fitted ?? COST_MODEL;
  const calibration = fitted === undefined ? CALIBRATION : corpusNames.filter((c) => fitOn.some((f) => c.startsWith(f)));
  const allMs = lines.map((l) => l.cost.cpu_ms);
  const sumMs = allMs.reduce((a, b) => a + b, 0);
  // each estimator's error is taken after one factor over every corpus (its total = the measured
  // total): only ratios decide a schedule, and a model's ms are the fitting run's machine and load
  const bytesScale = sumMs / lines.reduce((a, l) => a + l.cost.bytes, 0);
  const scaleOf = (m: Model) => sumMs / lines.reduce((a, l) => a + estimate(l.features, l.chars, m), 0);

  const groups: Array<[string, Line[]]> = corpusNames.map((c) => [c, lines.filter((l) => l.cost.corpus === c)]);
  groups.push(["all corpora together", lines]);
  const results: Array<Record<string, unknown>> = [];
  const misses: Array<Record<string, unknown>> = [];
  let worst = 0;
  let worstKnown = 0;
  for (const [name, ls] of groups) {
    const ms = ls.map((l) => l.cost.cpu_ms);
    const est = ls.map((l) => estimate(l.features, l.chars, model));
    const bytes = ls.map((l) => l.cost.bytes);
    const one = name !== "all corpora together";
    // held out: the model fitted on every other corpus
    const heldOut = one ? fitModel(rowsOf(lines.filter((l) => l.cost.corpus !== name))) : undefined;
    const loco = heldOut === undefined ? undefined : ls.map((l) => estimate(l.features, l.chars, heldOut));
    // how much one conversation's measurement moves between passes: median (middle pass / least − 1)
    const spread = ls.filter((l) => (l.cost.passes_ms?.length ?? 0) >= 3).map((l) => {
      const p = [...(l.cost.passes_ms as number[])].sort((a, b) => a - b);
      return (p[p.length >> 1] as number) / (p[0] as number) - 1;
    });
    spread.sort((a, b) => a - b);
    const errors = {
      ...(spread.length === 0 ? {} : { measurement_spread: { median: spread[spread.length >> 1] as number, p90: spread[Math.min(spread.length - 1, Math.floor(0.9 * spread.length))] as number } }),
      bytes: relativeError(bytes, ms, bytesScale),
      model: relativeError(est, ms, scaleOf(model)),
      ...(loco === undefined || heldOut === undefined ? {} : { held_out_model: relativeError(loco, ms, scaleOf(heldOut)) }),
    };
    const sorted = [...ms].sort((a, b) => b - a);
    const total = ms.reduce((a, b) => a + b, 0);
    const rows = o.workers.map((n) => {
      const b = lowerBounds(sorted, n);
      const lpt = simulate(est, ms, n, o.depth);
      const byBytes = simulate(bytes, ms, n, o.depth);
      const known = simulate(ms, ms, n, o.depth);
      const held = loco === undefined ? undefined : simulate(loco, ms, n, o.depth);
      const over = lpt / b.simple - 1;
      if (over > worst) worst = over;
      if (known / b.simple - 1 > worstKnown) worstKnown = known / b.simple - 1;
      const row: Record<string, unknown> = {
        workers: n,
        makespan_ms: r3(lpt),
        lower_bound_ms: r3(b.simple),
        over_bound_pct: pct(over),
        pigeon_bound_ms: r3(b.pigeon),
        pigeon_k: b.k,
        over_best_bound_pct: pct(lpt / b.best - 1),
        bytes_over_bound_pct: pct(byBytes / b.simple - 1),
        ...(held === undefined ? {} : { held_out_model_over_bound_pct: pct(held / b.simple - 1) }),
        known_costs_over_bound_pct: pct(known / b.simple - 1),
      };
      if (over > 0.05) {
        // what any schedule of these indivisible jobs can do, found exactly where the search ends
        const opt = optimum(sorted, n, Math.min(lpt, known, byBytes), 1.05 * b.simple, 0.001, o.exactNodes);
        const verdict = opt.meets === false ? "unreachable" : opt.meets === true ? "reachable" : "open";
        // where a schedule exists: the estimate's doing when the same code with the measured costs
        // gets within 5%, else list scheduling's too (it misses with the costs known)
        const cause = verdict === "unreachable" ? "no schedule" : known / b.simple - 1 <= 0.05 ? "estimate" : "estimate and list scheduling";
        row.optimum = { lower_ms: r3(opt.lower), upper_ms: r3(opt.upper), exact: opt.exact, lower_over_bound_pct: pct(opt.lower / b.simple - 1), upper_over_bound_pct: pct(opt.upper / b.simple - 1), verdict, cause };
        misses.push({ corpus: name, conversations: ls.length, ...row });
      }
      return row;
    });
    results.push({
      corpus: name,
      conversations: ls.length,
      in_calibration: one ? calibration.includes(name) : "partly",
      total_cpu_ms: r3(total),
      longest_ms: r3(sorted[0] ?? 0),
      estimate_error: errors,
      rows,
    });
    const e = (x: ErrorStats) => `${(100 * x.median).toFixed(0)}% / ${(100 * x.p90).toFixed(0)}%`;
    process.stderr.write(
      `\n${name}: ${ls.length} conversations, total ${(total / 1000).toFixed(2)} s, longest ${((sorted[0] ?? 0) / 1000).toFixed(3)} s${one && calibration.includes(name) ? " (calibration corpus: the model's error is in-sample)" : ""}\n` +
        (errors.measurement_spread === undefined ? "" : `  a conversation's middle pass over its least, median / p90: ${e(errors.measurement_spread)}\n`) +
        `  estimate error median / p90: bytes ${e(errors.bytes)}, model ${e(errors.model)}${errors.held_out_model === undefined ? "" : `, model fitted without this corpus ${e(errors.held_out_model)}`}\n` +
        `    N  makespan_s   bound_s  over%  best_bound_s  over_best%  bytes over%  held-out over%  known over%   optimum over% (verdict)\n`,
    );
    const marks = new Set([2, 4, 8, 16, 32, 64, 128, 144]);
    for (const r of rows) {
      const opt = r.optimum as { lower_over_bound_pct: number; upper_over_bound_pct: number; verdict: string; exact: boolean } | undefined;
      if (!marks.has(r.workers as number) && opt === undefined) continue;
      const f = (x: unknown, w: number) => (typeof x === "number" ? x.toFixed(2) : "-").padStart(w);
      process.stderr.write(
        `  ${String(r.workers).padStart(3)} ${f((r.makespan_ms as number) / 1000, 10).replace(/(\d)\.(\d\d)$/, "$1.$2")} ${f((r.lower_bound_ms as number) / 1000, 9)} ${f(r.over_bound_pct, 6)} ${f((Math.max(r.lower_bound_ms as number, r.pigeon_bound_ms as number)) / 1000, 13)} ${f(r.over_best_bound_pct, 11)} ${f(r.bytes_over_bound_pct, 12)} ${f(r.held_out_model_over_bound_pct, 15)} ${f(r.known_costs_over_bound_pct, 12)}` +
          (opt === undefined ? "" : `   ${opt.exact ? opt.upper_over_bound_pct.toFixed(2) : `${opt.lower_over_bound_pct.toFixed(2)}..${opt.upper_over_bound_pct.toFixed(2)}`} (${opt.verdict})`) +
          "\n",
      );
    }
  }
  const verdicts = { unreachable: 0, reachable: 0, open: 0 } as Record<string, number>;
  const causes: Record<string, number> = {};
  for (const m of misses) {
    const v = m.optimum as { verdict: string; cause: string };
    verdicts[v.verdict]! += 1;
    causes[v.cause] = (causes[v.cause] ?? 0) + 1;
  }
  process.stderr.write(`\nover 5%: ${misses.length} (corpus, N) pairs; no schedule reaches 5%: ${verdicts.unreachable}; one does: ${verdicts.reachable}; undecided: ${verdicts.open}; ${JSON.stringify(causes)}\n`);
  return {
    costs: source,
    scheduler: `LongestFirst (src/pool/schedule.ts), depth ${o.depth}, estimates = src/pool/cost.ts (${fitted === undefined ? "COST_MODEL" : `fitted here on ${calibration.join(", ")}`}), durations = measured CPU ms`,
    model: shown(model),
    calibration,
    skim_ms: r3(skimMs),
    replay_ms: r3(sumMs),
    worst_over_bound_pct: pct(worst),
    worst_known_costs_over_bound_pct: pct(worstKnown),
    over_5pct: misses.length,
    verdicts,
    causes,
    misses,
    results,
  };
}
