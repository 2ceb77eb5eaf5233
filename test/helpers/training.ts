/**
 * The training commands' (`tokenize`, `rollout`) --workers tests: the bundled corpus with the
 * lines every path must answer in place (not JSON, not UTF-8, no messages, content the Deltatok
 * refuses, a blank line, a repeated id), and a check that `--workers N` writes exactly the
 * in-process output and summary.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "./cli.js";
import { repoPath } from "./paths.js";

/** Writes the corpus into `dir`, with `extra` lines (e.g. one carrying sampled ids) at the end; its path. */
export function trainingCorpus(dir: string, extra: string[] = []): string {
  const slice = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "");
  const path = join(dir, "workers-corpus.jsonl");
  const bad = Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);
  writeFileSync(
    path,
    Buffer.concat([
      Buffer.from([...slice.slice(0, 7), "{broken", '{"id": "no-messages", "messages": []}', '{"id": "bad-content", "messages": [{"role": "user", "content": 1}]}', "", slice[0]].join("\n") + "\n"),
      bad,
      Buffer.from("\n" + [...slice.slice(7), ...extra].join("\n") + "\n"),
    ]),
  );
  return path;
}

/**
 * Runs `args` in process and with `--workers 2`, each writing `--out` (a file per run) and
 * `--summary`: the outputs are byte-identical and the summaries equal apart from timing, `out`
 * and the fields the scheduled run adds. Returns both summaries.
 */
export async function sameOnWorkers(dir: string, name: string, args: string[]): Promise<{ s0: Record<string, unknown>; s2: Record<string, unknown>; out: Buffer }> {
  const run = async (workers: string) => {
    const out = join(dir, `${name}-w${workers}.out`);
    const summary = join(dir, `${name}-w${workers}.json`);
    const r = await runCli([...args, "--workers", workers, "--out", out, "--summary", summary]);
    assert.equal(r.code, 0, r.stderr);
    return { out: readFileSync(out), summary: JSON.parse(readFileSync(summary, "utf8")) as Record<string, unknown> };
  };
  const a = await run("0");
  const b = await run("2");
  assert.ok(a.out.length > 0);
  assert.ok(a.out.equals(b.out), `${name}: --workers 2 output differs from the in-process run (${a.out.length} vs ${b.out.length} bytes)`);
  const strip = (s: Record<string, unknown>) => {
    const { elapsed_s: _e, out: _o, workers: _w, schedule: _s, workers_busy_s: _b, workers_jobs: _j, ...rest } = s;
    return rest;
  };
  assert.deepEqual(strip(b.summary), strip(a.summary));
  assert.equal(a.summary.workers, undefined);
  assert.equal(b.summary.workers, 2);
  assert.equal(b.summary.schedule, "longest-first");
  assert.equal((b.summary.workers_busy_s as number[]).length, 2);
  assert.equal((b.summary.workers_jobs as number[]).length, 2);
  return { s0: a.summary, s2: b.summary, out: a.out };
}
