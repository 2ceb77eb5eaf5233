/**
 * `deltatok tokenize --workers N` and `deltatok rollout --workers N`: a regular corpus file on a
 * worker pool, the costliest conversations first, through the same first pass, cost model and
 * scheduler as `replay --workers N` (src/corpus/offsets.ts indexCorpus, src/pool/cost.ts,
 * src/pool/offline.ts runOffline). Each line goes to a worker as its raw text (a `training`
 * item, src/corpus/replay.ts trainingLine); the outcomes come back (typed arrays moved, not copied)
 * and reach the command's sink in corpus order, held meanwhile within a bound, so the output is
 * the in-process run's byte for byte.
 */
import type { DeltatokPool } from "../pool/pool.js";
import type { TrainingOutcome } from "../pool/protocol.js";
import { Progress } from "./progress.js";
import { round3 } from "./replay.js";
import { runScheduled } from "./scheduled-run.js";
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
  const progress = new Progress(o.progress);
  const maxLines = o.maxHeldLines ?? 4096;
  const maxTokens = o.maxHeldTokens ?? 16 * 1024 * 1024;
  const options = { chatTemplateKwargs: o.chatTemplateKwargs, parseToolArguments: o.parseToolArguments };
  let heldLines = 0;
  let heldTokens = 0;
  const run = await runScheduled<TrainingOutcome>({
    pool,
    path,
    shard: o.shard?.spec,
    signal: o.signal,
    beforeIndex: () => sink.start(),
    item: (text, line) => ({ k: "training", mode, json: text, line, options }),
    outcome: (r, line, id) => {
      if (r.ok && r.result.ok && "training" in r.result) return r.result.training;
      // a worker failure (crashed twice, out of memory) or a corpus line unreadable again: this line's error
      const error = !r.ok ? r.error : !r.result.ok ? r.result.error : { code: "DT_INTERNAL" as const, message: "the worker answered a training line with something else" };
      return { id, line, conversation: false, error };
    },
    lineError: (line, error) => lineFailureOutcome({ line, id: null, error }),
    emit: async (d) => {
      await sink.add(d);
      progress.tick(() => `${sink.progress()}, ${pool.size} workers, longest first`);
    },
    hold: (d, sign) => {
      heldLines += sign;
      heldTokens += sign * outcomeTokens(d);
    },
    full: () => heldLines >= maxLines || heldTokens >= maxTokens,
  });
  progress.done();
  const summary = await sink.finish(run.done, stopReport(o.signal, run.done, run.lines - run.done, run.bytesRead, run.size), (performance.now() - t0) / 1000);
  // after the output is finished: a shard trailer holds the in-process run's summary exactly
  return Object.assign(summary, {
    workers: pool.size,
    schedule: "longest-first" as const,
    workers_busy_s: run.busyMs.map((ms) => round3(ms / 1000)),
    workers_jobs: run.jobs,
  });
}
