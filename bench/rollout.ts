/**
 * Rollout benchmark (`--suite rollout`): `tokenizeRollout` of every conversation, its assistant
 * messages carrying `sampled_ids` equal to their canonical completions, against the ISL replay
 * of the same corpus (countPrompt of every request), each on a fresh engine, in alternating
 * rounds of one process. Also times rollouts without sampled ids. The ratio rollout / ISL per
 * corpus is the figure of issue 13.
 */
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions, PromptOptions } from "../src/api/options.js";
import { assistantIndices, type Conversation } from "../src/corpus/corpus.js";
import { loadConversations } from "./replay.js";

export interface RolloutBenchOptions {
  corpora: string[];
  engine: DeltatokOptions;
  parseToolArguments: boolean;
  rounds: number;
  limitConversations?: number | undefined;
}

function opts(c: Conversation, pta: boolean): PromptOptions {
  return { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs, parse_tool_arguments: pta };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function timeIsl(engine: DeltatokOptions, convs: Conversation[], pta: boolean): Promise<{ s: number; tokens: number }> {
  const dt = await Deltatok.create(engine);
  let tokens = 0;
  const t0 = performance.now();
  for (const c of convs) {
    const o = opts(c, pta);
    for (const k of assistantIndices(c.messages)) {
      try {
        tokens += dt.countPrompt(c.messages.slice(0, k), o);
      } catch {
        // counted the same way in the rollout run: both skip what the template rejects
      }
    }
  }
  return { s: (performance.now() - t0) / 1000, tokens };
}

async function timeRollout(engine: DeltatokOptions, convs: Array<{ c: Conversation; messages: unknown[] }>, pta: boolean) {
  const dt = await Deltatok.create(engine);
  let sequences = 0;
  let splits = 0;
  let drift = 0;
  let tokens = 0;
  let errors = 0;
  const t0 = performance.now();
  for (const { c, messages } of convs) {
    try {
      const r = dt.tokenizeRollout(messages, { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs, parse_tool_arguments: pta });
      sequences += r.sequences.length;
      splits += r.splits.length;
      drift += r.drift.length;
      for (const s of r.sequences) tokens += s.ids.length;
    } catch {
      errors++;
    }
  }
  return { s: (performance.now() - t0) / 1000, sequences, splits, drift, tokens, errors };
}

export async function rolloutBench(o: RolloutBenchOptions): Promise<Record<string, unknown>> {
  const corpora: Array<Record<string, unknown>> = [];
  for (const path of o.corpora) {
    const convs = loadConversations(path, o.limitConversations);
    // sampled ids = the canonical completions (made once, untimed)
    const maker = await Deltatok.create(o.engine);
    const sampled: Array<{ c: Conversation; messages: unknown[] }> = [];
    let sampledTurns = 0;
    for (const c of convs) {
      const messages = c.messages.map((m) => ({ ...(m as Record<string, unknown>) }));
      try {
        const r = maker.tokenizeRollout(c.messages, opts(c, o.parseToolArguments));
        for (const s of r.sequences) {
          for (const t of s.turns) {
            Object.assign(messages[t.index] as Record<string, unknown>, { sampled_ids: Array.from(s.ids.subarray(t.completion[0], t.completion[1])) });
            sampledTurns++;
          }
        }
      } catch {
        // the template rejects this conversation: timed (and failing) alike in both runs
      }
      sampled.push({ c, messages });
    }
    const plain = convs.map((c) => ({ c, messages: c.messages }));
    // warm-up: one pass of each on a slice
    const warm = Math.max(1, Math.floor(convs.length / 10));
    await timeIsl(o.engine, convs.slice(0, warm), o.parseToolArguments);
    await timeRollout(o.engine, sampled.slice(0, warm), o.parseToolArguments);
    const isl: number[] = [];
    const ro: number[] = [];
    const roPlain: number[] = [];
    const ratios: number[] = [];
    let last: Awaited<ReturnType<typeof timeRollout>> | null = null;
    let islTokens = 0;
    for (let r = 0; r < o.rounds; r++) {
      const a = await timeIsl(o.engine, convs, o.parseToolArguments);
      const b = await timeRollout(o.engine, sampled, o.parseToolArguments);
      const p = await timeRollout(o.engine, plain, o.parseToolArguments);
      isl.push(a.s);
      ro.push(b.s);
      roPlain.push(p.s);
      ratios.push(b.s / a.s);
      last = b;
      islTokens = a.tokens;
    }
    corpora.push({
      corpus: path,
      conversations: convs.length,
      sampled_turns: sampledTurns,
      isl_s: isl.map(round3),
      rollout_sampled_s: ro.map(round3),
      rollout_canonical_s: roPlain.map(round3),
      ratio_sampled_over_isl: ratios.map(round3),
      ratio_median: round3(median(ratios)),
      isl_prompt_tokens: islTokens,
      sequences: last?.sequences,
      splits: last?.splits,
      drifted: last?.drift,
      sequence_tokens: last?.tokens,
      errors: last?.errors,
    });
  }
  return { rounds: o.rounds, corpora };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
