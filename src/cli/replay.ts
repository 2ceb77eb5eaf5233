/**
 * `deltatok replay`: ISL and OSL of every request of every conversation in a corpus.
 *
 * For each message k with role "assistant": ISL = tokens of messages[:k] rendered with the
 * generation prompt, OSL = tokens of messages[k] (see Deltatok.countMessage). One JSONL record
 * per request: `{"id","index","isl","osl"}`; a failure adds `"error": {code, message, path?}`
 * for that request (and keeps whichever of isl/osl did succeed) while the rest go on.
 *
 * In-process (`replayCorpus`) or on workers (`replayCorpusPooled`, `--workers N`). On workers,
 * each corpus line goes, as its raw JSON text, to the worker that owns its conversation (the
 * line id), is parsed and replayed there by the same code (src/corpus/replay.ts), and the records
 * are written back in corpus order through a bounded reorder window: the output is identical.
 */
import type { Deltatok, DeltatokStats, TokenizerEngineInfo } from "../api/deltatok.js";
import { corpusLines, openCorpus, readOpenCorpus } from "../corpus/corpus.js";
import { idKey, idOfText } from "../corpus/id.js";
import { pythonJsonParser } from "../api/json.js";
import { lineErrorRecord, replayConversation } from "../corpus/replay.js";
import type { ReplayRecord } from "../corpus/replay.js";
import { emptyStats, type DeltatokPool } from "../pool/pool.js";
import { isInfrastructureError, type BatchQueue } from "../queue/queue.js";
import type { DrainResult, QueueResult } from "../queue/types.js";
import { Progress } from "./progress.js";
import { snakeKeys } from "../json/index.js";
import { stopReport, turn, untilAborted, type StopReport } from "./signals.js";
import { inShard, type ShardSpec } from "./shard.js";
import { runScheduled } from "./scheduled-run.js";


export type { ReplayRecord } from "../pool/protocol.js";
export { replayConversation } from "../corpus/replay.js";

export interface ReplayOptions {
  chatTemplateKwargs: Record<string, unknown> | null;
  parseToolArguments: boolean;
  /** Compute OSL too. @defaultValue true */
  osl: boolean;
  /** Progress on stderr (default: when stderr is a TTY). */
  progress?: boolean | undefined;
  /**
   * Aborting stops the run: in process between conversations, on workers by ending the drain.
   * The records emitted are a prefix of the full run's; the summary says so in `stopped`.
   */
  signal?: AbortSignal | undefined;
  /**
   * Only this shard's lines (`--shard`); every record then carries its corpus `line` (records of
   * unusable lines always do), which `deltatok merge` uses to restore corpus order.
   */
  shard?: ShardSpec | undefined;
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
  /** The Deltatok's stats (DeltatokStats), keys in snake_case as everything written out (`tokens_reused`, `render.units_reused`). */
  cache: Record<string, unknown>;
  /** Fraction of prompt tokens taken from the cache. */
  reuse_ratio: number;
  load_s: number;
  elapsed_s: number;
  requests_per_s: number;
  /** Worker threads (0: in-process). Cache stats are summed over workers. */
  workers?: number;
  /** With workers, when the run was stopped (SIGTERM/SIGINT): the drain's one final state (DrainResult in snake_case). */
  drain?: Record<string, unknown>;
  /** Present when a signal stopped the run: how far it got (the totals above are of that prefix). */
  stopped?: StopReport;
  /** What encoded text: "deltatok" (its own encoder) or "fallback" (the library, for a component deltatok does not implement). */
  tokenizer_engine?: "deltatok" | "fallback";
  /** With the fallback: the component deltatok's encoder does not implement. */
  tokenizer_unsupported?: string;
  /**
   * With workers: "longest-first" (a regular file: indexed first, costliest conversations
   * started first) or "corpus-order" (a FIFO or stdin, read as it comes).
   */
  schedule?: "longest-first" | "corpus-order";
  /** With workers on a regular file: each worker's busy time, s (from each job's start on it to its result). */
  workers_busy_s?: number[];
  /** With workers on a regular file: conversations each worker ran. */
  workers_jobs?: number[];
}

/** Running totals over emitted records. */
class Tally {
  conversations = 0;
  requests = 0;
  errors = 0;
  isl = 0;
  osl = 0;
  readonly byCode: Record<string, number> = {};

  add(r: ReplayRecord): void {
    if (r.index !== null) this.requests++;
    if (r.error !== undefined) {
      this.errors++;
      this.byCode[r.error.code] = (this.byCode[r.error.code] ?? 0) + 1;
    }
    if (r.isl !== undefined) this.isl += r.isl;
    if (r.osl !== undefined) this.osl += r.osl;
  }

  line(t0: number, bytes: number, total: number, extra = ""): string {
    const s = (performance.now() - t0) / 1000;
    const pct = total > 0 ? ` ${((100 * bytes) / total).toFixed(0)}%` : "";
    return `replay${pct}: ${this.conversations} conversations, ${this.requests} requests, ${this.errors} errors, ${(this.requests / s).toFixed(0)} req/s${extra}`;
  }

  summary(path: string, deltatok: { tokenizer: string; mode: string }, cache: DeltatokStats, loadSeconds: number, elapsed: number): ReplaySummary {
    const seen = cache.tokensReused + cache.tokensEncoded;
    return {
      corpus: path,
      tokenizer: deltatok.tokenizer,
      mode: deltatok.mode,
      conversations: this.conversations,
      requests: this.requests,
      errors: this.errors,
      errors_by_code: this.byCode,
      isl_total: this.isl,
      osl_total: this.osl,
      cache: snakeKeys(cache),
      reuse_ratio: seen > 0 ? cache.tokensReused / seen : 0,
      load_s: round3(loadSeconds),
      elapsed_s: round3(elapsed),
      requests_per_s: elapsed > 0 ? Math.round(this.requests / elapsed) : 0,
    };
  }
}

/** Replays a corpus file in this thread, handing each record to `emit`. */
export async function replayCorpus(
  dt: Deltatok,
  path: string,
  o: ReplayOptions,
  emit: (r: ReplayRecord) => void | Promise<void>,
  loadSeconds: number,
): Promise<ReplaySummary> {
  const t0 = performance.now();
  const file = await openCorpus(path);
  const total = file.size;
  const progress = new Progress(o.progress);
  const tally = new Tally();
  let bytes = 0;
  let lines = 0;
  const sh = o.shard;
  const keep = sh === undefined ? undefined : (text: string | undefined, line: number) => inShard(sh, text, line);
  for await (const item of untilAborted(readOpenCorpus(file, pythonJsonParser, keep), o.signal)) {
    bytes += item.bytes;
    if (!item.ok) {
      const r = lineErrorRecord(item.failure);
      tally.add(r);
      await emit(r);
    } else {
      tally.conversations++;
      for (const r of replayConversation(dt, item.conversation, o)) {
        if (sh !== undefined) r.line = item.conversation.line;
        tally.add(r);
        await emit(r);
      }
      progress.tick(() => tally.line(t0, bytes, total));
    }
    lines++;
    // between conversations: a signal that came during this one is seen before the next starts
    if (o.signal !== undefined) await turn();
  }
  const elapsed = (performance.now() - t0) / 1000;
  progress.done();
  const summary = tally.summary(path, dt.options, dt.stats(), loadSeconds, elapsed);
  tokenizerEngineInto(summary, dt.tokenizerEngine);
  const stopped = stopReport(o.signal, lines, 0, bytes, total);
  if (stopped !== undefined) summary.stopped = stopped;
  return summary;
}

/** Puts the tokenizer engine (what encoded text) into a summary. */
export function tokenizerEngineInto(summary: ReplaySummary, e: TokenizerEngineInfo | undefined): void {
  if (e === undefined) return;
  summary.tokenizer_engine = e.engine;
  if (e.engine === "fallback") summary.tokenizer_unsupported = e.unsupported;
}

/** The summary of a run stopped before it read anything (a signal during startup). */
export function stoppedBeforeStart(path: string, deltatok: { tokenizer: string; mode: string }, loadSeconds: number, stopped: StopReport): ReplaySummary {
  const summary = new Tally().summary(path, deltatok, emptyStats(), loadSeconds, 0);
  summary.stopped = stopped;
  return summary;
}

export interface PooledReplayOptions extends ReplayOptions {
  /**
   * Conversations read ahead of the output (the reorder window). @defaultValue max(64, 32 × workers)
   */
  window?: number | undefined;
  /** Characters of corpus lines read ahead of the output. @defaultValue 64 Mi */
  windowChars?: number | undefined;
}


interface Done {
  records: ReplayRecord[];
  conversation: boolean;
  /** Not answered by a worker (crashed twice, or the run was stopped). */
  infra: boolean;
  chars: number;
}

/**
 * Replays a corpus file on a worker pool through `queue` (which must run on `pool`). Records
 * reach `emit` in corpus order, exactly as `replayCorpus` would emit them.
 */
export async function replayCorpusPooled(
  queue: BatchQueue,
  pool: DeltatokPool,
  path: string,
  o: PooledReplayOptions,
  emit: (r: ReplayRecord) => void | Promise<void>,
  loadSeconds: number,
): Promise<ReplaySummary> {
  const file = await openCorpus(path);
  const total = file.size;
  const t0 = performance.now();
  const progress = new Progress(o.progress);
  const tally = new Tally();
  const window = o.window ?? Math.max(64, 32 * pool.size);
  const windowChars = o.windowChars ?? 64 * 1024 * 1024;
  const replay = { chatTemplateKwargs: o.chatTemplateKwargs, parseToolArguments: o.parseToolArguments, osl: o.osl };
  const ready = new Map<number, Done>();
  let nextSeq = 0;
  let headSeq = 0;
  let heldChars = 0;
  let bytes = 0;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const signal = o.signal;
  const stopped = () => signal?.aborted === true;
  signal?.addEventListener("abort", notify);

  /** Writes every record that is next in corpus order. After a stop, stops at the first gap. */
  const flushNow = async () => {
    for (let d = ready.get(headSeq); d !== undefined; d = ready.get(headSeq)) {
      if (d.infra && stopped()) return;
      ready.delete(headSeq);
      headSeq++;
      heldChars -= d.chars;
      if (d.conversation) tally.conversations++;
      for (const r of d.records) {
        tally.add(r);
        await emit(r);
      }
      progress.tick(() => tally.line(t0, bytes, total, `, ${pool.size} workers`));
    }
  };
  // Flushes run one after another (records stay in order); a failed write fails every later one.
  let flushing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => (flushing = flushing.then(flushNow));

  /** Answers a line without a worker (the reader found it unusable), in its place in the order. */
  const answerHere = (seq: number, r: ReplayRecord) => {
    ready.set(seq, { records: [r], conversation: false, infra: false, chars: 0 });
  };
  const sh = o.shard;
  for await (const l of untilAborted(corpusLines(file), signal)) {
    bytes += l.bytes;
    if (sh !== undefined && l.text?.trim() !== "" && !inShard(sh, l.text, l.line)) continue;
    if (l.error !== undefined) {
      answerHere(nextSeq++, lineErrorRecord({ line: l.line, id: null, error: l.error }));
      await flush();
      continue;
    }
    const text = l.text;
    if (text.trim() === "") continue;
    const seq = nextSeq++;
    const id = idOfText(text);
    const lineNo = l.line;
    heldChars += text.length;
    queue.enqueue({ kind: "conversation", json: text, line: lineNo, replay, conversationId: id === null ? `#line:${lineNo}` : idKey(id) }, (r: QueueResult) => {
      if (r.ok && r.kind === "conversation") ready.set(seq, { records: sh === undefined ? r.records : withLine(r.records, lineNo), conversation: r.conversation, infra: false, chars: text.length });
      else if (!r.ok) ready.set(seq, { records: [{ id, index: null, line: lineNo, error: r.error }], conversation: false, infra: r.worker === null || isInfrastructureError(r.error.code), chars: text.length });
      notify();
      // written as soon as it is next in order, even while the reader waits for input
      if (seq === headSeq) flush().catch(() => undefined);
    });
    await flush();
    while ((nextSeq - headSeq >= window || heldChars >= windowChars) && !stopped()) {
      await new Promise<void>((r) => (wake = r));
      await flush();
    }
  }
  const onProgress = (p: { done: number; pending: number; rate: number }) =>
    progress.tick(() => `${tally.line(t0, bytes, total, `, ${pool.size} workers`)}; drain: ${p.done} done, ${p.pending} pending, ${p.rate.toFixed(1)}/s`);
  queue.on("progress", onProgress);
  let final: DrainResult;
  try {
    final = await queue.drain(signal === undefined ? {} : { signal });
  } finally {
    queue.off("progress", onProgress);
    signal?.removeEventListener("abort", notify);
  }
  await flush();
  const elapsed = (performance.now() - t0) / 1000;
  progress.done();
  const stats = await pool.stats();
  const summary = tally.summary(path, pool.options.resolvedDeltatok, stats.total, loadSeconds, elapsed);
  tokenizerEngineInto(summary, pool.workers[0]?.tokenizerEngine);
  summary.workers = pool.size;
  summary.schedule = "corpus-order";
  if (final.reason !== "drained" || final.pending > 0) summary.drain = snakeKeys(final);
  const stop = stopReport(signal, headSeq, nextSeq - headSeq, bytes, total);
  if (stop !== undefined) summary.stopped = stop;
  return summary;
}

/** Records of one conversation with its corpus line (shard outputs: merge restores order with it). */
function withLine(records: ReplayRecord[], line: number): ReplayRecord[] {
  for (const r of records) if (r.index !== null) r.line = line;
  return records;
}

export interface ScheduledReplayOptions extends ReplayOptions {
  /**
   * Records of finished conversations held for corpus order; at this many the scheduler starts
   * the earliest conversation not started instead of the costliest, until the head is written.
   * @defaultValue 262144 (≈30 MB of records)
   */
  maxHeldRecords?: number | undefined;
}

/**
 * Replays a regular corpus file on a pool, the costliest conversations first: a first pass keeps
 * each line's offset, length and estimated cost (src/pool/cost.ts, a skim of the line while the
 * pass has it; 24 bytes a line: src/corpus/offsets.ts; with the job and scheduler arrays ≈ 50
 * bytes a line, 50 MB for a million conversations), then lines are read again as
 * src/pool/schedule.ts starts them and their records are written in corpus order, held meanwhile (bounded by `maxHeldRecords`). The output is the
 * in-process replay's, record for record.
 */
export async function replayCorpusScheduled(
  pool: Pick<DeltatokPool, "size" | "runBatch" | "stats" | "options" | "workers">,
  path: string,
  o: ScheduledReplayOptions,
  emit: (r: ReplayRecord) => void | Promise<void>,
  loadSeconds: number,
): Promise<ReplaySummary> {
  const t0 = performance.now();
  const progress = new Progress(o.progress);
  const tally = new Tally();
  const sh = o.shard;
  const maxHeld = o.maxHeldRecords ?? 262_144;
  const replay = { chatTemplateKwargs: o.chatTemplateKwargs, parseToolArguments: o.parseToolArguments, osl: o.osl };
  let held = 0;
  let done = 0;
  let lines = 0;
  const run = await runScheduled<Done>({
    pool,
    path,
    shard: sh,
    signal: o.signal,
    item: (text, line) => ({ k: "conversation", json: text, line, replay }),
    outcome: (r, line, id) => {
      if (r.ok && r.result.ok && "records" in r.result) return { records: sh === undefined ? r.result.records : withLine(r.result.records, line), conversation: r.result.conversation, infra: false, chars: 0 };
      const error = !r.ok ? r.error : !r.result.ok ? r.result.error : { code: "DT_INTERNAL" as const, message: "the worker answered a conversation with something else" };
      return { records: [{ id, index: null, line, error }], conversation: false, infra: !r.ok && isInfrastructureError(error.code), chars: 0 };
    },
    lineError: (line, error) => ({ records: [lineErrorRecord({ line, id: null, error })], conversation: false, infra: false, chars: 0 }),
    emit: async (d) => {
      done++;
      if (d.conversation) tally.conversations++;
      for (const r of d.records) {
        tally.add(r);
        await emit(r);
      }
      progress.tick(() => tally.line(t0, done, lines, `, ${pool.size} workers, longest first`));
    },
    hold: (d, sign) => {
      held += sign * d.records.length;
    },
    full: () => held >= maxHeld,
    onIndexed: (count) => {
      lines = count;
    },
  });
  const elapsed = (performance.now() - t0) / 1000;
  progress.done();
  const stats = await pool.stats();
  const summary = tally.summary(path, pool.options.resolvedDeltatok, stats.total, loadSeconds, elapsed);
  tokenizerEngineInto(summary, pool.workers[0]?.tokenizerEngine);
  summary.workers = pool.size;
  summary.schedule = "longest-first";
  summary.workers_busy_s = run.busyMs.map((ms) => round3(ms / 1000));
  summary.workers_jobs = run.jobs;
  const stop = stopReport(o.signal, run.done, run.lines - run.done, run.bytesRead, run.size);
  if (stop !== undefined) summary.stopped = stop;
  return summary;
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
