/**
 * The scheduling decision of offline jobs (a whole corpus known in advance): which job a worker
 * starts next. Pure — no threads, no clock — so the pool's offline runner (src/pool/offline.ts)
 * and the scheduling simulation (bench/schedule.ts) run this same code.
 *
 * Longest first (LPT list scheduling): jobs are started in decreasing estimated cost (ties in
 * corpus order), each on the worker whose estimated outstanding cost is least (ties: the lowest
 * slot). A worker holds at most `depth` jobs (default 1: the next job goes to whichever worker
 * really finishes first; with more, the running one and `depth − 1` queued behind it, taken
 * only while that worker is the least loaded and not in the last `tail × workers` jobs). A job
 * is one conversation, so its turns stay in order on one worker.
 *
 * Output stays in corpus order, so results that finish early are held; when the caller says its
 * buffer is full (`headFirst`), the next job is the earliest one in corpus order not yet started
 * instead — that drains the buffer from its head. A failed job (its worker died) is started
 * again before anything else, on a worker other than the one it failed on when there is one.
 */

export interface Assignment {
  /** Job index (corpus order). */
  job: number;
  /** Worker slot. */
  worker: number;
}

export interface ScheduleOptions {
  /** Worker slots. */
  workers: number;
  /**
   * Jobs a worker holds at once (running + queued). 1 is list scheduling: a job goes to the
   * worker that actually finished first. More hides the main thread's round trip between jobs
   * but commits a job to a worker by the estimates, which cost accuracy in the simulation
   * (bench/schedule.ts). @defaultValue 1
   */
  depth?: number;
  /**
   * Once at most `tail × workers` jobs are left to start, a worker takes one only when idle
   * (no queued job), so the last jobs go to whichever worker really finishes first (0: off).
   * @defaultValue 2
   */
  tail?: number;
}

export class LongestFirst {
  readonly #cost: Float64Array;
  /** Job indices, costliest first. */
  readonly #order: Uint32Array;
  readonly #started: Uint8Array;
  readonly #load: Float64Array;
  readonly #held: Uint32Array;
  readonly #healthy: Uint8Array;
  readonly #depth: number;
  readonly #tail: number;
  /** Jobs to run again, oldest first, with the worker to avoid. */
  readonly #again: Array<{ job: number; avoid: number }> = [];
  #nextLongest = 0;
  #nextInOrder = 0;
  #left: number;
  /** Jobs never started. */
  #fresh: number;

  constructor(costs: ArrayLike<number>, o: ScheduleOptions) {
    const n = costs.length;
    if (!Number.isSafeInteger(o.workers) || o.workers < 1) throw new RangeError(`workers must be a positive integer, got ${o.workers}`);
    const depth = o.depth ?? 1;
    if (!Number.isSafeInteger(depth) || depth < 1) throw new RangeError(`depth must be a positive integer, got ${depth}`);
    this.#cost = Float64Array.from(costs);
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    const c = this.#cost;
    order.sort((a, b) => (c[b] as number) - (c[a] as number) || a - b);
    this.#order = order;
    this.#started = new Uint8Array(n);
    this.#load = new Float64Array(o.workers);
    this.#held = new Uint32Array(o.workers);
    this.#healthy = new Uint8Array(o.workers).fill(1);
    this.#depth = depth;
    this.#tail = o.tail ?? 2;
    this.#left = n;
    this.#fresh = n;
  }

  /** Jobs not started yet (including those to run again). */
  get left(): number {
    return this.#left;
  }

  /** Estimated outstanding cost of each worker. */
  get loads(): readonly number[] {
    return Array.from(this.#load);
  }

  /**
   * The worker to give a job now: the one with room and the least outstanding cost (other than
   * `avoid` when another is healthy) — but only when no worker, full or not, has less: a job
   * queued behind a long one would wait while a worker about to be free could take it (so a
   * worker takes a second job only when it is among the least loaded; an idle worker, at 0,
   * always gets one; a job run again goes to the least loaded with room). -1: none now.
   */
  #worker(avoid: number): number {
    let best = -1;
    let least = Infinity;
    const alone = this.healthyCount === 1;
    for (let w = 0; w < this.#load.length; w++) {
      if (this.#healthy[w] === 0) continue;
      const l = this.#load[w] as number;
      if (l < least) least = l;
      const held = this.#held[w] as number;
      // the last jobs go only to idle workers: a job queued on a worker whose estimate was wrong
      // would wait there while another worker finishes first (estimates: src/pool/cost.ts)
      const room = held < this.#depth && (held === 0 || this.#tail === 0 || this.#fresh > this.#load.length * this.#tail);
      if (!room || (w === avoid && !alone)) continue;
      if (best < 0 || l < (this.#load[best] as number)) best = w;
    }
    if (best < 0 || (avoid < 0 && (this.#load[best] as number) > least)) return -1;
    return best;
  }

  get healthyCount(): number {
    let k = 0;
    for (const h of this.#healthy) k += h;
    return k;
  }

  /**
   * The next job to start now and its worker, or null when every job is started or no worker has
   * room. `headFirst`: the caller's output buffer is full — take the earliest job in corpus order.
   */
  next(headFirst = false): Assignment | null {
    if (this.#left === 0) return null;
    const again = this.#again[0];
    if (again !== undefined) {
      const w = this.#worker(again.avoid);
      if (w >= 0) {
        this.#again.shift();
        return this.#start(again.job, w);
      }
      // only the worker it failed on has room: that one takes a fresh job meanwhile
    }
    if (this.#fresh === 0) return null;
    const w = this.#worker(-1);
    if (w < 0) return null;
    let job: number;
    if (headFirst) {
      while (this.#started[this.#nextInOrder] === 1) this.#nextInOrder++;
      job = this.#nextInOrder;
    } else {
      while (this.#started[this.#order[this.#nextLongest] as number] === 1) this.#nextLongest++;
      job = this.#order[this.#nextLongest] as number;
    }
    this.#fresh--;
    return this.#start(job, w);
  }

  /** The fresh job `next(headFirst)` would start, without starting it (to read it ahead); -1 if none. */
  peek(headFirst = false): number {
    if (this.#fresh === 0) return -1;
    if (headFirst) {
      while (this.#started[this.#nextInOrder] === 1) this.#nextInOrder++;
      return this.#nextInOrder;
    }
    while (this.#started[this.#order[this.#nextLongest] as number] === 1) this.#nextLongest++;
    return this.#order[this.#nextLongest] as number;
  }

  #start(job: number, worker: number): Assignment {
    this.#started[job] = 1;
    this.#left--;
    this.#held[worker] = (this.#held[worker] as number) + 1;
    this.#load[worker] = (this.#load[worker] as number) + (this.#cost[job] as number);
    return { job, worker };
  }

  #release(job: number, worker: number): void {
    this.#held[worker] = (this.#held[worker] as number) - 1;
    const v = (this.#load[worker] as number) - (this.#cost[job] as number);
    this.#load[worker] = v < 1e-9 ? 0 : v;
  }

  /** The job finished on its worker. */
  done(job: number, worker: number): void {
    this.#release(job, worker);
  }

  /** The job's worker failed while holding it: start it again first, elsewhere if possible. */
  again(job: number, worker: number): void {
    this.#release(job, worker);
    this.#left++;
    this.#again.push({ job, avoid: worker });
  }

  /** A worker that can no longer run jobs (its replacement failed to load). */
  setUnhealthy(worker: number): void {
    this.#healthy[worker] = 0;
  }
}
