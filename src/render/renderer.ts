/**
 * A chat-template renderer: template source in, rendered text out. Two kinds exist:
 * - "python": deltatok's own evaluator with Python Jinja2 semantics (src/template), the default;
 *   its output is byte-identical to transformers' apply_chat_template.
 * - "hf-jinja": @huggingface/jinja, what transformers.js uses; kept for comparison benchmarks and
 *   as an explicit opt-in. It differs from Python on some inputs (COMPATIBILITY.md).
 */
import { Environment, Interpreter, parse, tokenize } from "@huggingface/jinja";
import { DeltatokError } from "../errors.js";
import type { IncrementalStats, PreviousRender, RenderBudget } from "../template/index.js";
import { PythonRenderer } from "./python.js";

export type RendererKind = "python" | "hf-jinja";

export interface RenderOutput {
  text: string;
  /** [start, end) UTF-16 offsets of each `{% generation %}` body, in order. */
  generation: Array<[number, number]>;
}

/** Work counters of incremental renders (see src/template/incremental/INCREMENTAL.md). */
export type RenderWork = IncrementalStats;

/** A previous render of the same conversation, as the splicer kept it (declared by the template layer). */
export type { PreviousRender } from "../template/index.js";

/** An incremental render: the text in segments plus the state to pass to the next one. */
export interface IncrementalRenderOutput {
  /** Concatenated, exactly the text render() returns. */
  segments: readonly string[];
  /** How many leading segments are identical to the previous render's segments. */
  reusedSegments: number;
  /** Renderer state for the next render of this conversation. */
  trace: unknown;
  /** Estimated bytes held by `trace`. */
  traceBytes: number;
  generation: Array<[number, number]>;
  work: RenderWork;
}

/** A render with where each message began (trajectory tokenization). */
export interface MarkedRender extends RenderOutput {
  /** Per message index: offset in text where its rendering began, or -1. */
  messageStarts: number[];
  /** Per message index: offset in text where that iteration's output ended, or -1. */
  messageEnds: number[];
}

export interface ChatRenderer {
  /** Renders and reports where each message began; absent when the renderer cannot. */
  renderMarked?(vars: Record<string, unknown>, now: Date): MarkedRender;
  readonly kind: RendererKind;
  readonly source: string;
  /** Whether the template can call strftime_now (the date is then a render input). */
  readonly readsClock: boolean;
  render(vars: Record<string, unknown>, now: Date): RenderOutput;
  /**
   * Optional: renders reusing `prev` (the previous render of the same conversation), with output
   * byte-identical to render(). Renderers without it are always used whole-text.
   */
  renderIncremental?(vars: Record<string, unknown>, now: Date, prev: PreviousRender | null, hints?: RenderHints): IncrementalRenderOutput;
}

/** What the Deltatok knows about a request's inputs that can spare an incremental render work. */
export interface RenderHints {
  /** Content version of each of `vars.messages`' items (validateMessages' `versions`; -1: unknown). */
  readonly messageVersions?: readonly number[];
}

/** Marks errors raised by the template's own raise_exception. */
class RaisedByTemplate extends Error {}

class HfJinjaRenderer implements ChatRenderer {
  readonly kind = "hf-jinja" as const;
  readonly readsClock: boolean;
  readonly #program: ReturnType<typeof parse>;

  constructor(readonly source: string) {
    this.readsClock = source.includes("strftime_now");
    try {
      this.#program = parse(tokenize(source, { lstrip_blocks: true, trim_blocks: true }));
    } catch (e) {
      throw new DeltatokError("DT_TEMPLATE_SYNTAX", `template syntax error: ${(e as Error)?.message ?? e}`, { cause: e });
    }
  }

  render(vars: Record<string, unknown>, now: Date): RenderOutput {
    // The globals @huggingface/jinja's Template sets, with a settable clock and a
    // raise_exception we can tell apart from other failures.
    const env = new Environment();
    const globals: Record<string, unknown> = {
      false: false,
      true: true,
      none: null,
      False: false,
      True: true,
      None: null,
      range: pyRange,
      raise_exception: (msg: unknown) => {
        throw new RaisedByTemplate(String(msg));
      },
      strftime_now: (fmt: string) => simpleStrftime(fmt, now),
    };
    try {
      for (const [k, v] of Object.entries(globals)) env.set(k, v);
      for (const [k, v] of Object.entries(vars)) {
        if (k in globals) env.variables.delete(k);
        env.set(k, v);
      }
      return { text: new Interpreter(env).run(this.#program).value as string, generation: [] };
    } catch (e) {
      if (e instanceof RaisedByTemplate) throw new DeltatokError("DT_TEMPLATE_RAISED", e.message);
      throw new DeltatokError("DT_TEMPLATE_RUNTIME", `template failed: ${(e as Error)?.message ?? e}`, { cause: e });
    }
  }
}

function pyRange(start: number, stop?: number, step = 1): number[] {
  if (stop === undefined) {
    stop = start;
    start = 0;
  }
  if (step === 0) throw new Error("range() arg 3 must not be zero");
  const out: number[] = [];
  if (step > 0) for (let i = start; i < stop; i += step) out.push(i);
  else for (let i = start; i > stop; i += step) out.push(i);
  return out;
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** The few directives chat templates use (naive datetime in the UTC fields); the python renderer implements all of them. */
function simpleStrftime(fmt: string, d: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return fmt.replace(/%([a-zA-Z%])/g, (m, c: string) => {
    switch (c) {
      case "d": return pad(d.getUTCDate());
      case "m": return pad(d.getUTCMonth() + 1);
      case "Y": return String(d.getUTCFullYear());
      case "y": return pad(d.getUTCFullYear() % 100);
      case "b": return MONTHS[d.getUTCMonth()]!.slice(0, 3);
      case "B": return MONTHS[d.getUTCMonth()]!;
      case "a": return DAYS[d.getUTCDay()]!.slice(0, 3);
      case "A": return DAYS[d.getUTCDay()]!;
      case "H": return pad(d.getUTCHours());
      case "M": return pad(d.getUTCMinutes());
      case "S": return pad(d.getUTCSeconds());
      case "%": return "%";
      default: return m;
    }
  });
}

const factories: ReadonlyMap<RendererKind, (source: string, budget: RenderBudget | undefined) => ChatRenderer> = new Map<
  RendererKind,
  (source: string, budget: RenderBudget | undefined) => ChatRenderer
>([
  ["python", (s, b) => new PythonRenderer(s, b)],
  ["hf-jinja", (s) => new HfJinjaRenderer(s)],
]);

/**
 * Compiles `source` with the renderer of the given kind, rendering within `budget` (the python
 * renderer; hf-jinja has no budgets). Throws on an unknown kind.
 */
export function createRenderer(kind: RendererKind, source: string, budget?: RenderBudget): ChatRenderer {
  const f = factories.get(kind);
  if (f === undefined) {
    throw new DeltatokError("DT_INVALID_OPTION", `unknown renderer "${String(kind)}" (known: ${[...factories.keys()].join(", ")})`);
  }
  return f(source, budget);
}
