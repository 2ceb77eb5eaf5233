/**
 * Streams a text into a fresh text counter in chunks of the given sizes (cycled) and asserts,
 * after every append, that the count (and with `ids`, the ids) equal the whole encode of the text
 * counted so far, then that `finish()` equals the whole count and no open run mismatched. Shared
 * by the streaming property tests (test/tokenize-stream-cjk*.test.ts); returns the counter's stats.
 */
import assert from "node:assert/strict";
import type { Deltatok } from "../../src/api/deltatok.js";
import type { TextCounterStats } from "../../src/tokenize/stream.js";

export function streamChecked(dt: Deltatok, text: string, sizes: readonly number[], ids: boolean, label: string): TextCounterStats {
  const c = dt.textCounter({ ids });
  let at = 0;
  for (let k = 0; at < text.length; k++) {
    const chunk = text.slice(at, at + (sizes[k % sizes.length] as number));
    at += chunk.length;
    const got = c.append(chunk);
    // a trailing high surrogate is held back: the counted text is the complete pairs
    const counted = c.text;
    assert.equal(got, dt.countText(counted), `${label} after ${JSON.stringify(counted)}`);
    if (ids) assert.deepEqual(Array.from(c.ids()), Array.from(dt.encodeText(counted)), `${label} ids after ${JSON.stringify(counted)}`);
  }
  assert.equal(c.finish(), dt.countText(text));
  const s = c.stats();
  assert.equal(s.runMismatches, 0, `${label}: the open run disagreed with an encode`);
  return s;
}

/**
 * Streams `text` 2 characters per append, checking the count against a whole encode every
 * `checkEvery` characters and at the end; the counter's stats after.
 */
export function streamWork(dt: Deltatok, text: string, checkEvery: number): TextCounterStats {
  const c = dt.textCounter();
  for (let i = 0; i < text.length; i += 2) {
    const got = c.append(text.slice(i, i + 2));
    if (i % checkEvery === 0) assert.equal(got, dt.countText(text.slice(0, i + 2)));
  }
  assert.equal(c.finish(), dt.countText(text));
  return c.stats();
}

/**
 * An unpunctuated run (`run(n)`: n characters with no cut) streamed 2 characters per append, at
 * 6,000 and 12,000 characters: the open run answers (nearly) every append, and its work — suffix
 * lookups and compatibility checks, characters encoded — grows linearly (12k under 2.5× of 6k;
 * counted, never timed). Counts are checked along the way.
 */
export function assertLinearRun(dt: Deltatok, run: (n: number) => string): void {
  const work = (n: number): { steps: number; chars: number } => {
    const s = streamWork(dt, run(n), 1000);
    assert.equal(s.tailChars, n, "no cut in the run");
    assert.ok(s.runAppends >= n / 2 - 20, `${s.runAppends} appends by the run`);
    return { steps: s.runSteps, chars: s.charsEncoded };
  };
  const a = work(6000);
  const b = work(12000);
  assert.ok(b.steps < 2.5 * a.steps, `steps ${b.steps} for 12k, ${a.steps} for 6k`);
  assert.ok(b.chars < 2.5 * a.chars, `characters encoded ${b.chars} for 12k, ${a.chars} for 6k`);
  // without the open run every append re-encoded the whole tail: 9 M characters for 6k
  assert.ok(a.chars < 7000, `characters encoded ${a.chars} for 6k`);
}
