/**
 * `deltatok verify`: replays a corpus twice — incrementally and with a full render + one
 * whole-text encode per request — and reports every request where the two differ, with the
 * first differing token position and the text around it. What a user runs before trusting a new
 * template or tokenizer with deltatok.
 */
import { toDeltatokError } from "../errors.js";
import type { Deltatok } from "../api/deltatok.js";
import type { PromptOptions } from "../api/options.js";
import { pythonJsonParser } from "../api/json.js";
import { assistantIndices, mergeKwargs, openCorpus, readOpenCorpus } from "../corpus/corpus.js";
import { Progress } from "./progress.js";
import { round3 } from "./replay.js";
import { stopReport, turn, untilAborted, type StopReport } from "./signals.js";
import { inShard, type ShardSpec } from "./shard.js";

export interface VerifyDifference {
  id: string;
  index: number | "final";
  /** "ids": both answered, ids differ; "error": one failed, or both with different codes. */
  kind: "ids" | "error";
  /** First differing token index (kind "ids"). */
  position?: number;
  incremental: { count?: number; token?: number | null; error?: string };
  full: { count?: number; token?: number | null; error?: string };
  /** Decoded tokens around the first difference, from the full answer. */
  context?: string;
  /** The corpus line (`--shard` only: merge restores corpus order with it). */
  line?: number;
}

export interface VerifySummary {
  corpus: string;
  conversations: number;
  requests: number;
  identical: number;
  /** Requests where both modes failed with the same error code (agreement). */
  same_errors: number;
  differ: number;
  differences: VerifyDifference[];
  reuse_ratio: number;
  elapsed_s: number;
  /** Present when a signal stopped the run (the counts above are of the lines done). */
  stopped?: StopReport;
  /** `--shard` only: the corpus lines read, and the token counts reuse_ratio comes from (merge adds them). */
  shard?: { lines: number; tokens_reused: number; tokens_encoded: number };
}

export interface VerifyOptions {
  chatTemplateKwargs: Record<string, unknown> | null;
  parseToolArguments: boolean;
  /** Also check each whole conversation without the generation prompt. */
  final: boolean;
  /** Keep at most this many differences in the summary (all are counted). */
  maxReported: number;
  progress?: boolean | undefined;
  /** Aborting stops the run between conversations; the summary covers the lines done. */
  signal?: AbortSignal | undefined;
  /** Only this shard's lines (`--shard`); differences then carry their `line`. */
  shard?: ShardSpec | undefined;
}

type Answer = { ids: Uint32Array } | { error: string };

function answer(dt: Deltatok, messages: unknown[], o: PromptOptions): Answer {
  try {
    return { ids: dt.encodePrompt(messages, o) };
  } catch (e) {
    return { error: toDeltatokError(e).code };
  }
}

function firstDiff(a: Uint32Array, b: Uint32Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

export async function verifyCorpus(
  inc: Deltatok,
  full: Deltatok,
  path: string,
  o: VerifyOptions,
  decode: (ids: ArrayLike<number>) => string,
): Promise<VerifySummary> {
  const t0 = performance.now();
  const file = await openCorpus(path);
  const total = file.size;
  const progress = new Progress(o.progress);
  let bytes = 0;
  let lines = 0;
  let conversations = 0;
  let requests = 0;
  let identical = 0;
  let sameErrors = 0;
  let differ = 0;
  const differences: VerifyDifference[] = [];
  const sh = o.shard;
  for await (const item of untilAborted(readOpenCorpus(file, pythonJsonParser, sh === undefined ? undefined : (text, line) => inShard(sh, text, line)), o.signal)) {
    bytes += item.bytes;
    lines++;
    if (!item.ok) continue;
    conversations++;
    const c = item.conversation;
    const kwargs = mergeKwargs(o.chatTemplateKwargs, c.chat_template_kwargs);
    const base: PromptOptions = { tools: c.tools, chat_template_kwargs: kwargs, parse_tool_arguments: o.parseToolArguments };
    const jobs: Array<[number | "final", unknown[], boolean]> = assistantIndices(c.messages).map((k) => [k, c.messages.slice(0, k), true]);
    if (o.final) jobs.push(["final", c.messages, false]);
    for (const [index, messages, agp] of jobs) {
      requests++;
      const opts = { ...base, add_generation_prompt: agp };
      const a = answer(inc, messages, opts);
      const b = answer(full, messages, opts);
      let d: VerifyDifference | null = null;
      if ("ids" in a && "ids" in b) {
        const p = firstDiff(a.ids, b.ids);
        if (p < 0) identical++;
        else {
          d = {
            id: c.id,
            index,
            kind: "ids",
            position: p,
            incremental: { count: a.ids.length, token: a.ids[p] ?? null },
            full: { count: b.ids.length, token: b.ids[p] ?? null },
            context: decode(b.ids.subarray(Math.max(0, p - 8), p + 8)),
          };
        }
      } else if ("error" in a && "error" in b && a.error === b.error) {
        sameErrors++;
      } else {
        d = {
          id: c.id,
          index,
          kind: "error",
          incremental: "error" in a ? { error: a.error } : { count: a.ids.length },
          full: "error" in b ? { error: b.error } : { count: b.ids.length },
        };
      }
      if (d !== null) {
        if (sh !== undefined) d.line = c.line;
        differ++;
        if (differences.length < o.maxReported) differences.push(d);
      }
    }
    progress.tick(() => {
      const pct = total > 0 ? ` ${((100 * bytes) / total).toFixed(0)}%` : "";
      return `verify${pct}: ${requests} requests, ${differ} differ`;
    });
    if (o.signal !== undefined) await turn();
  }
  progress.done();
  const s = inc.stats();
  const stopped = stopReport(o.signal, lines, 0, bytes, total);
  return {
    corpus: path,
    conversations,
    requests,
    identical,
    same_errors: sameErrors,
    differ,
    differences,
    reuse_ratio: s.tokensReused / Math.max(1, s.tokensReused + s.tokensEncoded),
    elapsed_s: round3((performance.now() - t0) / 1000),
    ...(stopped === undefined ? {} : { stopped }),
    ...(sh === undefined ? {} : { shard: { lines, tokens_reused: s.tokensReused, tokens_encoded: s.tokensEncoded } }),
  };
}
