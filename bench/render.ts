/**
 * Render throughput (million characters of output per second): deltatok's Python-exact renderer
 * vs @huggingface/jinja on the same requests in the same run — for each conversation of the
 * corpus and each assistant index k, messages[:k] + add_generation_prompt=True with the line's
 * tools, special tokens of the tokenizer. Both render every request in alternating rounds; each
 * one's best round counts. Whole renders (no incremental reuse): this measures the evaluator.
 */
import { readFileSync } from "node:fs";
import { Template } from "@huggingface/jinja";
import { parseJson } from "../src/json/index.js";
import { compileTemplate } from "../src/template/index.js";
import { loadTokenizer } from "../src/load/index.js";

export interface RenderBenchOptions {
  corpus: string;
  /** Template file; default: the tokenizer's own template. */
  template?: string | undefined;
  tokenizer: string;
  rounds: number;
}

type Msg = Record<string, unknown>;

export async function renderBench(o: RenderBenchOptions): Promise<Record<string, unknown>> {
  const loaded = await loadTokenizer(o.tokenizer);
  const source = o.template !== undefined ? readFileSync(o.template, "utf8") : (loaded.templates.get("default") ?? [...loaded.templates.values()][0] ?? "");
  const specials = loaded.specialTokens;
  const ours: Array<Record<string, unknown>> = [];
  const theirs: Array<Record<string, unknown>> = [];
  for (const line of readFileSync(o.corpus, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const a = parseJson(line) as { messages: Msg[]; tools?: unknown };
    const b = JSON.parse(line) as { messages: Msg[]; tools?: unknown };
    a.messages.forEach((m, k) => {
      if (m.role !== "assistant") return;
      ours.push({ messages: a.messages.slice(0, k), tools: a.tools ?? null, documents: null, add_generation_prompt: true, ...specials });
      theirs.push({ messages: b.messages.slice(0, k), tools: b.tools ?? null, documents: null, add_generation_prompt: true, ...specials });
    });
  }
  const mine = compileTemplate(source);
  const hf = new Template(source);
  const now = new Date(Date.UTC(2026, 10, 30));
  const runOurs = () => {
    let chars = 0;
    const t0 = performance.now();
    for (const r of ours) chars += mine.render(r, { now }).text.length;
    return { chars, s: (performance.now() - t0) / 1000 };
  };
  const runHf = () => {
    let chars = 0;
    const t0 = performance.now();
    for (const r of theirs) chars += hf.render(r).length;
    return { chars, s: (performance.now() - t0) / 1000 };
  };
  runOurs();
  runHf();
  let best = Infinity;
  let bestHf = Infinity;
  let chars = 0;
  let charsHf = 0;
  for (let i = 0; i < o.rounds; i++) {
    const a = runOurs();
    chars = a.chars;
    best = Math.min(best, a.s);
    const b = runHf();
    charsHf = b.chars;
    bestHf = Math.min(bestHf, b.s);
  }
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    corpus: o.corpus,
    template: o.template ?? `${o.tokenizer} (tokenizer's own)`,
    requests: ours.length,
    chars,
    same_output_length: chars === charsHf,
    deltatok_mchars_s: r2(chars / best / 1e6),
    hf_jinja_mchars_s: r2(charsHf / bestHf / 1e6),
    ratio: r2(chars / best / (charsHf / bestHf)),
    rounds: o.rounds,
    note: "best round of each; python Jinja2 (compiled) did ~44 M chars/s on these requests here (BRIEF)",
  };
}
