/**
 * `deltatok verify`: replays a corpus twice — incrementally and with a full render + one
 * whole-text encode per request — and reports every request where the two differ, with the
 * first differing token position, the text around it, and the first stage of the incremental
 * path that disagrees (triage, docs/DEBUGGING.md): its incremental render against a whole render
 * of the same request ("render"), then its spliced ids against one encode of that render
 * ("splice"). With a reference encoder it also encodes every whole render with it and reports
 * where the Deltatok's encoder differs ("encoder"). What a user runs before trusting a new template
 * or tokenizer with deltatok, and the first step of fixing a wrong count.
 */
import { toDeltatokError } from "../errors.js";
import type { Deltatok, PromptResult } from "../api/deltatok.js";
import type { PromptOptions } from "../api/options.js";
import { ENCODE_WHOLE, STAGE_HOOKS, composeStageHooks, firstDifference } from "../api/stages.js";
import { pythonJsonParser } from "../api/json.js";
import { assistantIndices, mergeKwargs, openCorpus, readOpenCorpus } from "../corpus/corpus.js";
import type { CorpusId } from "../corpus/id.js";
import { Progress } from "./progress.js";
import { round3 } from "./replay.js";
import { stopReport, turn, untilAborted, type StopReport } from "./signals.js";
import { inShard, type ShardSpec } from "./shard.js";

/**
 * The first stage of the incremental path that disagrees: "render" (its incremental render is
 * not its whole render), "splice" (the render is right, the spliced ids are not one encode of
 * it), "encoder" (incremental and full agree, the Deltatok's encoder differs from the reference
 * encoder on the whole render), "unattributed" (each stage agrees with its check: the two Deltatoks
 * compared are configured differently).
 */
export type Stage = "render" | "splice" | "encoder" | "unattributed";

/**
 * The third stage's reference: the ids of a text (add_special_tokens=False) from an encoder the
 * Deltatok's is checked against. The CLI's `--check-encoder` passes the Rust tokenizers binding
 * when it is installed, else @huggingface/tokenizers' stock pipeline (src/load/reference.ts).
 */
export interface ReferenceEncoder {
  /** What the reference is (in the summary). */
  readonly name: string;
  encode(text: string): ArrayLike<number> | Promise<ArrayLike<number>>;
}

export interface VerifyDifference {
  /** The line's id as sent (src/corpus/id.ts). */
  id: CorpusId;
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
  /** The first stage that disagrees (docs/DEBUGGING.md says where each one lives). */
  stage: Stage;
  /** stage "render": the first differing character of the two renders and the text from there, or the error of the render that failed. */
  render?: { offset?: number; incremental?: string; whole?: string; incremental_error?: string; whole_error?: string };
  /**
   * stage "splice": how the splicer answered (`reused` tokens came from the cache: a first
   * difference before that is a wrong cut, after it a wrong encode from the cut) against one
   * encode of the same render, or the error of the side that failed.
   */
  splice?: { outcome?: string; reused?: number; position?: number; spliced?: number | null; encoded?: number | null; error?: string; encoded_error?: string };
  /** stage "encoder": the reference encoder's answer for the whole render. */
  reference?: { name: string; count?: number; position?: number; token?: number | null; error?: string };
}

export interface VerifySummary {
  corpus: string;
  conversations: number;
  requests: number;
  identical: number;
  /** Requests where both modes failed with the same error code (agreement). */
  same_errors: number;
  differ: number;
  /** Differences by the first stage that disagrees. */
  stages: Record<Stage, number>;
  /** The reference encoder the encoder stage was checked against, or null (not checked). */
  reference_encoder: string | null;
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
  /** Check the encoder stage too: every whole render encoded with this reference as well. */
  reference?: ReferenceEncoder | undefined;
}

type Answer = PromptResult | { error: string };

function answer(dt: Deltatok, messages: unknown[], o: PromptOptions): Answer {
  try {
    return dt.tokenizePrompt(messages, o, true);
  } catch (e) {
    return { error: toDeltatokError(e).code };
  }
}

function idsOf(a: Answer): Uint32Array | null {
  return "error" in a ? null : a.ids;
}

function firstDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/** The part of an "ids" difference at position `p` every stage shares (the answers' tokens there, the decoded context). */
function idsAt(id: CorpusId, index: number | "final", p: number, a: Uint32Array, b: Uint32Array, decode: (ids: ArrayLike<number>) => string): Omit<VerifyDifference, "stage"> {
  return {
    id,
    index,
    kind: "ids",
    position: p,
    incremental: { count: a.length, token: a[p] ?? null },
    full: { count: b.length, token: b[p] ?? null },
    context: decode(b.subarray(Math.max(0, p - 8), p + 8)),
  };
}

/** At most this many characters of each render from its first difference. */
const EXCERPT = 80;

async function attemptAsync<T>(f: () => T | Promise<T>): Promise<{ ok: T } | { error: string }> {
  try {
    return { ok: await f() };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

function attempt<T>(f: () => T): { ok: T } | { error: string } {
  try {
    return { ok: f() };
  } catch (e) {
    return { error: toDeltatokError(e).code };
  }
}

/**
 * The first stage of `inc` that disagrees for a request whose incremental answer `a` differs
 * from the full one: its render (`rendered`: what it tokenized, null when it failed before) against
 * a whole render of the same request, then its answer against one encode of that render.
 */
function triage(inc: Deltatok, messages: unknown[], o: PromptOptions, a: Answer, rendered: readonly string[] | null): Pick<VerifyDifference, "stage" | "render" | "splice"> {
  const whole = attempt(() => inc.renderPrompt(messages, o));
  const aError = "error" in a ? a.error : undefined;
  if (rendered === null) {
    // the incremental side failed before it had a render
    if ("error" in whole && whole.error === aError) return { stage: "unattributed" };
    return { stage: "render", render: { incremental_error: aError, ...("error" in whole ? { whole_error: whole.error } : {}) } };
  }
  const text = rendered.join("");
  if ("error" in whole) return { stage: "render", render: { whole_error: whole.error } };
  if (text !== whole.ok) {
    const at = firstDifference(text, whole.ok);
    return { stage: "render", render: { offset: at, incremental: text.slice(at, at + EXCERPT), whole: whole.ok.slice(at, at + EXCERPT) } };
  }
  const one = attempt(() => inc[ENCODE_WHOLE](text));
  if ("error" in a) return { stage: "splice", splice: { error: a.error } };
  if ("error" in one) return { stage: "splice", splice: { outcome: a.outcome, reused: a.reused, encoded_error: one.error } };
  const ids = a.ids as Uint32Array;
  const p = firstDiff(ids, one.ok);
  if (p < 0) return { stage: "unattributed" };
  return { stage: "splice", splice: { outcome: a.outcome, reused: a.reused, position: p, spliced: ids[p] ?? null, encoded: one.ok[p] ?? null } };
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
  // verify prints its result only at the end: progress by default even when stderr is not a
  // terminal (a log file, CI), there one line every 10 s instead of a line redrawn every second
  const progress = new Progress(o.progress ?? true, process.stderr.isTTY === true ? 1000 : 10_000);
  let bytes = 0;
  let lines = 0;
  let conversations = 0;
  let requests = 0;
  let identical = 0;
  let sameErrors = 0;
  let differ = 0;
  const stages: Record<Stage, number> = { render: 0, splice: 0, encoder: 0, unattributed: 0 };
  const differences: VerifyDifference[] = [];
  const sh = o.shard;
  const ref = o.reference;
  // what each Deltatok tokenized for the current request (after any hook already installed)
  const seen: { inc: readonly string[] | null; full: readonly string[] | null } = { inc: null, full: null };
  const forget = (): void => {
    seen.inc = seen.full = null;
  };
  const incHooks = inc[STAGE_HOOKS];
  const fullHooks = full[STAGE_HOOKS];
  inc[STAGE_HOOKS] = composeStageHooks(incHooks, { rendered: (r) => void (seen.inc = r.segments) });
  if (ref !== undefined) full[STAGE_HOOKS] = composeStageHooks(fullHooks, { rendered: (r) => void (seen.full = r.segments) });
  try {
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
        forget();
        const a = answer(inc, messages, opts);
        const b = answer(full, messages, opts);
        const aIds = idsOf(a);
        const bIds = idsOf(b);
        let d: VerifyDifference | null = null;
        if (aIds !== null && bIds !== null) {
          const p = firstDiff(aIds, bIds);
          if (p >= 0) {
            d = { ...idsAt(c.id, index, p, aIds, bIds, decode), ...triage(inc, messages, opts, a, seen.inc) };
          } else if (ref !== undefined && seen.full !== null) {
            // the third stage: the Deltatok's encoder against the reference, on the whole render
            const text = seen.full.join("");
            const r = await attemptAsync(() => ref.encode(text));
            const q = "error" in r ? 0 : firstDiff(bIds, r.ok);
            if ("error" in r || q >= 0) {
              d = {
                ...idsAt(c.id, index, q, aIds, bIds, decode),
                stage: "encoder",
                reference: "error" in r ? { name: ref.name, error: r.error } : { name: ref.name, count: r.ok.length, position: q, token: r.ok[q] ?? null },
              };
            } else identical++;
          } else identical++;
        } else if ("error" in a && "error" in b && a.error === b.error) {
          sameErrors++;
        } else {
          d = {
            id: c.id,
            index,
            kind: "error",
            incremental: "error" in a ? { error: a.error } : { count: a.count },
            full: "error" in b ? { error: b.error } : { count: b.count },
            ...triage(inc, messages, opts, a, seen.inc),
          };
        }
        if (d !== null) {
          if (sh !== undefined) d.line = c.line;
          differ++;
          stages[d.stage]++;
          if (differences.length < o.maxReported) differences.push(d);
        }
      }
      progress.tick(() => {
        const pct = total > 0 ? ` ${((100 * bytes) / total).toFixed(0)}%` : "";
        return `verify${pct}: ${requests} requests, ${differ} differ`;
      });
      if (o.signal !== undefined) await turn();
    }
  } finally {
    inc[STAGE_HOOKS] = incHooks;
    full[STAGE_HOOKS] = fullHooks;
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
    stages,
    reference_encoder: ref?.name ?? null,
    differences,
    reuse_ratio: s.tokensReused / Math.max(1, s.tokensReused + s.tokensEncoded),
    elapsed_s: round3((performance.now() - t0) / 1000),
    ...(stopped === undefined ? {} : { stopped }),
    ...(sh === undefined ? {} : { shard: { lines, tokens_reused: s.tokensReused, tokens_encoded: s.tokensEncoded } }),
  };
}
