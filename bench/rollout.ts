/**
 * Rollout benchmark (`--suite rollout`): `tokenizeRollout` of every conversation, its assistant
 * messages carrying `sampled_ids` equal to their canonical completions, against the ISL replay of
 * the same corpus (countPrompt of every request). Each measurement runs in a fresh process
 * (`--suite rollout-child`): the corpus is loaded, the sampled ids made, a tenth of the corpus run
 * as warm-up, then the whole corpus timed (wall and CPU time) on a new Deltatok. Processes
 * alternate — ISL, rollout with sampled ids, rollout without — for `--rounds` rounds, so the
 * ratio of adjacent runs holds on a noisy machine. The ratio rollout / ISL per corpus is the
 * figure of issue 13.
 */
import { execFile } from "node:child_process";
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions, PromptOptions } from "../src/api/options.js";
import { assistantIndices, type Conversation } from "../src/corpus/corpus.js";
import { loadConversations } from "./replay.js";

export type RolloutChildMode = "isl" | "rollout-sampled" | "rollout";

export interface RolloutBenchOptions {
  corpora: string[];
  rounds: number;
  /** Arguments that re-run this bench as `--suite rollout-child` with the same Deltatok options (a corpus and mode are added). */
  childArgs: string[];
}

function opts(c: Conversation, pta: boolean): PromptOptions {
  return { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs, parse_tool_arguments: pta };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** One timed run in this process (the child side). */
export async function rolloutChild(corpus: string, mode: RolloutChildMode, deltatok: DeltatokOptions, pta: boolean): Promise<Record<string, unknown>> {
  const convs = loadConversations(corpus);
  let work: Array<{ c: Conversation; messages: unknown[] }> = convs.map((c) => ({ c, messages: c.messages }));
  let sampledTurns = 0;
  if (mode === "rollout-sampled") {
    // sampled ids = the canonical completions, made untimed
    const maker = await Deltatok.create(deltatok);
    work = convs.map((c) => {
      const messages = c.messages.map((m) => ({ ...(m as Record<string, unknown>) }));
      try {
        const r = maker.tokenizeRollout(c.messages, opts(c, pta));
        for (const s of r.sequences) {
          for (const t of s.turns) {
            (messages[t.index] as Record<string, unknown>).sampled_ids = Array.from(s.ids.subarray(t.completion[0], t.completion[1]));
            sampledTurns++;
          }
        }
      } catch {
        // the template rejects this conversation: it fails alike when timed
      }
      return { c, messages };
    });
  }
  const run = async (items: typeof work) => {
    const dt = await Deltatok.create(deltatok);
    let tokens = 0;
    let sequences = 0;
    let splits = 0;
    let drift = 0;
    let errors = 0;
    // completion tokens no next prompt of their sequence reuses (each sequence's last completion):
    // the encoding a rollout adds to the ISL replay's, at the least
    let notCarried = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (const { c, messages } of items) {
      const o = opts(c, pta);
      if (mode === "isl") {
        for (const k of assistantIndices(messages)) {
          try {
            tokens += dt.countPrompt(messages.slice(0, k), o);
          } catch {
            errors++;
          }
        }
        continue;
      }
      try {
        const r = dt.tokenizeRollout(messages, { tools: o.tools ?? null, chat_template_kwargs: o.chat_template_kwargs ?? null, parse_tool_arguments: pta });
        sequences += r.sequences.length;
        splits += r.splits.length;
        drift += r.drift.length;
        for (const s of r.sequences) {
          tokens += s.ids.length;
          const end = s.turns[s.turns.length - 1]?.completion;
          if (end !== undefined) notCarried += end[1] - end[0];
        }
      } catch {
        errors++;
      }
    }
    const cpu = process.cpuUsage(cpu0);
    const s = (performance.now() - t0) / 1000;
    return { s, cpu_s: (cpu.user + cpu.system) / 1e6, tokens, sequences, splits, drift, errors, tokens_encoded: dt.stats().tokensEncoded, not_carried: notCarried };
  };
  await run(work.slice(0, Math.max(1, Math.floor(work.length / 10))));
  const r = await run(work);
  return { mode, corpus, conversations: convs.length, sampled_turns: sampledTurns, ...r };
}

function child(args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 1 << 24 }, (err, stdout) => {
      if (err !== null) return reject(err);
      try {
        resolve(JSON.parse(stdout) as Record<string, unknown>);
      } catch (e) {
        reject(e);
      }
    });
  });
}

export async function rolloutBench(o: RolloutBenchOptions): Promise<Record<string, unknown>> {
  const corpora: Array<Record<string, unknown>> = [];
  for (const corpus of o.corpora) {
    const runs: Record<RolloutChildMode, Array<Record<string, unknown>>> = { isl: [], "rollout-sampled": [], rollout: [] };
    for (let r = 0; r < o.rounds; r++) {
      for (const mode of ["isl", "rollout-sampled", "rollout"] as const) runs[mode].push(await child([...o.childArgs, "--corpus", corpus, "--mode", mode]));
    }
    const cpu = (m: RolloutChildMode) => runs[m].map((x) => x.cpu_s as number);
    const wall = (m: RolloutChildMode) => runs[m].map((x) => x.s as number);
    const ratios = (m: RolloutChildMode, f: (m: RolloutChildMode) => number[]) => f(m).map((x, i) => round3(x / (f("isl")[i] as number)));
    const last = runs["rollout-sampled"][runs["rollout-sampled"].length - 1] ?? {};
    corpora.push({
      corpus,
      conversations: last.conversations,
      sampled_turns: last.sampled_turns,
      isl: { wall_s: wall("isl").map(round3), cpu_s: cpu("isl").map(round3), prompt_tokens: runs.isl[0]?.tokens },
      rollout_sampled: { wall_s: wall("rollout-sampled").map(round3), cpu_s: cpu("rollout-sampled").map(round3) },
      rollout_canonical: { wall_s: wall("rollout").map(round3), cpu_s: cpu("rollout").map(round3) },
      ratio_sampled_over_isl: { wall: ratios("rollout-sampled", wall), cpu: ratios("rollout-sampled", cpu) },
      ratio_median: { wall: round3(median(ratios("rollout-sampled", wall))), cpu: round3(median(ratios("rollout-sampled", cpu))) },
      ratio_canonical_median: { wall: round3(median(ratios("rollout", wall))), cpu: round3(median(ratios("rollout", cpu))) },
      sequences: last.sequences,
      splits: last.splits,
      drifted: last.drift,
      sequence_tokens: last.tokens,
      errors: last.errors,
      // deterministic: tokens encoded by the rollout over those the ISL replay encodes, and the
      // floor any rollout has when completions cannot be reused (1 + not-carried / ISL-encoded)
      encoded: {
        isl: runs.isl[0]?.tokens_encoded,
        rollout_sampled: last.tokens_encoded,
        completions_not_carried: last.not_carried,
        ratio: round3((last.tokens_encoded as number) / (runs.isl[0]?.tokens_encoded as number)),
        floor: round3(1 + (last.not_carried as number) / (runs.isl[0]?.tokens_encoded as number)),
      },
    });
  }
  return { rounds: o.rounds, corpora };
}
