/** Shared pieces of the property tests. */
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions, PromptOptions } from "../src/api/options.js";
import { toDeltatokError } from "../src/errors.js";

import { TEST_RENDERER } from "../test/helpers/renderer.js";

/** Ids of a prompt, or the error code it failed with. */
export type Outcome = { ids: number[] } | { error: string };

export function outcome(dt: Deltatok, messages: unknown[], options: PromptOptions): Outcome {
  try {
    return { ids: Array.from(dt.encodePrompt(messages, options)) };
  } catch (e) {
    return { error: toDeltatokError(e).code };
  }
}

/** An incremental and a full Deltatok on the same tokenizer/template. */
export async function enginePair(options: DeltatokOptions): Promise<{ inc: Deltatok; full: Deltatok }> {
  const base: DeltatokOptions = { date: "2026-11-30", renderer: TEST_RENDERER, ...options };
  const [inc, full] = await Promise.all([Deltatok.create({ ...base, mode: "incremental" }), Deltatok.create({ ...base, mode: "full" })]);
  return { inc, full };
}

/** First differing index of two id arrays, for failure messages. */
export function firstDiff(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}
