/**
 * Runs a known set of jobs (one item each: a corpus line) on a pool, in the order and on the
 * workers {@link LongestFirst} decides, and measures each worker's busy time. Used by the
 * offline commands (`deltatok replay --workers N` on a regular file); the live traffic of the
 * batch queue keeps its own lane logic (src/queue).
 *
 * Failures follow the batch queue's contract: a job whose worker died is started again first,
 * alone, on another worker; when that fails too it is answered DT_WORKER_OUT_OF_MEMORY (the
 * second death was the heap limit) or DT_WORKER_CRASHED. A worker whose replacement cannot load
 * (DT_WORKER_STARTUP) takes no more jobs; with none left every job not done is answered
 * DT_WORKER_CRASHED. Every job is answered exactly once, unless the run is aborted: then no job
 * is started any more, the run resolves at once, and jobs still running are not answered.
 */
import { toDeltatokError, type ErrorRecord } from "../errors.js";
import type { BatchRunner } from "./pool.js";
import type { WireItem, WireResult } from "./protocol.js";
import { LongestFirst } from "./schedule.js";

export interface OfflineOptions {
  /** Jobs a worker holds at once (src/pool/schedule.ts). @defaultValue 1 */
  depth?: number;
  /** Whether the caller's output buffer is full (then the earliest job in corpus order goes next). */
  headFirst?: () => boolean;
  signal?: AbortSignal | undefined;
  /** Milliseconds clock. @defaultValue performance.now */
  now?: () => number;
}

export type OfflineResult = { ok: true; result: WireResult; worker: number } | { ok: false; error: ErrorRecord; worker: number | null };

export interface OfflineReport {
  /** Per worker: milliseconds from the start of each of its jobs (dispatch, or the end of the job before it) to its result. */
  busyMs: number[];
  /** Jobs each worker answered. */
  jobs: number[];
  /** From the first dispatch to the last result, ms. */
  elapsedMs: number;
  /** Jobs started again after their worker died. */
  retried: number;
  aborted: boolean;
}

/**
 * Runs every job. `item(job)` builds its item (may read it from disk); `answer(job, r)` is called
 * once per job as it finishes — in completion order, not job order.
 */
export function runOffline(
  pool: Pick<BatchRunner, "size" | "runBatch">,
  costs: ArrayLike<number>,
  item: (job: number) => Promise<WireItem>,
  answer: (job: number, r: OfflineResult) => void,
  o: OfflineOptions = {},
): Promise<OfflineReport> {
  const now = o.now ?? (() => performance.now());
  const n = costs.length;
  const sched = new LongestFirst(costs, { workers: pool.size, depth: o.depth ?? 1 });
  // the job that will start next is read ahead, so a worker that finishes waits only for the
  // message, not for the disk
  const ahead = new Map<number, Promise<WireItem>>();
  const fetch = (job: number): Promise<WireItem> => {
    const p = ahead.get(job);
    if (p !== undefined) {
      ahead.delete(job);
      return p;
    }
    return item(job);
  };
  const readAhead = () => {
    const j = sched.peek(o.headFirst?.() ?? false);
    if (j >= 0 && !ahead.has(j) && ahead.size < 4) {
      const p = item(j);
      p.catch(() => undefined); // its failure is reported when the job starts
      ahead.set(j, p);
    }
  };
  const attempts = new Uint8Array(n);
  const busyMs = new Array<number>(pool.size).fill(0);
  const jobs = new Array<number>(pool.size).fill(0);
  const lastEnd = new Array<number>(pool.size).fill(0);
  const t0 = now();
  let answered = 0;
  let running = 0;
  let retried = 0;
  let finished = false;
  return new Promise<OfflineReport>((resolve) => {
    const report = (aborted: boolean): OfflineReport => ({ busyMs, jobs, elapsedMs: now() - t0, retried, aborted });
    const end = (aborted: boolean) => {
      if (finished) return;
      finished = true;
      o.signal?.removeEventListener("abort", onAbort);
      resolve(report(aborted));
    };
    const onAbort = () => end(true);
    if (o.signal?.aborted === true) return end(true);
    o.signal?.addEventListener("abort", onAbort, { once: true });

    const settle = (job: number, r: OfflineResult) => {
      answered++;
      answer(job, r);
      if (answered === n) end(false);
    };
    const pump = () => {
      if (finished) return;
      for (let a = sched.next(o.headFirst?.() ?? false); a !== null && !finished; a = sched.next(o.headFirst?.() ?? false)) start(a.job, a.worker);
      if (!finished) readAhead();
      if (running === 0 && sched.left > 0 && sched.healthyCount === 0) {
        // every worker is gone: the jobs left cannot run
        for (let j = 0; j < n && !finished; j++) if (attempts[j] !== 255) settle(j, { ok: false, error: { code: "DT_WORKER_CRASHED", message: "no worker is able to run items" }, worker: null });
      }
    };
    const start = (job: number, worker: number) => {
      running++;
      let dispatched = now();
      let p: Promise<WireResult[]>;
      let read = false;
      try {
        p = fetch(job).then((it) => {
          read = true;
          dispatched = now();
          return pool.runBatch(worker, [it]);
        });
      } catch (e) {
        p = Promise.reject(e);
      }
      p.then(
        (results) => {
          running--;
          if (finished) return;
          const t = now();
          busyMs[worker] = (busyMs[worker] as number) + (t - Math.max(dispatched, lastEnd[worker] as number));
          lastEnd[worker] = t;
          jobs[worker] = (jobs[worker] as number) + 1;
          sched.done(job, worker);
          attempts[job] = 255;
          const r = results[0];
          settle(job, r === undefined ? { ok: false, error: { code: "DT_INTERNAL", message: "the worker returned no result for this item" }, worker } : { ok: true, result: r, worker });
          pump();
        },
        (err: unknown) => {
          running--;
          if (finished) return;
          if (!read) {
            // the item could not be built (the corpus could not be read again): its own answer
            sched.done(job, worker);
            attempts[job] = 255;
            settle(job, { ok: false, error: toDeltatokError(err).toJSON(), worker: null });
            pump();
            return;
          }
          lastEnd[worker] = Math.max(lastEnd[worker] as number, now());
          const de = toDeltatokError(err, "DT_WORKER_CRASHED");
          if (de.code === "DT_WORKER_STARTUP") sched.setUnhealthy(worker);
          const tries = (attempts[job] as number) + 1;
          attempts[job] = tries;
          if (de.code === "DT_CLOSED" || de.code === "DT_INTERNAL" || tries >= 2) {
            sched.done(job, worker);
            attempts[job] = 255;
            const code = de.code === "DT_CLOSED" || de.code === "DT_INTERNAL" ? de.code : de.code === "DT_WORKER_OUT_OF_MEMORY" ? "DT_WORKER_OUT_OF_MEMORY" : "DT_WORKER_CRASHED";
            const message =
              code === "DT_WORKER_OUT_OF_MEMORY"
                ? `the item took a worker past its memory limit twice, the second time alone (${de.message})`
                : code === "DT_WORKER_CRASHED"
                  ? `a worker failed twice while holding the item (last: ${de.code}: ${de.message})`
                  : de.message;
            settle(job, { ok: false, error: { code, message }, worker });
          } else {
            retried++;
            sched.again(job, worker);
          }
          pump();
        },
      );
    };
    if (n === 0) return end(false);
    pump();
  });
}
