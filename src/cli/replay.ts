/**
 * `deltatok replay`: ISL and OSL of every request of every conversation in a corpus.
 *
 * For each message k with role "assistant": ISL = tokens of messages[:k] rendered with the
 * generation prompt, OSL = tokens of messages[k] (see Deltatok.countMessage). One JSONL record
 * per request: `{"id","index","isl","osl"}`; a failure adds `"error": {code, message, path?}`
 * for that request (and keeps whichever of isl/osl did succeed) while the rest go on.
 */
import { toDeltatokError, type ErrorRecord } from "../errors.js";
import type { Deltatok, DeltatokStats } from "../api/deltatok.js";
import type { PromptOptions } from "../api/options.js";
import { assistantIndices, mergeKwargs, readCorpus, type Conversation } from "../corpus/corpus.js";
import { pythonJsonParser } from "../api/json.js";
import { stat } from "node:fs/promises";
import { Progress } from "./progress.js";

export interface ReplayRecord {
  id: string | null;
  index: number | null;
  isl?: number;
  osl?: number;
  line?: number;
  error?: ErrorRecord;
}

export interface ReplayOptions {
  chatTemplateKwargs: Record<string, unknown> | null;
  parseToolArguments: boolean;
  /** Compute OSL too. @defaultValue true */
  osl: boolean;
  /** Progress on stderr (default: when stderr is a TTY). */
  progress?: boolean | undefined;
}

export interface ReplaySummary {
  corpus: string;
  tokenizer: string;
  mode: string;
  conversations: number;
  requests: number;
  errors: number;
  errors_by_code: Record<string, number>;
  isl_total: number;
  osl_total: number;
  cache: DeltatokStats;
  /** Fraction of prompt tokens taken from the cache. */
  reuse_ratio: number;
  load_s: number;
  elapsed_s: number;
  requests_per_s: number;
}

/** The requests of one conversation, in order, as records. */
export function replayConversation(dt: Deltatok, c: Conversation, o: ReplayOptions): ReplayRecord[] {
  const out: ReplayRecord[] = [];
  const kwargs = mergeKwargs(o.chatTemplateKwargs, c.chat_template_kwargs);
  const popts: PromptOptions = { tools: c.tools, chat_template_kwargs: kwargs, parse_tool_arguments: o.parseToolArguments };
  for (const k of assistantIndices(c.messages)) {
    const rec: ReplayRecord = { id: c.id, index: k };
    try {
      rec.isl = dt.countPrompt(c.messages.slice(0, k), popts);
    } catch (e) {
      rec.error = toDeltatokError(e).toJSON();
    }
    if (o.osl) {
      try {
        rec.osl = dt.countMessage(c.messages[k], { chat_template_kwargs: kwargs, parse_tool_arguments: o.parseToolArguments });
      } catch (e) {
        rec.error ??= toDeltatokError(e).toJSON();
      }
    }
    out.push(rec);
  }
  return out;
}

/** Replays a corpus file, handing each record to `emit`. */
export async function replayCorpus(
  dt: Deltatok,
  path: string,
  o: ReplayOptions,
  emit: (r: ReplayRecord) => void | Promise<void>,
  loadSeconds: number,
): Promise<ReplaySummary> {
  const t0 = performance.now();
  const total = (await stat(path).catch(() => ({ size: 0 }))).size;
  const progress = new Progress(o.progress);
  let bytes = 0;
  let conversations = 0;
  let requests = 0;
  let errors = 0;
  let isl = 0;
  let osl = 0;
  const byCode: Record<string, number> = {};
  const count = (r: ReplayRecord) => {
    if (r.index !== null) requests++;
    if (r.error !== undefined) {
      errors++;
      byCode[r.error.code] = (byCode[r.error.code] ?? 0) + 1;
    }
    if (r.isl !== undefined) isl += r.isl;
    if (r.osl !== undefined) osl += r.osl;
  };
  for await (const item of readCorpus(path, pythonJsonParser)) {
    bytes += item.bytes;
    if (!item.ok) {
      const r: ReplayRecord = { id: item.failure.id, index: null, line: item.failure.line, error: item.failure.error.toJSON() };
      count(r);
      await emit(r);
      continue;
    }
    conversations++;
    for (const r of replayConversation(dt, item.conversation, o)) {
      count(r);
      await emit(r);
    }
    progress.tick(() => {
      const s = (performance.now() - t0) / 1000;
      const pct = total > 0 ? ` ${((100 * bytes) / total).toFixed(0)}%` : "";
      return `replay${pct}: ${conversations} conversations, ${requests} requests, ${errors} errors, ${(requests / s).toFixed(0)} req/s`;
    });
  }
  const elapsed = (performance.now() - t0) / 1000;
  progress.done();
  const cache = dt.stats();
  const seen = cache.tokensReused + cache.tokensEncoded;
  return {
    corpus: path,
    tokenizer: dt.options.tokenizer,
    mode: dt.options.mode,
    conversations,
    requests,
    errors,
    errors_by_code: byCode,
    isl_total: isl,
    osl_total: osl,
    cache,
    reuse_ratio: seen > 0 ? cache.tokensReused / seen : 0,
    load_s: round3(loadSeconds),
    elapsed_s: round3(elapsed),
    requests_per_s: elapsed > 0 ? Math.round(requests / elapsed) : 0,
  };
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
