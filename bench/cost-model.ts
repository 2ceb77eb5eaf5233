/**
 * Fitting and checking the scheduler's cost model (src/pool/cost.ts) against measured costs: a
 * non-negative least-squares fit of its coefficients on relative error (every conversation
 * counts alike, short or long), and the estimate's relative error per corpus. Used by the
 * scheduling simulation (bench/schedule.ts, `--fit`).
 */
import { COST_MODEL, costOf, type LineFeatures } from "../src/pool/cost.js";

export type Model = typeof COST_MODEL;

const TERMS = ["perRequest", "perChar", "perAssistantChar", "perToolChar", "perHistoryMessage"] as const;

function termsOf(f: LineFeatures): number[] {
  return [f.requests, f.messageChars, f.assistantChars, f.toolChars, f.historyMessages];
}

/**
 * Coefficients ≥ 0 minimising Σ (estimate / measured − 1)² over the rows (coordinate descent on
 * the normal equations, columns scaled to unit length).
 */
export function fitModel(rows: ReadonlyArray<{ features: LineFeatures; ms: number }>): Model {
  const X = rows.filter((r) => r.ms > 0).map((r) => termsOf(r.features).map((v) => v / r.ms));
  const m = TERMS.length;
  const scale = TERMS.map((_, j) => Math.sqrt(X.reduce((a, x) => a + (x[j] as number) ** 2, 0)) || 1);
  const Z = X.map((x) => x.map((v, j) => v / (scale[j] as number)));
  const G = TERMS.map((_, i) => TERMS.map((__, j) => Z.reduce((a, z) => a + (z[i] as number) * (z[j] as number), 0)));
  const g = TERMS.map((_, i) => Z.reduce((a, z) => a + (z[i] as number), 0));
  const w = new Array<number>(m).fill(0);
  for (let it = 0; it < 5000; it++) {
    for (let i = 0; i < m; i++) {
      const Gi = G[i] as number[];
      if ((Gi[i] as number) === 0) continue;
      let r = g[i] as number;
      for (let j = 0; j < m; j++) if (j !== i) r -= (Gi[j] as number) * (w[j] as number);
      w[i] = Math.max(0, r / (Gi[i] as number));
    }
  }
  const c = w.map((v, j) => v / (scale[j] as number));
  return Object.freeze({ perRequest: c[0] as number, perChar: c[1] as number, perAssistantChar: c[2] as number, perToolChar: c[3] as number, perHistoryMessage: c[4] as number });
}

export function estimate(f: LineFeatures | null, chars: number, model: Model): number {
  return f === null ? model.perChar * chars : costOf(f, model);
}

export interface ErrorStats {
  median: number;
  p90: number;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/**
 * |estimate × s / measured − 1| per row, median and p90; `s` is one factor for a whole set (the
 * caller's: the estimates' total over every corpus made the measured total — only ratios decide a
 * schedule).
 */
export function relativeError(est: readonly number[], ms: readonly number[], s: number): ErrorStats {
  const e = est.map((x, i) => Math.abs((x * s) / (ms[i] as number) - 1)).sort((a, b) => a - b);
  return { median: quantile(e, 0.5), p90: quantile(e, 0.9) };
}
