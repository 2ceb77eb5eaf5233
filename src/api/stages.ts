/**
 * The stages of a prompt request, seen from outside the Deltatok: the seam `deltatok verify` uses
 * to say which stage of a wrong answer first disagrees (docs/DEBUGGING.md), and the place tests
 * inject faults into one stage.
 *
 * A prompt request runs render (incremental where it can be) → splice (the reused prefix's ids,
 * then the rest encoded) → encoder. `STAGE_HOOKS` on a Deltatok holds hooks it calls with each
 * stage's output; a hook may return a replacement, which is how tests make one stage wrong.
 * Triage compares each output with what the same Deltatok computes without that stage: the
 * incremental render with a whole render, the spliced ids with one encode of the same render,
 * and (the third stage, a hook for the caller) the Deltatok's encoder with a reference encoder.
 *
 * Internal: none of this is exported from the package.
 */
import { DeltatokError } from "../errors.js";
import type { PromptTokens, Rendered } from "../splice/splicer.js";
import type { ChatRenderer, IncrementalRenderOutput, PreviousRender, RenderHints, RenderOutput } from "../render/renderer.js";

/** The hooks of a Deltatok (`dt[STAGE_HOOKS]`; null: none). */
export const STAGE_HOOKS: unique symbol = Symbol("deltatok.stageHooks");
/** `dt[ENCODE_WHOLE](text)`: one encode of a render with the Deltatok's encoder, no cache. */
export const ENCODE_WHOLE: unique symbol = Symbol("deltatok.encodeWhole");

export interface StageHooks {
  /**
   * The render a prompt request tokenizes, as the renderer produced it (`incremental`: rendered
   * against the conversation's previous render; false: a whole render). Return a replacement to
   * make the render stage wrong (tests only).
   */
  rendered?(r: Rendered, incremental: boolean): Rendered | void;
  /** The answer of the splice (or of the one encode in full mode). Return a replacement to make it wrong (tests only). */
  tokenized?(t: PromptTokens): PromptTokens | void;
}

/** Hooks that run `first`, then `then` on what `first` returned. */
export function composeStageHooks(first: StageHooks | null, then: StageHooks): StageHooks {
  if (first === null) return then;
  return {
    rendered: (r, incremental) => {
      const a = first.rendered?.(r, incremental) ?? r;
      return then.rendered?.(a, incremental) ?? a;
    },
    tokenized: (t) => {
      const a = first.tokenized?.(t) ?? t;
      return then.tokenized?.(a) ?? a;
    },
  };
}

/** Calls `hooks.rendered` when there is one. */
export function hookRendered(hooks: StageHooks | null, r: Rendered, incremental: boolean): Rendered {
  return hooks?.rendered === undefined ? r : (hooks.rendered(r, incremental) ?? r);
}

/** Calls `hooks.tokenized` when there is one. */
export function hookTokenized(hooks: StageHooks | null, t: PromptTokens): PromptTokens {
  return hooks?.tokenized === undefined ? t : (hooks.tokenized(t) ?? t);
}

/**
 * An incremental render checked against a whole render of the same request (option
 * `checkIncrementalRender`): the same text, generation spans and error, else DT_INTERNAL naming
 * the first differing offset.
 */
export function checkedIncrementalRender(
  renderer: ChatRenderer,
  vars: Record<string, unknown>,
  now: Date,
  prev: PreviousRender | null,
  hints: RenderHints,
): IncrementalRenderOutput {
  const incremental = renderer.renderIncremental as NonNullable<ChatRenderer["renderIncremental"]>;
  let want: RenderOutput | null = null;
  let wantErr: unknown = null;
  try {
    want = renderer.render(vars, now);
  } catch (e) {
    wantErr = e;
  }
  let got: IncrementalRenderOutput;
  try {
    got = incremental.call(renderer, vars, now, prev, hints);
  } catch (e) {
    if (wantErr === null || !sameError(e, wantErr)) {
      throw new DeltatokError("DT_INTERNAL", `checkIncrementalRender: the incremental render failed differently from the whole render: ${String(e)} vs ${String(wantErr)}`);
    }
    throw e;
  }
  if (want === null) throw new DeltatokError("DT_INTERNAL", `checkIncrementalRender: the incremental render succeeded where the whole render failed: ${String(wantErr)}`);
  const text = got.segments.join("");
  if (text !== want.text) {
    throw new DeltatokError("DT_INTERNAL", `checkIncrementalRender: the incremental render differs from the whole render at offset ${firstDifference(text, want.text)}`);
  }
  if (JSON.stringify(got.generation) !== JSON.stringify(want.generation)) {
    throw new DeltatokError("DT_INTERNAL", "checkIncrementalRender: the incremental render's generation spans differ from the whole render's");
  }
  return got;
}

function sameError(a: unknown, b: unknown): boolean {
  return a instanceof DeltatokError && b instanceof DeltatokError && a.code === b.code && a.message === b.message;
}

/** The first offset where two strings differ (the shorter one's length when one is a prefix of the other). */
export function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
