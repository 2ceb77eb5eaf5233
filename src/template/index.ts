/**
 * The chat-template renderer deltatok uses: the Python-exact Jinja2 engine (./jinja, whole
 * renders) plus incremental rendering on top of it (./incremental: a conversation's next render
 * replays the units of its previous one whose observed inputs are unchanged).
 *
 * Layer: template (imports errors and json, and its two parts).
 */
import { compile, ENGINE_BUDGET, toDeltatok, type JinjaTemplate } from "./jinja/template.js";
import type { RenderBudget as EngineBudget, RenderOptions as EngineOptions, RenderResult } from "./jinja/template.js";
import { compileTracked, type TrackedRoot } from "./incremental/tracked-compiler.js";
import { PathSpace, TrackingBudgetError } from "./incremental/paths.js";
import { ReplayError, Trace, emptyStats } from "./incremental/records.js";
import { Tracker } from "./incremental/tracker.js";
import type { IncrementalStats } from "./incremental/records.js";
export type { IncrementalStats };
export { TemplateErrorDetail, pythonErrorString } from "./jinja/template.js";
export type { CompileOptions, RenderResult } from "./jinja/template.js";
import type { CompileOptions } from "./jinja/template.js";

export interface RenderBudget extends EngineBudget {
  /**
   * Incremental renders: the largest tracking state one render may add (records, observations,
   * snapshots of observed values, new paths; estimated bytes). Past it the render is done whole,
   * untracked — the same output — and counted as fallback `tracking_budget`; the conversation's
   * later renders are then whole too. Default 32 MiB.
   */
  maxTrackBytes?: number;
}

export interface RenderOptions extends EngineOptions {
  budget?: RenderBudget;
  /**
   * Incremental renders only: content versions of the items of `vars.messages` (the list
   * object itself, and per index a version: equal versions at two renders prove the item is the
   * same object with the same content, -1 when unknown) — what `validateMessages` reports. An
   * iteration over an item whose version is unchanged since the previous render skips the
   * checks of what it read inside that item (INCREMENTAL.md, "Unchanged messages").
   */
  itemVersions?: { readonly list: readonly unknown[]; readonly versions: readonly number[] };
}

/** A previous incremental render of the same conversation (what the splicer kept with its cached render). */
export interface PreviousRender {
  /** the trace it returned */
  readonly trace: unknown;
  /** its segments */
  readonly segments: readonly string[];
}

export interface IncrementalResult {
  /** the rendered text in pieces (concatenated, they are exactly what render() returns) */
  segments: string[];
  /** how many leading segments are the very strings of the previous render's segments */
  reusedSegments: number;
  /** state to pass back with the next render of this conversation */
  trace: Trace;
  /** estimated bytes held by the trace */
  traceBytes: number;
  generation: Array<[number, number]>;
  /** evaluation steps of a full render (replayed units count their recorded steps) */
  steps: number;
  /** build units of a full render (replayed units count their recorded charges) */
  built: number;
  /** work done: units and iterations reused / executed, observations checked, fallbacks */
  stats: IncrementalStats;
}

export interface CompiledTemplate {
  readonly source: string;
  /** true when the template can call strftime_now (so the date is a render input) */
  readonly readsClock: boolean;
  render(vars: Record<string, unknown>, options?: RenderOptions): RenderResult;
  /**
   * Renders reusing the previous render of the same conversation: its units (top-level
   * statements, loop iterations) whose observed inputs are unchanged are replayed, the rest
   * executed. The output (and any error) is exactly render()'s. See INCREMENTAL.md.
   */
  renderIncremental(vars: Record<string, unknown>, options: RenderOptions, prev: PreviousRender | null): IncrementalResult;
}

export const DEFAULT_BUDGET: Readonly<Required<RenderBudget>> = Object.freeze({
  ...ENGINE_BUDGET,
  maxTrackBytes: 32 * 1024 * 1024,
});

class Template implements CompiledTemplate {
  readonly source: string;
  readonly readsClock: boolean;
  readonly #engine: JinjaTemplate;
  #tracked: TrackedRoot | null = null;

  constructor(engine: JinjaTemplate) {
    this.source = engine.source;
    this.readsClock = engine.readsClock;
    this.#engine = engine;
  }

  /**
   * An incremental render done whole, untracked (past the tracking bound): the same result as
   * render(), one segment, and a trace that keeps the conversation's later renders whole.
   */
  #untracked(vars: Record<string, unknown>, options: RenderOptions): IncrementalResult {
    const r = this.render(vars, { now: options.now, budget: options.budget });
    const stats = emptyStats();
    stats.trackingBudget = 1;
    const trace = new Trace(this, new PathSpace(), [], 256, null, 1, true);
    return { segments: [r.text], reusedSegments: 0, trace, traceBytes: trace.bytes, generation: r.generation, steps: r.steps, built: r.built, stats };
  }

  render(vars: Record<string, unknown>, options: RenderOptions = {}): RenderResult {
    return this.#engine.render(vars, options);
  }

  renderIncremental(vars: Record<string, unknown>, options: RenderOptions = {}, prev: PreviousRender | null = null): IncrementalResult {
    let tracked = this.#tracked;
    if (tracked === null) {
      try {
        tracked = this.#tracked = compileTracked(this.#engine.tree);
      } catch (e) {
        throw toDeltatok(e);
      }
    }
    let trace = prev !== null && prev.trace instanceof Trace && prev.trace.owner === this ? prev.trace : null;
    if (trace !== null && trace.untracked) return this.#untracked(vars, options);
    const space = trace?.space ?? new PathSpace();
    const maxTrack = options.budget?.maxTrackBytes ?? DEFAULT_BUDGET.maxTrackBytes;
    for (;;) {
      const rs = this.#engine.state(vars, options);
      const tk = new Tracker(rs, trace, space, tracked.conds, tracked.condPos, maxTrack);
      rs.observer = tk;
      const iv = options.itemVersions;
      if (iv !== undefined) tk.setVersions(iv.list, iv.versions);
      try {
        tracked.run(rs);
      } catch (e) {
        // a record that validated but cannot be replayed (not expected): render without the trace
        if (e instanceof ReplayError && trace !== null) {
          trace = null;
          continue;
        }
        // past the tracking bound: the same render, whole
        if (e instanceof TrackingBudgetError || tk.tb.over) return this.#untracked(vars, options);
        throw toDeltatok(e);
      } finally {
        tk.close();
      }
      if (tk.tb.over) return this.#untracked(vars, options);
      const segments = tk.takeSegments();
      let reused = 0;
      if (prev !== null && trace !== null) {
        const ps = prev.segments;
        const n = Math.min(segments.length, ps.length);
        const fresh = tk.firstFresh < 0 ? n : Math.min(n, tk.firstFresh);
        while (reused < fresh && segments[reused] === ps[reused]) reused++;
      }
      const t = tk.finish(this, tk.top);
      return { segments, reusedSegments: reused, trace: t, traceBytes: t.bytes, generation: rs.generation, steps: rs.steps, built: rs.built, stats: tk.stats };
    }
  }
}

/** Compiles a chat template; throws DT_TEMPLATE_SYNTAX with Jinja2's message. */
export function compileTemplate(source: string, options: CompileOptions = {}): CompiledTemplate {
  return new Template(compile(source, options));
}
