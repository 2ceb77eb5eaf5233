/**
 * `deltatok tokenize --workers N` and `deltatok rollout --workers N`: a regular corpus file on a
 * worker pool, the costliest conversations first, through the same first pass, cost model and
 * scheduler as `replay --workers N` (src/corpus/offsets.ts indexCorpus, src/pool/cost.ts,
 * src/pool/offline.ts runOffline). Each line goes to a worker as its raw text (a `training`
 * item, src/pool/work.ts trainingLine); the outcomes come back (typed arrays moved, not copied)
 * and reach the command's sink in corpus order, held meanwhile within a bound, so the output is
 * the in-process run's byte for byte.
 */
import { openCorpus } from "../corpus/corpus.js";
import { indexCorpus, LineReader } from "../corpus/offsets.js";
import { estimateLineCost } from "../pool/cost.js";
import { runOffline, type OfflineResult } from "../pool/offline.js";
import type { DeltatokPool } from "../pool/pool.js";
import type { TrainingOutcome } from "../pool/protocol.js";
import { Progress } from "./progress.js";
import { round3, skimmedId } from "./replay.js";
import { inShard } from "./shard.js";
import { stopReport } from "./signals.js";
import { lineFailureOutcome, type TokenizeCorpusOptions, type TrainingSink } from "./tokenize.js";

export interface ScheduledTrainingOptions extends TokenizeCorpusOptions {
  /**
   * Finished lines held for corpus order; at this many (or `maxHeldTokens`) the scheduler starts
   * the earliest line not started instead of the costliest, until the head is written.
   * @defaultValue 4096
   */
  maxHeldLines?: number | undefined;
  /** Tokens of held outcomes (ids: 4 bytes each, plus mask and logprobs). @defaultValue 16 Mi (≈100 MB) */
  maxHeldTokens?: number | undefined;
}

/** What the scheduled run adds to the command's summary (replay's summary has the same fields). */
export interface ScheduledFields {
  workers: number;
  schedule: "longest-first";
  workers_busy_s: number[];
  workers_jobs: number[];
}

function outcomeTokens(t: TrainingOutcome): number {
  if (t.trajectory !== undefined) return t.trajectory.count;
  let n = 0;
  for (const q of t.rollout?.sequences ?? []) n += q.ids.length;
  return n;
}

/**
 * Runs `mode` over a regular corpus file on `pool`; the summary is the sink's, with the fields of
 * {@link ScheduledFields} added. A stop (o.signal) writes the prefix of outcomes done in corpus
 * order and finishes the output there, as the in-process run does.
 */
export async function trainCorpusScheduled<S extends object>(
  pool: Pick<DeltatokPool, "size" | "runBatch">,
  path: string,
  mode: "tokenize" | "rollout",
  sink: TrainingSink<S>,
  o: ScheduledTrainingOptions,
): Promise<S & ScheduledFields> {
  const t0 = performance.now();
  const file = await openCorpus(path);
  const total = file.size;
  const progress = new Progress(o.progress);
  const signal = o.signal;
  const sh = o.shard;
  const maxLines = o.maxHeldLines ?? 4096;
  const maxTokens = o.maxHeldTokens ?? 16 * 1024 * 1024;
  const options = { chatTemplateKwargs: o.chatTemplateKwargs, parseToolArguments: o.parseToolArguments };
  await sink.start();
  const index = await indexCorpus(file, sh === undefined ? undefined : (text, line) => inShard(sh.spec, text, line), () => signal?.aborted === true, estimateLineCost);
  const ready = new Map<number, TrainingOutcome>();
  let head = 0;
  let heldLines = 0;
  let heldTokens = 0;
  const jobLine = new Uint32Array(index.count - index.errors.size);
  const costs = new Float64Array(jobLine.length);
  for (let i = 0, j = 0; i < index.count; i++) {
    const err = index.errors.get(i);
    if (err !== undefined) {
      ready.set(i, lineFailureOutcome({ line: index.line[i] as number, id: null, error: err }));
      heldLines++;
    } else {
      jobLine[j] = i;
      costs[j++] = (index.cost as Float64Array)[i] as number;
    }
  }
  const flushNow = async () => {
    for (let d = ready.get(head); d !== undefined; d = ready.get(head)) {
      ready.delete(head);
      head++;
      heldLines--;
      heldTokens -= outcomeTokens(d);
      await sink.add(d);
      progress.tick(() => `${sink.progress()}, ${pool.size} workers, longest first`);
    }
  };
  let flushing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => (flushing = flushing.then(flushNow));
  const reader = await LineReader.open(path);
  const ids = new Map<number, string | null>();
  await flush();
  let report;
  try {
    report = await runOffline(
      pool,
      costs,
      async (job) => {
        const i = jobLine[job] as number;
        const line = index.line[i] as number;
        const text = await reader.read(index.offset[i] as number, index.length[i] as number, line);
        ids.set(job, skimmedId(text));
        return { k: "training", mode, json: text, line, options };
      },
      (job, r: OfflineResult) => {
        const i = jobLine[job] as number;
        const line = index.line[i] as number;
        const id = ids.get(job) ?? null;
        ids.delete(job);
        let d: TrainingOutcome;
        if (r.ok && r.result.ok && "training" in r.result) d = r.result.training;
        else {
          // a worker failure (crashed twice, out of memory) or a corpus line unreadable again: this line's error
          const error = !r.ok ? r.error : !r.result.ok ? r.result.error : { code: "DT_INTERNAL" as const, message: "the worker answered a training line with something else" };
          d = { id, line, conversation: false, error };
        }
        ready.set(i, d);
        heldLines++;
        heldTokens += outcomeTokens(d);
        if (i === head) flush().catch(() => undefined);
      },
      { signal, headFirst: () => heldLines >= maxLines || heldTokens >= maxTokens },
    );
  } finally {
    await reader.close();
  }
  await flush();
  progress.done();
  const summary = await sink.finish(head, stopReport(signal, head, index.count - head, index.bytes, total), (performance.now() - t0) / 1000);
  // after the output is finished: a shard trailer holds the in-process run's summary exactly
  return Object.assign(summary, {
    workers: pool.size,
    schedule: "longest-first" as const,
    workers_busy_s: report.busyMs.map((ms) => round3(ms / 1000)),
    workers_jobs: report.jobs,
  });
}
