/**
 * Replay benchmark: ISL of every request of a corpus, incremental vs full, against the limit
 * (tokenizing each final conversation once with the same tokenizer). One process, one run, so
 * the ratios are comparable on a noisy machine.
 */
import { readFileSync } from "node:fs";
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions, PromptOptions } from "../src/api/options.js";
import { pythonJsonParser } from "../src/api/json.js";
import { assistantIndices, parseCorpusLine, type Conversation } from "../src/corpus/corpus.js";

export interface ReplayBenchOptions {
  corpus: string;
  deltatok: DeltatokOptions;
  parseToolArguments: boolean;
  /** Use only the first N conversations. */
  limitConversations?: number | undefined;
  /** Also time `mode: "full"` (slow on long corpora). */
  full: boolean;
}

export function loadConversations(path: string, limit?: number): Conversation[] {
  const out: Conversation[] = [];
  const lines = readFileSync(path, "utf8").split("\n");
  for (let i = 0; i < lines.length && (limit === undefined || out.length < limit); i++) {
    const l = lines[i] as string;
    if (l.trim() === "") continue;
    const c = parseCorpusLine(l, i + 1, pythonJsonParser);
    if (!("error" in c)) out.push(c);
  }
  return out;
}

function promptOptions(c: Conversation, o: ReplayBenchOptions): PromptOptions {
  return { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs, parse_tool_arguments: o.parseToolArguments };
}

/** User + system CPU seconds of a `process.cpuUsage(start)` difference (this thread and V8's helpers). */
function cpuSeconds(u: NodeJS.CpuUsage): number {
  return (u.user + u.system) / 1e6;
}

/** ISL of every request; returns seconds (wall and CPU), request count, token total and stats. */
function timeReplay(dt: Deltatok, convs: Conversation[], o: ReplayBenchOptions) {
  let requests = 0;
  let tokens = 0;
  let errors = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (const c of convs) {
    const opts = promptOptions(c, o);
    for (const k of assistantIndices(c.messages)) {
      requests++;
      try {
        tokens += dt.countPrompt(c.messages.slice(0, k), opts);
      } catch {
        errors++;
      }
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(process.cpuUsage(c0));
  return { seconds, cpu, requests, tokens, errors, stats: dt.stats() };
}

export async function replayBench(o: ReplayBenchOptions): Promise<Record<string, unknown>> {
  const convs = loadConversations(o.corpus, o.limitConversations);
  const tLoad = performance.now();
  const warm = await Deltatok.create({ ...o.deltatok, mode: "full" });
  const loadSeconds = (performance.now() - tLoad) / 1000;

  // The limit: render each whole conversation once (untimed), then time one encode of each.
  const finals: string[] = [];
  for (const c of convs) {
    try {
      finals.push(warm.renderPrompt(c.messages, { ...promptOptions(c, o), add_generation_prompt: false }));
    } catch {
      // conversations the template rejects are skipped by every mode alike
    }
  }
  // warm-up: JIT the tokenizer and renderer on a slice before timing anything
  timeReplay(warm, convs.slice(0, Math.min(3, convs.length)), o);
  let limitTokens = 0;
  const tLimit = performance.now();
  const cLimit = process.cpuUsage();
  for (const text of finals) limitTokens += warm.countText(text);
  const limitSeconds = (performance.now() - tLimit) / 1000;
  const limitCpu = cpuSeconds(process.cpuUsage(cLimit));

  const inc = timeReplay(await Deltatok.create({ ...o.deltatok, mode: "incremental" }), convs, o);
  const full = o.full ? timeReplay(await Deltatok.create({ ...o.deltatok, mode: "full" }), convs, o) : null;
  if (full !== null && full.tokens !== inc.tokens) throw new Error(`incremental and full disagree: ${inc.tokens} vs ${full.tokens} tokens`);

  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return {
    corpus: o.corpus,
    conversations: convs.length,
    requests: inc.requests,
    request_errors: inc.errors,
    isl_tokens: inc.tokens,
    load_s: r3(loadSeconds),
    limit: { seconds: r3(limitSeconds), cpu_s: r3(limitCpu), tokens: limitTokens, what: "one encode of each final conversation" },
    incremental: {
      seconds: r3(inc.seconds),
      cpu_s: r3(inc.cpu),
      render_s: r3(inc.stats.renderMs / 1000),
      tokenize_s: r3(inc.stats.tokenizeMs / 1000),
      reuse_ratio: r3(inc.stats.tokensReused / Math.max(1, inc.stats.tokensReused + inc.stats.tokensEncoded)),
      outcomes: { hits: inc.stats.hits, partial: inc.stats.partial, misses: inc.stats.misses, fallbacks: inc.stats.fallbacks },
    },
    full: full === null ? null : { seconds: r3(full.seconds), render_s: r3(full.stats.renderMs / 1000), tokenize_s: r3(full.stats.tokenizeMs / 1000) },
    ratios: {
      incremental_over_limit: r3(inc.seconds / limitSeconds),
      incremental_over_limit_cpu: r3(inc.cpu / limitCpu),
      full_over_incremental: full === null ? null : r3(full.seconds / inc.seconds),
      full_over_limit: full === null ? null : r3(full.seconds / limitSeconds),
    },
  };
}
