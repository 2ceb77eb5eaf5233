/**
 * `--suite scale`: issue 15's end-to-end criterion. Per round, in an order that rotates from
 * round to round (the machine is shared, so the variants must see the same noise): `deltatok
 * replay CORPUS --workers 1`, `--workers 2`, and the two-process ceiling — two independent
 * `deltatok replay` processes (in process, one thread each) started at once, each on one half of
 * the corpus, the halves balanced by cost (line bytes, greedy longest first into two bins; each
 * half keeps corpus order). Every variant is a fresh process tree; wall = spawn to exit (the
 * ceiling's: until the later of its two exits), work = the summaries' elapsed_s (the ceiling's:
 * the larger). Ratios per round and medians over the rounds.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export interface ScaleBenchOptions {
  corpora: string[];
  rounds: number;
  tokenizer: string;
  date: string;
}

const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));

function run(args: string[]): Promise<{ wall: number; summary: Record<string, unknown> }> {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-scale-"));
  const summary = join(dir, "summary.json");
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "replay", ...args, "--out", "/dev/null", "--summary", summary, "--no-progress"], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const wall = (performance.now() - t0) / 1000;
      if (code !== 0) return reject(new Error(`replay ${args.join(" ")} exited ${code}: ${err}`));
      resolve({ wall, summary: JSON.parse(readFileSync(summary, "utf8")) as Record<string, unknown> });
    });
  });
}

/** The corpus (the given files' lines, concatenated) and its two cost-balanced halves. */
function prepare(corpora: string[]): { whole: string; halves: [string, string]; conversations: number; bytes: [number, number] } {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-scale-corpus-"));
  const lines = corpora.flatMap((f) => readFileSync(f, "utf8").split(/\r?\n/).filter((l) => l.trim() !== ""));
  const whole = join(dir, "corpus.jsonl");
  writeFileSync(whole, lines.join("\n") + "\n");
  const order = lines.map((_l, i) => i).sort((a, b) => Buffer.byteLength(lines[b] as string) - Buffer.byteLength(lines[a] as string) || a - b);
  const bins: [number[], number[]] = [[], []];
  const load: [number, number] = [0, 0];
  for (const i of order) {
    const k = load[0] <= load[1] ? 0 : 1;
    bins[k].push(i);
    load[k] += Buffer.byteLength(lines[i] as string);
  }
  const halves = bins.map((b, k) => {
    const p = join(dir, `half${k}.jsonl`);
    writeFileSync(p, b.sort((x, y) => x - y).map((i) => lines[i]).join("\n") + "\n");
    return p;
  }) as [string, string];
  return { whole, halves, conversations: lines.length, bytes: load };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const r3 = (x: number) => Math.round(x * 1000) / 1000;

export async function scaleBench(o: ScaleBenchOptions): Promise<Record<string, unknown>> {
  const c = prepare(o.corpora);
  const common = ["--tokenizer", o.tokenizer, "--date", o.date];
  type V = "workers=1" | "workers=2" | "two-process";
  const variants: V[] = ["workers=1", "workers=2", "two-process"];
  const one = async (v: V): Promise<{ wall: number; work: number }> => {
    if (v === "two-process") {
      const t0 = performance.now();
      const [a, b] = await Promise.all(c.halves.map((h) => run([h, ...common])));
      return { wall: (performance.now() - t0) / 1000, work: Math.max(Number(a?.summary.elapsed_s), Number(b?.summary.elapsed_s)) };
    }
    const r = await run([c.whole, ...common, "--workers", v === "workers=1" ? "1" : "2"]);
    return { wall: r.wall, work: Number(r.summary.elapsed_s) };
  };
  const rounds: Array<Record<string, unknown>> = [];
  for (let k = 0; k < o.rounds; k++) {
    const order = variants.map((_v, i) => variants[(i + k) % variants.length] as V);
    const got = new Map<V, { wall: number; work: number }>();
    for (const v of order) got.set(v, await one(v));
    const w1 = got.get("workers=1") as { wall: number; work: number };
    const w2 = got.get("workers=2") as { wall: number; work: number };
    const tp = got.get("two-process") as { wall: number; work: number };
    const row = {
      round: k + 1,
      order,
      workers1_wall_s: r3(w1.wall),
      workers2_wall_s: r3(w2.wall),
      two_process_wall_s: r3(tp.wall),
      speedup_workers2: r3(w1.wall / w2.wall),
      speedup_two_process: r3(w1.wall / tp.wall),
      workers2_of_ceiling: r3(tp.wall / w2.wall),
      work: { workers1_s: w1.work, workers2_s: w2.work, two_process_s: tp.work, workers2_of_ceiling: r3(tp.work / w2.work) },
    };
    rounds.push(row);
    process.stderr.write(
      `scale round ${k + 1} (${order.join(", ")}): workers=1 ${row.workers1_wall_s} s, workers=2 ${row.workers2_wall_s} s, two-process ${row.two_process_wall_s} s; ` +
        `speedup ${row.speedup_workers2}× vs ceiling ${row.speedup_two_process}×: workers=2 at ${(100 * row.workers2_of_ceiling).toFixed(1)}% of the ceiling (work only: ${(100 * row.work.workers2_of_ceiling).toFixed(1)}%)\n`,
    );
  }
  const col = (k: string) => rounds.map((r) => r[k] as number);
  return {
    corpus: { files: o.corpora, conversations: c.conversations, half_bytes: c.bytes },
    note: "shared machine: other jobs ran at the same time; variants alternate within each round",
    rounds,
    median: {
      workers1_wall_s: r3(median(col("workers1_wall_s"))),
      workers2_wall_s: r3(median(col("workers2_wall_s"))),
      two_process_wall_s: r3(median(col("two_process_wall_s"))),
      speedup_workers2: r3(median(col("speedup_workers2"))),
      speedup_two_process: r3(median(col("speedup_two_process"))),
      workers2_of_ceiling: r3(median(col("workers2_of_ceiling"))),
      work_workers2_of_ceiling: r3(median(rounds.map((r) => (r.work as { workers2_of_ceiling: number }).workers2_of_ceiling))),
    },
  };
}
