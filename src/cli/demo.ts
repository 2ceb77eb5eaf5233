/**
 * `deltatok demo` (what `npm start` runs): replays the bundled slice of a real agentic corpus
 * with the default tokenizer, incremental and full, and prints a short human summary.
 */
import { join } from "node:path";
import { Deltatok } from "../api/deltatok.js";
import { PACKAGE_ROOT } from "../package-info.js";
import type { DeltatokOptions } from "../api/options.js";
import { replayCorpus, type ReplayRecord, type ReplaySummary } from "./replay.js";

export const DEMO_CORPUS = join(PACKAGE_ROOT, "data", "tau-bench-airline-20.jsonl");

async function run(options: DeltatokOptions, mode: "incremental" | "full"): Promise<{ s: ReplaySummary; records: ReplayRecord[] }> {
  const t0 = performance.now();
  const dt = await Deltatok.create({ ...options, mode });
  const records: ReplayRecord[] = [];
  const s = await replayCorpus(dt, DEMO_CORPUS, { chatTemplateKwargs: null, parseToolArguments: false, osl: true, progress: false }, (r) => {
    records.push(r);
  }, (performance.now() - t0) / 1000);
  return { s, records };
}

const fmt = (n: number) => n.toLocaleString("en-US");

export async function runDemo(options: DeltatokOptions): Promise<number> {
  const opts: DeltatokOptions = { date: "2026-11-30", ...options };
  process.stdout.write(`deltatok demo: replaying ${DEMO_CORPUS}\n  tokenizer ${opts.tokenizer ?? "qwen3"} (loading…)\n`);
  const inc = await run(opts, "incremental");
  const full = await run(opts, "full");
  let differ = 0;
  for (let i = 0; i < inc.records.length; i++) {
    const a = inc.records[i];
    const b = full.records[i];
    if (a?.isl !== b?.isl || a?.osl !== b?.osl || a?.error?.code !== b?.error?.code) differ++;
  }
  const s = inc.s;
  const c = s.cache;
  const lines = [
    `  conversations        ${fmt(s.conversations)}`,
    `  requests             ${fmt(s.requests)} (${fmt(s.errors)} errors)`,
    `  ISL total            ${fmt(s.isl_total)} tokens`,
    `  OSL total            ${fmt(s.osl_total)} tokens`,
    `  cache                ${c.partial} partial reuses, ${c.hits} hits, ${c.misses} misses, ` +
      `${Object.values(c.fallbacks).reduce((x, y) => x + y, 0)} fallbacks; ${(100 * s.reuse_ratio).toFixed(1)}% of prompt tokens reused`,
    `  load                 ${s.load_s.toFixed(2)} s`,
    `  incremental          ${s.elapsed_s.toFixed(2)} s`,
    `  full re-render       ${full.s.elapsed_s.toFixed(2)} s  (re-render + re-tokenize every request)`,
    `  speedup              ${(full.s.elapsed_s / Math.max(s.elapsed_s, 1e-9)).toFixed(1)}×`,
    `  agreement            ${differ === 0 ? `every ISL and OSL identical in both modes` : `${differ} requests DIFFER between modes`}`,
  ];
  process.stdout.write(lines.join("\n") + "\n");
  return differ === 0 ? 0 : 1;
}
