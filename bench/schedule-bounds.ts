/**
 * What no schedule can beat, for the scheduling simulation (bench/schedule.ts): lower bounds on
 * the makespan of indivisible jobs on N identical workers, and an exact search (bin packing by
 * depth-first search) that says whether any schedule finishes by a given time — so a (corpus, N)
 * the simulation misses can be told apart: unreachable for every schedule, or lost by the
 * scheduler or its estimates.
 */

export interface Bounds {
  /** max(total / N, longest): the bound. */
  simple: number;
  /**
   * max over k ≥ 1 of the k + 1 smallest of the kN + 1 costliest jobs: some worker runs k + 1 of
   * them (k = 1: p_N + p_{N+1}, costs sorted down, 1-based). `k` is the one that gave it (0: none).
   */
  pigeon: number;
  k: number;
  /** The best of the two. */
  best: number;
}

/** `p` sorted in decreasing order. */
export function lowerBounds(p: readonly number[], n: number): Bounds {
  const total = p.reduce((a, b) => a + b, 0);
  const simple = Math.max(total / n, p[0] ?? 0);
  let pigeon = 0;
  let k = 0;
  for (let j = 1; j * n + 1 <= p.length; j++) {
    // the j + 1 smallest of p[0 .. jn] are p[jn - j .. jn]
    let s = 0;
    for (let i = j * n - j; i <= j * n; i++) s += p[i] as number;
    if (s > pigeon) {
      pigeon = s;
      k = j;
    }
  }
  return { simple, pigeon, k, best: Math.max(simple, pigeon) };
}

export type Fit = { fits: true; loads: number[] } | { fits: false; exhaustive: boolean; nodes: number };

/**
 * Whether the jobs `p` (sorted down) fit on `n` workers each finishing by `cap`: a depth-first
 * search placing the costliest job first, never trying two workers of equal load for one job
 * (so one empty worker), cut where what is left exceeds the room left. `exhaustive: false`:
 * stopped at `nodeLimit` nodes without an answer.
 */
export function fitsBy(p: readonly number[], n: number, cap: number, nodeLimit = 2_000_000): Fit {
  const loads = new Float64Array(n);
  const suffix = new Float64Array(p.length + 1);
  for (let i = p.length - 1; i >= 0; i--) suffix[i] = (suffix[i + 1] as number) + (p[i] as number);
  let nodes = 0;
  let stopped = false;
  const eps = 1e-9;
  const place = (i: number): boolean => {
    if (i === p.length) return true;
    if (++nodes > nodeLimit) {
      stopped = true;
      return false;
    }
    const x = p[i] as number;
    const least = p[p.length - 1] as number;
    // room that can still take a job: a worker with less than the smallest job's room is closed
    let room = 0;
    for (let w = 0; w < n; w++) {
      const r = cap - (loads[w] as number);
      if (r + eps >= least) room += r;
    }
    if ((suffix[i] as number) > room + eps) return false;
    // fullest worker that takes it first (best fit: finds a packing soon when there is one)
    const order: number[] = [];
    for (let w = 0; w < n; w++) if ((loads[w] as number) + x <= cap + eps) order.push(w);
    order.sort((a, b) => (loads[b] as number) - (loads[a] as number));
    const tried = new Set<number>();
    for (const w of order) {
      const l = loads[w] as number;
      if (tried.has(l)) continue;
      tried.add(l);
      loads[w] = l + x;
      if (place(i + 1)) return true;
      loads[w] = l;
      if (stopped) return false;
    }
    return false;
  };
  if (place(0)) return { fits: true, loads: Array.from(loads) };
  return { fits: false, exhaustive: !stopped, nodes };
}

export interface Optimum {
  /** The least makespan found, with the loads of that schedule. */
  upper: number;
  /** Proven: no schedule finishes before it. */
  lower: number;
  /** upper = lower within `tolerance` (relative). */
  exact: boolean;
  /** Whether some schedule finishes by `target`: true / false proven, null undecided. */
  meets: boolean | null;
}

/**
 * The optimal makespan of `p` (sorted down) on `n` workers, between the lower bounds and a
 * known schedule's makespan `upper`, by bisection on {@link fitsBy} to a relative `tolerance`;
 * first, whether any schedule finishes by `target` (the question the simulation asks). A step the
 * search cannot decide within its node limit leaves the bracket open.
 */
export function optimum(p: readonly number[], n: number, upper: number, target: number, tolerance = 0.001, nodeLimit = 2_000_000): Optimum {
  let lo = lowerBounds(p, n).best;
  let hi = upper;
  let meets: boolean | null = lo > target ? false : hi <= target ? true : null;
  if (meets === null) {
    const t = fitsBy(p, n, target, nodeLimit);
    if (t.fits) {
      meets = true;
      hi = Math.max(...t.loads);
    } else if (t.exhaustive) {
      meets = false;
      lo = target;
    }
  }
  while (hi - lo > tolerance * lo) {
    const mid = (lo + hi) / 2;
    const f = fitsBy(p, n, mid, nodeLimit);
    if (f.fits) hi = Math.max(...f.loads);
    else if (f.exhaustive) lo = mid;
    else return { upper: hi, lower: lo, exact: false, meets };
  }
  return { upper: hi, lower: lo, exact: true, meets };
}
