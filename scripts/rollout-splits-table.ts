/**
 * Split counts per template on a corpus (issue 13's closing figure): every template of
 * ../shared/corpus/templates with its matching tokenizer (Qwen3's where none is bundled), each
 * conversation of the corpus as a rollout with canonical completions; per template the
 * conversations, turns, sequences, splits by reason and conversations the template refused
 * (by error code). Tool-call arguments go as the corpus has them (JSON strings); where the
 * template then refuses conversations, also parsed (parse_tool_arguments), and the setting with
 * fewer refusals is reported (column "args"). Prints markdown. Usage (after npm run build):
 *   node dist/scripts/rollout-splits-table.js [corpus.jsonl] [templates dir]
 * (defaults: ../shared tau-bench airline, ../shared/corpus/templates)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { pythonJsonParser } from "../src/api/json.js";
import { SPLIT_REASONS } from "../src/api/rollout.js";
import { toDeltatokError } from "../src/errors.js";

const corpus = process.argv[2] ?? join("..", "shared", "corpus", "trajectories", "tau-bench-airline-gpt-4o.jsonl");
const dir = process.argv[3] ?? join("..", "shared", "corpus", "templates");
const index = JSON.parse(readFileSync(join(dir, "_index.json"), "utf8")) as Array<{ short: string; file: string; tokenizer: string }>;
const BUNDLED = new Set(["qwen3", "deepseek_v3", "llama3_1", "gemma3", "gptoss"]);
const convs = readFileSync(corpus, "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => pythonJsonParser(l) as { messages: unknown[]; tools?: unknown[] });

interface Tally {
  ok: number;
  turns: number;
  sequences: number;
  splits: number;
  by: Record<string, number>;
  refused: Record<string, number>;
  refusals: number;
}

function tally(dt: Deltatok, parse: boolean): Tally {
  const t: Tally = { ok: 0, turns: 0, sequences: 0, splits: 0, by: Object.fromEntries(SPLIT_REASONS.map((r) => [r, 0])), refused: {}, refusals: 0 };
  for (const c of convs) {
    try {
      const r = dt.tokenizeRollout(c.messages, { tools: c.tools ?? null, parse_tool_arguments: parse });
      t.ok++;
      t.sequences += r.sequences.length;
      for (const q of r.sequences) t.turns += q.turns.length;
      t.splits += r.splits.length;
      for (const s of r.splits) t.by[s.reason] = (t.by[s.reason] ?? 0) + 1;
    } catch (e) {
      const code = toDeltatokError(e).code;
      t.refused[code] = (t.refused[code] ?? 0) + 1;
      t.refusals++;
    }
  }
  return t;
}

const short = (r: string) => r.replace(/_/g, " ");
console.log(`| template | tokenizer | args | conversations | turns | sequences | splits | ${SPLIT_REASONS.map(short).join(" | ")} | refused |`);
console.log(`|---|---|---|---:|---:|---:|---:|${SPLIT_REASONS.map(() => "---:").join("|")}|---|`);
for (const t of index) {
  const tokenizer = BUNDLED.has(t.tokenizer) ? t.tokenizer : "qwen3";
  const dt = await Deltatok.create({ tokenizer, chatTemplateFile: join(dir, t.file.replace(/^templates\//, "")), date: "2026-11-30" });
  let r = tally(dt, false);
  let args = "string";
  if (r.refusals > 0) {
    const parsed = tally(dt, true);
    if (parsed.refusals < r.refusals) {
      r = parsed;
      args = "parsed";
    }
  }
  const ref = Object.entries(r.refused).map(([k, v]) => `${v} ${k.replace("DT_TEMPLATE_", "").toLowerCase()}`).join(", ") || "—";
  console.log(`| ${t.short} | ${tokenizer}${BUNDLED.has(t.tokenizer) ? "" : "*"} | ${args} | ${r.ok} | ${r.turns} | ${r.sequences} | ${r.splits} | ${SPLIT_REASONS.map((x) => r.by[x]).join(" | ")} | ${ref} |`);
}
