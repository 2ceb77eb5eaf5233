/**
 * `npm run bench [-- options]`: benchmarks as JSON on stdout (and --out FILE).
 *
 *   --suite replay            (default) ISL replay: incremental vs full vs the limit
 *   --corpus FILE             default ../shared/corpus/trajectories/tau-bench-airline-gpt-4o.jsonl,
 *                             else the bundled data/tau-bench-airline-20.jsonl
 *   --tokenizer NAME          default qwen3
 *   --template FILE           chat template override
 *   --renderer python|hf-jinja
 *   --parse-tool-arguments
 *   --conversations N         only the first N conversations
 *   --no-full                 skip the (slow) full-mode baseline
 *   --out FILE                also write the JSON to FILE
 */
import { existsSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import type { DeltatokOptions } from "../src/api/options.js";
import { replayBench } from "./replay.js";

const SHARED_TAU = fileURLToPath(new URL("../../../shared/corpus/trajectories/tau-bench-airline-gpt-4o.jsonl", import.meta.url));
const BUNDLED = fileURLToPath(new URL("../../data/tau-bench-airline-20.jsonl", import.meta.url));

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      suite: { type: "string", default: "replay" },
      corpus: { type: "string" },
      tokenizer: { type: "string", default: "qwen3" },
      template: { type: "string" },
      renderer: { type: "string" },
      "parse-tool-arguments": { type: "boolean", default: false },
      conversations: { type: "string" },
      "no-full": { type: "boolean", default: false },
      out: { type: "string" },
    },
  });
  const engine: DeltatokOptions = { tokenizer: v.tokenizer, date: "2026-11-30" };
  if (v.template !== undefined) engine.chatTemplateFile = v.template;
  if (v.renderer !== undefined) engine.renderer = v.renderer as DeltatokOptions["renderer"];
  const corpus = v.corpus ?? (existsSync(SHARED_TAU) ? SHARED_TAU : BUNDLED);
  let result: Record<string, unknown>;
  switch (v.suite) {
    case "replay":
      result = await replayBench({
        corpus,
        engine,
        parseToolArguments: v["parse-tool-arguments"],
        limitConversations: v.conversations === undefined ? undefined : Number(v.conversations),
        full: !v["no-full"],
      });
      break;
    default:
      throw new Error(`unknown suite ${v.suite}`);
  }
  const out = {
    suite: v.suite,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version },
    options: { tokenizer: v.tokenizer, template: v.template ?? null, renderer: v.renderer ?? "python" },
    ...result,
  };
  const json = JSON.stringify(out, null, 2);
  process.stdout.write(json + "\n");
  if (v.out !== undefined) writeFileSync(v.out, json + "\n");
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${(e as Error)?.stack ?? e}\n`);
  process.exitCode = 1;
});
