/**
 * The engine's compiled template: parse and compile a Jinja2 source once (the transformers
 * configuration), render it with variables, a clock and budgets; failures become coded
 * DeltatokErrors carrying Python's error string. Nothing here knows of incremental rendering
 * (../incremental builds on `tree` and `state`).
 *
 * Layer: template/jinja.
 */
import { DeltatokError } from "../../errors.js";
import type { ErrorCode } from "../../errors.js";
import type { AnyNode, TemplateNode } from "./ast.js";
import type { CompiledRoot } from "./compile-support.js";
import { compileTree } from "./compiler.js";
import { makeGlobals } from "./globals.js";
import { parseTemplate } from "./parser.js";
import { PyError } from "./pyerror.js";
import { RenderState, type MessageMarks } from "./runtime.js";
import { childNodes } from "./symbols.js";

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
   * object 64 (src/template/jinja/ops.ts). Bounds what one render can allocate, whatever it
   * keeps. Default 128 Mi units (see DEFAULT_BUDGET).
   */
  maxBuildUnits?: number;
  /**
   * Deepest nesting of macro calls / recursive loops. Default 198: where CPython's default
   * recursion limit makes Jinja2 raise RecursionError for nested macro calls.
   */
  maxDepth?: number;
}

export interface RenderOptions {
  /** Record where each message's rendering began (RenderResult.messageStarts). */
  messageStarts?: boolean;
  /** strftime_now's clock; its UTC fields are the naive datetime. Default: the current local time. */
  now?: Date;
  budget?: RenderBudget;
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

/** The engine's default budgets. */
export const ENGINE_BUDGET: Readonly<Required<RenderBudget>> = Object.freeze({
  maxSteps: 50_000_000,
  maxOutputChars: 256 * 1024 * 1024,
  maxDepth: 198,
  maxBuildUnits: 128 * 1024 * 1024,
});

const GLOBALS = makeGlobals();

/** A failure of compiling or rendering as the DeltatokError callers see. */
export function toDeltatok(e: unknown): DeltatokError {
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

/** A compiled template (see `compile`). */
export class JinjaTemplate {
  readonly source: string;
  /** true when the template can call strftime_now (so the date is a render input) */
  readonly readsClock: boolean;
  /** the syntax tree (for passes that compile it again, e.g. incremental tracking) */
  readonly tree: TemplateNode;
  readonly #root: CompiledRoot;

  constructor(source: string, tree: TemplateNode, root: CompiledRoot) {
    this.source = source;
    this.readsClock = usesName(tree, "strftime_now");
    this.tree = tree;
    this.#root = root;
  }

  /** A fresh render state for `vars` with the options' clock and budgets (defaults filled in). */
  state(vars: Record<string, unknown>, options: RenderOptions): RenderState {
    if (typeof vars !== "object" || vars === null) {
      throw new DeltatokError("DT_INVALID_OPTION", "render vars must be an object");
    }
    const b = options.budget ?? {};
    return new RenderState(vars, GLOBALS, options.now, {
      maxSteps: b.maxSteps ?? ENGINE_BUDGET.maxSteps,
      maxOutputChars: b.maxOutputChars ?? ENGINE_BUDGET.maxOutputChars,
      maxDepth: b.maxDepth ?? ENGINE_BUDGET.maxDepth,
      maxBuildUnits: b.maxBuildUnits ?? ENGINE_BUDGET.maxBuildUnits,
    });
  }

  /** Renders with `vars` (what HF passes: messages, tools, add_generation_prompt, ...). */
  render(vars: Record<string, unknown>, options: RenderOptions = {}): RenderResult {
    const rs = this.state(vars, options);
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
}

/**
 * Compiles a Jinja2 template as transformers does (`ImmutableSandboxedEnvironment(trim_blocks=True,
 * lstrip_blocks=True, extensions=[loopcontrols, generation])`, HF's `tojson`, `raise_exception`,
 * `strftime_now`). Throws DT_TEMPLATE_SYNTAX with Jinja2's message.
 */
export function compile(source: string, options: CompileOptions = {}): JinjaTemplate {
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
  return new JinjaTemplate(source, tree, root);
}
