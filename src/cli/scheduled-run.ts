/**
 * The scheduled corpus run shared by `replay`, `tokenize` and `rollout` with `--workers N` on a
 * regular file: a first pass keeps each line's offset, length and estimated cost
 * (src/corpus/offsets.ts indexCorpus, src/pool/cost.ts), src/pool/offline.ts runOffline starts
 * the costliest lines first, each line is read again as it starts, and the outcomes go to the
 * caller in corpus order, held meanwhile within the caller's bound (past it the earliest line not
 * started goes next). What a line becomes on a worker and what an outcome is are the caller's.
 */
import type { DeltatokError } from "../errors.js";
import { openCorpus } from "../corpus/corpus.js";
import { indexCorpus, LineReader } from "../corpus/offsets.js";
import { estimateLineCost } from "../pool/cost.js";
import { runOffline, type OfflineResult } from "../pool/offline.js";
import type { DeltatokPool } from "../pool/pool.js";
import type { WireItem } from "../pool/protocol.js";
import { idOfText, type CorpusId } from "../corpus/id.js";
import type { ShardSpec } from "./shard.js";
import { inShard } from "./shard.js";

export interface ScheduledRun<T> {
  pool: Pick<DeltatokPool, "size" | "runBatch">;
  path: string;
  shard: ShardSpec | undefined;
  signal: AbortSignal | undefined;
  /** The worker item of a line's text (1-based `line`). */
  item(text: string, line: number): WireItem;
  /** The outcome of a line from its worker's answer (`id` skimmed from the line, src/corpus/id.ts idOfText). */
  outcome(r: OfflineResult, line: number, id: CorpusId | null): T;
  /** The outcome of a line the first pass already found unusable. */
  lineError(line: number, error: DeltatokError): T;
  /** Called once per outcome, in corpus order. */
  emit(t: T): Promise<void>;
  /** Accounts an outcome held (+1) or released (−1); `full()` says the bound is reached. */
  hold(t: T, sign: 1 | -1): void;
  full(): boolean;
  /** Called once the corpus is open, before the first pass (a command starts its output here). */
  beforeIndex?(): Promise<void>;
  /** Called once the first pass has found the corpus's `lines`, before any outcome is emitted. */
  onIndexed?(lines: number): void;
}

export interface ScheduledRunReport {
  /** Lines whose outcome was emitted (a prefix of the corpus in order). */
  done: number;
  /** Lines the first pass found; corpus bytes it read; the file's size. */
  lines: number;
  bytesRead: number;
  size: number;
  busyMs: number[];
  jobs: number[];
}

/** Runs the corpus; see the file header. */
export async function runScheduled<T>(o: ScheduledRun<T>): Promise<ScheduledRunReport> {
  const file = await openCorpus(o.path);
  const sh = o.shard;
  const signal = o.signal;
  await o.beforeIndex?.();
  const index = await indexCorpus(file, sh === undefined ? undefined : (text, line) => inShard(sh, text, line), () => signal?.aborted === true, estimateLineCost);
  o.onIndexed?.(index.count);
  const ready = new Map<number, T>();
  let head = 0;
  const put = (i: number, t: T): void => {
    ready.set(i, t);
    o.hold(t, 1);
  };
  // jobs: the lines a worker answers (not the lines the reader already found unusable)
  const jobLine = new Uint32Array(index.count - index.errors.size);
  const costs = new Float64Array(jobLine.length);
  for (let i = 0, j = 0; i < index.count; i++) {
    const err = index.errors.get(i);
    if (err !== undefined) put(i, o.lineError(index.line[i] as number, err));
    else {
      jobLine[j] = i;
      costs[j++] = (index.cost as Float64Array)[i] as number;
    }
  }
  const flushNow = async () => {
    for (let d = ready.get(head); d !== undefined; d = ready.get(head)) {
      ready.delete(head);
      head++;
      o.hold(d, -1);
      await o.emit(d);
    }
  };
  let flushing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => (flushing = flushing.then(flushNow));
  const reader = await LineReader.open(o.path);
  const ids = new Map<number, CorpusId | null>();
  await flush();
  let report;
  try {
    report = await runOffline(
      o.pool,
      costs,
      async (job) => {
        const i = jobLine[job] as number;
        const line = index.line[i] as number;
        const text = await reader.read(index.offset[i] as number, index.length[i] as number, line);
        ids.set(job, idOfText(text));
        return o.item(text, line);
      },
      (job, r: OfflineResult) => {
        const i = jobLine[job] as number;
        const id = ids.get(job) ?? null;
        ids.delete(job);
        put(i, o.outcome(r, index.line[i] as number, id));
        if (i === head) flush().catch(() => undefined);
      },
      { signal, headFirst: () => o.full() },
    );
  } finally {
    await reader.close();
  }
  await flush();
  return { done: head, lines: index.count, bytesRead: index.bytes, size: file.size, busyMs: report.busyMs, jobs: report.jobs };
}
