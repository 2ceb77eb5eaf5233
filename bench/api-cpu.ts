/**
 * CPU time of the public API's request path (validation, snapshot, render, tokenize), for
 * comparing two builds on a shared machine where wall times move too much: each run is a fresh
 * Deltatok counting the ISL of every request of the SWE and tau-bench corpora, and the figure is
 * the least process CPU time of 3 runs (after a warm-up). Run each build alternately:
 *
 *   node dist/bench/api-cpu.js [--fresh] [--corpus-dir DIR] [BUILD_ROOT]
 *
 * BUILD_ROOT is a checkout with dist/ built (default: this one). Without --fresh, a
 * conversation's requests pass the same message objects again (the library's cheap path);
 * with --fresh, every request is parsed anew (the sidecar without prefixes), and only the
 * countPrompt calls are timed. Prints one JSON line: {root, fresh, requests, cpu_s, isl_total}.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({ options: { fresh: { type: "boolean" }, "corpus-dir": { type: "string" } }, allowPositionals: true });
const root = resolve(positionals[0] ?? fileURLToPath(new URL("../..", import.meta.url)));
const dir =
  values["corpus-dir"] ??
  ["../../../shared/corpus/trajectories/", "../../shared/corpus/trajectories/"].map((r) => fileURLToPath(new URL(r, import.meta.url))).find((d) => existsSync(d));
if (dir === undefined) throw new Error("corpus directory not found: give --corpus-dir (../shared/corpus/trajectories)");
const fresh = values.fresh === true;

type Msg = { role?: unknown };
type Conv = { messages: Msg[]; tools: unknown[] | null };
const api = (await import(pathToFileURL(`${root}/dist/src/index.js`).href)) as {
  Deltatok: { create(o: object): Promise<{ countPrompt(m: unknown[], o: object): number }> };
};
const { pythonJsonParser } = (await import(pathToFileURL(`${root}/dist/src/api/json.js`).href)) as { pythonJsonParser: (s: string) => unknown };
const files = ["mlcommons-swebench-agentic-coding.jsonl", "tau-bench-airline-gpt-4o.jsonl", ...(fresh ? [] : ["minisweagent-gemini-3-pro-swebench-verified-top50.jsonl"])];
const lines: string[] = [];
for (const f of files) for (const l of readFileSync(resolve(dir, f), "utf8").split("\n")) if (l.trim() !== "") lines.push(l);

async function run(n: number): Promise<{ cpu: number; requests: number; total: number }> {
  const dt = await api.Deltatok.create({ date: "2026-11-30" });
  let cpu = 0;
  let requests = 0;
  let total = 0;
  for (const line of lines.slice(0, n)) {
    const c = pythonJsonParser(line) as Conv;
    const t0 = fresh ? null : process.cpuUsage();
    for (let k = 0; k < c.messages.length; k++) {
      if (c.messages[k]?.role !== "assistant") continue;
      requests++;
      if (fresh) {
        const f = pythonJsonParser(line) as Conv;
        const c0 = process.cpuUsage();
        total += dt.countPrompt(f.messages.slice(0, k), { tools: f.tools });
        const d = process.cpuUsage(c0);
        cpu += d.user + d.system;
      } else total += dt.countPrompt(c.messages.slice(0, k), { tools: c.tools });
    }
    if (t0 !== null) {
      const d = process.cpuUsage(t0);
      cpu += d.user + d.system;
    }
  }
  return { cpu: cpu / 1e6, requests, total };
}

await run(20);
const runs = [await run(lines.length), await run(lines.length), await run(lines.length)];
const best = Math.min(...runs.map((r) => r.cpu));
console.log(JSON.stringify({ root, fresh, requests: runs[0]?.requests, cpu_s: Math.round(best * 1000) / 1000, isl_total: runs[0]?.total }));
