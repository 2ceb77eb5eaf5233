/**
 * The Python-exact chat-template renderer: compiles a Jinja2 template once and renders it with
 * output byte-identical to Hugging Face transformers' `apply_chat_template` (Python Jinja2
 * `ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols,
 * generation])`, HF's `tojson`, `raise_exception`, `strftime_now`).
 *
 * Layer: template (imports errors and json only).
 */
import type { MessageMarks } from "./jinja/runtime.js";
import { DeltatokError } from "../errors.js";
import type { ErrorCode } from "../errors.js";
import type { AnyNode, TemplateNode } from "./jinja/ast.js";
import { compileTree } from "./jinja/compiler.js";
import type { CompiledRoot } from "./jinja/compile-support.js";
import { compileTracked, type TrackedRoot } from "./incremental/tracked-compiler.js";
import { makeGlobals } from "./jinja/globals.js";
import { parseTemplate } from "./jinja/parser.js";
import { PyError } from "./jinja/pyerror.js";
import { RenderState } from "./jinja/runtime.js";
import { PathSpace, TrackingBudgetError } from "./incremental/paths.js";
import { ReplayError, Trace, emptyStats } from "./incremental/records.js";
import { Tracker } from "./incremental/track.js";
import type { IncrementalStats } from "./incremental/records.js";
export type { IncrementalStats };
import { childNodes } from "./jinja/symbols.js";

export interface CompileOptions {
  /** Reserved for future use (e.g. alternative environments). */
  readonly name?: string;
}

export interface RenderBudget {
  /** Evaluation steps (statements, loop iterations, calls, per-item work in filters). Default 50,000,000. */
  maxSteps?: number;
  /** Largest single output or intermediate string, in UTF-16 units (lists: a sixteenth as many items). Default 256M. */
  maxOutputChars?: number;
  /**
   * The build budget: the total size of everything a render builds — its output and every
   * string, list, dict or big int an operation makes, charged before it is made — in units of
   * one UTF-16 code unit (≤ 2 bytes); a list item counts 16, a dict entry 48, a template-made
   * object 64 (src/template/jinja/ops.ts). Bounds what one render can allocate, whatever it keeps.
   * Default 128 Mi units (see DEFAULT_BUDGET).
   */
  maxBuildUnits?: number;
  /**
   * Deepest nesting of macro calls / recursive loops. Default 198: where CPython's default
   * recursion limit makes Jinja2 raise RecursionError for nested macro calls.
   */
  maxDepth?: number;
  /**
   * Incremental renders: the largest tracking state one render may add (records, observations,
   * snapshots of observed values, new paths; estimated bytes). Past it the render is done whole,
   * untracked — the same output — and counted as fallback `tracking_budget`; the conversation's
   * later renders are then whole too. Default 32 MiB.
   */
  maxTrackBytes?: number;
}

export interface RenderOptions {
  /** Record where each message's rendering began (RenderResult.messageStarts). Plain renders only. */
  messageStarts?: boolean;
  /** strftime_now's clock; its UTC fields are the naive datetime. Default: the current local time. */
  now?: Date;
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

export interface RenderResult {
  /**
   * With `messageStarts`: for each message (by index), the offset in `text` where the first loop
   * iteration over that message object that wrote output began; -1 when none did.
   */
  messageStarts?: number[];
  /** With `messageStarts`: where each of those iterations' output ended (-1: none). */
  messageEnds?: number[];
  text: string;
  /** [start, end) UTF-16 offsets into text of each {% generation %} body, in order */
  generation: Array<[number, number]>;
  /** evaluation steps used (for budgets and for tests that bound work) */
  steps: number;
  /** build units charged (RenderBudget.maxBuildUnits): what the render built, output included */
  built: number;
}

/** A previous incremental render of the same conversation (what the engine kept of it). */
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

/**
 * What Python raised, attached as `cause` of template DeltatokErrors: `pythonType: pythonMessage`
 * is exactly the error string the reference renderer (shared/oracle/render.py) prints.
 */
export class TemplateErrorDetail {
  readonly pythonType: string;
  readonly pythonMessage: string;
  readonly line: number | undefined;
  constructor(pythonType: string, pythonMessage: string, line: number | undefined) {
    this.pythonType = pythonType;
    this.pythonMessage = pythonMessage;
    this.line = line;
  }
  toString(): string {
    return `${this.pythonType}: ${this.pythonMessage}`;
  }
}

/** The reference's error string (`TypeError: ...`) for a template DeltatokError, else null. */
export function pythonErrorString(e: unknown): string | null {
  if (e instanceof DeltatokError && e.cause instanceof TemplateErrorDetail) return e.cause.toString();
  return null;
}

export const DEFAULT_BUDGET: Readonly<Required<RenderBudget>> = Object.freeze({
  maxSteps: 50_000_000,
  maxOutputChars: 256 * 1024 * 1024,
  maxDepth: 198,
  maxBuildUnits: 128 * 1024 * 1024,
  maxTrackBytes: 32 * 1024 * 1024,
});

const GLOBALS = makeGlobals();

function toDeltatok(e: unknown): DeltatokError {
  if (e instanceof DeltatokError) return e;
  if (e instanceof PyError) {
    const detail = new TemplateErrorDetail(e.pyType, e.message, e.lineno);
    let message: string;
    if (e.code === "DT_TEMPLATE_RAISED") message = e.message;
    else if (e.code === "DT_TEMPLATE_SYNTAX") message = `${e.pyType}: ${e.message}${e.lineno !== undefined ? ` (line ${e.lineno})` : ""}`;
    else message = `${e.pyType}: ${e.message}`;
    return new DeltatokError(e.code as ErrorCode, message, { cause: detail });
  }
  if (e instanceof RangeError) {
    const detail = new TemplateErrorDetail("RecursionError", e.message, undefined);
    return new DeltatokError("DT_TEMPLATE_BUDGET", `template evaluation too deep or too large: ${e.message}`, { cause: detail });
  }
  const msg = e instanceof Error ? e.message : String(e);
  return new DeltatokError("DT_INTERNAL", `template engine failure: ${msg}`, { cause: e });
}

function usesName(node: AnyNode, name: string): boolean {
  if (node.kind === "Name" && node.name === name) return true;
  for (const c of childNodes(node)) if (usesName(c, name)) return true;
  return false;
}

class Template implements CompiledTemplate {
  readonly source: string;
  readonly readsClock: boolean;
  readonly #root: CompiledRoot;
  readonly #tree: TemplateNode;
  #tracked: TrackedRoot | null = null;

  constructor(source: string, tree: TemplateNode, root: CompiledRoot) {
    this.source = source;
    this.readsClock = usesName(tree, "strftime_now");
    this.#root = root;
    this.#tree = tree;
  }

  #state(vars: Record<string, unknown>, options: RenderOptions): RenderState {
    if (typeof vars !== "object" || vars === null) {
      throw new DeltatokError("DT_INVALID_OPTION", "render vars must be an object");
    }
    const b = options.budget ?? {};
    return new RenderState(vars, GLOBALS, options.now, {
      maxSteps: b.maxSteps ?? DEFAULT_BUDGET.maxSteps,
      maxOutputChars: b.maxOutputChars ?? DEFAULT_BUDGET.maxOutputChars,
      maxDepth: b.maxDepth ?? DEFAULT_BUDGET.maxDepth,
      maxBuildUnits: b.maxBuildUnits ?? DEFAULT_BUDGET.maxBuildUnits,
    });
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
    const rs = this.#state(vars, options);
    let marks: MessageMarks | null = null;
    if (options.messageStarts === true && Array.isArray(vars.messages)) {
      const index = new Map<object, number>();
      (vars.messages as unknown[]).forEach((m, i) => {
        if (typeof m === "object" && m !== null && !index.has(m)) index.set(m, i);
      });
      const n = (vars.messages as unknown[]).length;
      marks = rs.marks = { index, starts: new Array<number>(n).fill(-1), ends: new Array<number>(n).fill(-1) };
    }
    try {
      this.#root.run(rs);
    } catch (e) {
      throw toDeltatok(e);
    }
    const out: RenderResult = { text: rs.out, generation: rs.generation, steps: rs.steps, built: rs.built };
    if (marks !== null) {
      out.messageStarts = marks.starts;
      out.messageEnds = marks.ends;
    }
    return out;
  }

  renderIncremental(vars: Record<string, unknown>, options: RenderOptions = {}, prev: PreviousRender | null = null): IncrementalResult {
    let tracked = this.#tracked;
    if (tracked === null) {
      try {
        tracked = this.#tracked = compileTracked(this.#tree);
      } catch (e) {
        throw toDeltatok(e);
      }
    }
    let trace = prev !== null && prev.trace instanceof Trace && prev.trace.owner === this ? prev.trace : null;
    if (trace !== null && trace.untracked) return this.#untracked(vars, options);
    const space = trace?.space ?? new PathSpace();
    const maxTrack = options.budget?.maxTrackBytes ?? DEFAULT_BUDGET.maxTrackBytes;
    for (;;) {
      const rs = this.#state(vars, options);
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
  void options;
  if (typeof source !== "string") throw new DeltatokError("DT_INVALID_OPTION", "template source must be a string");
  let tree: TemplateNode;
  let root: CompiledRoot;
  try {
    tree = parseTemplate(source);
    root = compileTree(tree);
  } catch (e) {
    if (e instanceof RangeError) {
      throw new DeltatokError("DT_TEMPLATE_BUDGET", "template nesting too deep to compile", {
        cause: new TemplateErrorDetail("RecursionError", "maximum recursion depth exceeded", undefined),
      });
    }
    throw toDeltatok(e);
  }
  return new Template(source, tree, root);
}
