/**
 * The scheduling simulation's arithmetic of what no schedule can beat (bench/schedule-bounds.ts):
 * the lower bounds, the exact packing search, and the optimum between them, on instances small
 * enough to check by hand.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fitsBy, lowerBounds, optimum } from "../bench/schedule-bounds.js";

test("lowerBounds: max(total / N, longest) and the pigeonhole bound", () => {
  // three jobs on two workers: one worker runs two of them
  const b = lowerBounds([18, 14, 12], 2);
  assert.equal(b.simple, 22);
  assert.equal(b.pigeon, 26);
  assert.equal(b.k, 1);
  assert.equal(b.best, 26);
  // seven equal jobs on three workers: one runs three of them (k = 2)
  const c = lowerBounds([1, 1, 1, 1, 1, 1, 1], 3);
  assert.equal(c.simple, 7 / 3);
  assert.deepEqual([c.pigeon, c.k], [3, 2]);
  // no more jobs than workers: the longest
  assert.deepEqual(lowerBounds([5, 4], 3), { simple: 5, pigeon: 0, k: 0, best: 5 });
});

test("fitsBy: finds a packing when there is one, proves there is none otherwise", () => {
  const f = fitsBy([3, 3, 2, 2, 2], 2, 6);
  assert.equal(f.fits, true);
  if (f.fits) assert.deepEqual([...f.loads].sort(), [6, 6]);
  const g = fitsBy([3, 3, 2, 2, 2], 2, 5.9);
  assert.deepEqual(g.fits, false);
  if (!g.fits) assert.equal(g.exhaustive, true);
  const h = fitsBy([3, 3, 2, 2, 2], 2, 6, 1);
  assert.equal(h.fits, false);
  if (!h.fits) assert.equal(h.exhaustive, false, "stopped at the node limit: undecided");
});

test("optimum: below what longest-first list scheduling gets, and whether a target is met", () => {
  // LPT: 3 | 3, then 2 → 5 | 3, 2 → 5 | 5, 2 → 7; the optimum is 3 + 3 | 2 + 2 + 2 = 6
  const o = optimum([3, 3, 2, 2, 2], 2, 7, 6.3);
  assert.deepEqual(o, { upper: 6, lower: 6, exact: true, meets: true });
  // the target below the pigeonhole bound: proven unreachable without a search
  const p = optimum([18, 14, 12], 2, 26, 23.1);
  assert.equal(p.meets, false);
  assert.equal(p.upper, 26);
});
