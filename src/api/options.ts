/**
 * Options of the public API, and their normalization into a frozen, fully resolved object.
 */
import { DeltatokError } from "../errors.js";
import type { RendererKind } from "../render/renderer.js";
import { DEFAULT_BUDGET } from "../template/index.js";

/**
 * Limits of one chat-template render (DESIGN.md, "Budgets"). A render past one fails with
 * DT_TEMPLATE_BUDGET (that request only); the tracking bound instead renders whole. Defaults are
 * far above what real templates use (measured: `node dist/scripts/budget-measure.js`).
 */
export interface TemplateBudgetOptions {
  /**
   * Evaluation steps: statements, loop iterations, calls, per-item work of filters.
   * @defaultValue 50000000
   */
  maxSteps?: number;
  /**
   * The build budget: the total size of everything one render builds — its output and every
   * string, list, dict or big int it makes, charged before it is made, including what it then
   * drops — in units of one UTF-16 code unit (≤ 2 bytes); a list item counts 16, a dict entry 48.
   * So a render allocates at most about 2 bytes × this. Real templates charge 2–15 units per
   * character they render; the largest prompt accepted by default (16 M characters) stays under
   * 94 M units with every template measured.
   * @defaultValue 134217728 (128 Mi units ≈ 256 MiB)
   */
  maxBuildUnits?: number;
  /**
   * Largest single string (output or intermediate value), in UTF-16 units; a list may hold a
   * sixteenth as many items.
   * @defaultValue 268435456
   */
  maxOutputChars?: number;
  /**
   * Deepest nesting of macro calls and recursive loops (where CPython's recursion limit stops
   * Python's Jinja2 at its default, as RecursionError).
   * @defaultValue 198
   */
  maxDepth?: number;
  /**
   * Incremental renders: the tracking state one render may add (records of what it read,
   * estimated bytes). Past it the render is done whole, untracked — the same output — and counted
   * in `stats().render.trackingBudget` (fallback reason `tracking_budget`); that conversation's
   * later renders are whole too.
   * @defaultValue 33554432 (32 MiB)
   */
  maxTrackBytes?: number;
}

/**
 * @internal The benchmarks' way to the unbudgeted hf-jinja renderer: an options object carrying
 * this key set to true may name `renderer: "hf-jinja"`. Not exported by the package.
 */
export const UNBUDGETED_RENDERER: unique symbol = Symbol("deltatok.unbudgeted-renderer");

/** Upper limits of the template budget options (past them one render could outgrow the heap). */
const BUDGET_MAX: Readonly<Required<TemplateBudgetOptions>> = Object.freeze({
  maxSteps: 10_000_000_000,
  maxBuildUnits: 1024 * 1024 * 1024,
  maxOutputChars: 512 * 1024 * 1024,
  maxDepth: 10_000,
  maxTrackBytes: 1024 * 1024 * 1024,
});

/** Options of {@link Deltatok.create}. */
export interface DeltatokOptions {
  /**
   * Tokenizer: a bundled short name (`qwen3`, `deepseek_v3`, `llama3_1`, `gemma3`, `gptoss`), a
   * directory holding tokenizer.json (+ tokenizer_config.json, chat templates), a path to a
   * tokenizer.json, or a Hugging Face model id found in the local hub cache (never downloaded).
   * @defaultValue "qwen3"
   */
  tokenizer?: string;
  /** Chat template source that replaces the tokenizer's own templates. */
  chatTemplate?: string;
  /** A file holding the chat template (`.jinja`, or `.json` with a `chat_template` field). */
  chatTemplateFile?: string;
  /**
   * The date `strftime_now` sees: `YYYY-MM-DD` (that day's midnight, as Python's
   * `datetime.strptime`) or a Date (its local wall-clock time). Part of the cache key when the
   * template reads the clock.
   * @defaultValue the local clock at each render, as Python's `datetime.now()`
   */
  date?: string | Date;
  /**
   * `incremental` reuses cached prefixes; `full` re-renders and re-tokenizes every request in
   * one call (the baseline every result must equal).
   * @defaultValue "incremental"
   */
  mode?: "incremental" | "full";
  /**
   * Keep token ids in the cache. `false` is counts-only: ~4 bytes per token less, and asking for
   * ids re-encodes the prompt (counted as fallback `ids_not_stored`).
   * @defaultValue true
   */
  storeIds?: boolean;
  /**
   * Upper bound of the cache, in bytes (estimated: 2 per rendered character, 4 per stored id,
   * plus a small overhead per conversation). Least recently used conversations are evicted.
   * @defaultValue 268435456 (256 MiB)
   */
  cacheBytes?: number;
  /**
   * Largest prompt accepted, in UTF-16 units of message strings; larger ones fail with
   * DT_INPUT_TOO_LARGE. Also bounds `countText` and single messages.
   * @defaultValue 16000000
   */
  maxPromptChars?: number;
  /**
   * Template renderer: `python` renders exactly as transformers (Python Jinja2), within
   * `templateBudget`. `hf-jinja` (@huggingface/jinja, which differs from Python on some inputs
   * and has no budgets: a hostile template could exhaust the heap) is kept for comparison
   * benchmarks only and refused here with DT_INVALID_OPTION (DESIGN.md, "Budgets").
   * @defaultValue "python"
   */
  renderer?: RendererKind;
  /**
   * In `incremental` mode, also render incrementally: a conversation's next request replays the
   * parts of its previous render whose inputs did not change (src/template/INCREMENTAL.md), so a
   * request costs about what it appended. `false` renders every request whole (tokenization
   * stays incremental). Only the `python` renderer renders incrementally.
   * @defaultValue true
   */
  incrementalRender?: boolean;
  /** Limits of each template render (every field optional). */
  templateBudget?: TemplateBudgetOptions;
}

/** Per-request options. Names follow transformers' `apply_chat_template`. */
export interface PromptOptions {
  /** Tool (function) schemas passed to the template as `tools`. @defaultValue null */
  tools?: readonly unknown[] | null;
  /** Documents passed to the template as `documents`. @defaultValue null */
  documents?: readonly unknown[] | null;
  /**
   * Append the assistant generation prompt. ISL is defined with it, so it defaults to true here
   * (transformers' own default is false).
   * @defaultValue true
   */
  add_generation_prompt?: boolean;
  /** A named template of the tokenizer (e.g. `tool_use`) or a template source, for this request. */
  chat_template?: string | null;
  /** Extra template variables, spread on top of the others (e.g. `{ enable_thinking: false }`). */
  chat_template_kwargs?: Readonly<Record<string, unknown>> | null;
  /**
   * Parse JSON-string tool-call `arguments` into objects before rendering (MLCommons endpoints
   * does this). The caller's messages are not modified.
   * @defaultValue false
   */
  parse_tool_arguments?: boolean;
}

/** Per-request options of OSL counting (no tools: the definition renders without them). */
export type MessageOptions = Pick<PromptOptions, "chat_template" | "chat_template_kwargs" | "parse_tool_arguments">;

export interface ResolvedOptions {
  readonly tokenizer: string;
  readonly chatTemplate: string | undefined;
  readonly chatTemplateFile: string | undefined;
  readonly date: Date | null;
  readonly dateKey: string | null;
  readonly mode: "incremental" | "full";
  readonly storeIds: boolean;
  readonly cacheBytes: number;
  readonly maxPromptChars: number;
  readonly renderer: RendererKind;
  readonly incrementalRender: boolean;
  readonly templateBudget: Readonly<Required<TemplateBudgetOptions>>;
}

export const DEFAULTS = Object.freeze({
  tokenizer: "qwen3",
  mode: "incremental" as const,
  storeIds: true,
  cacheBytes: 256 * 1024 * 1024,
  maxPromptChars: 16_000_000,
  renderer: "python" as RendererKind,
  incrementalRender: true,
});

function optionError(path: string, message: string): DeltatokError {
  return new DeltatokError("DT_INVALID_OPTION", `options.${path} ${message}`, { path: `options.${path}` });
}

/** Validates and resolves options; `parseDate` turns `YYYY-MM-DD` into a Date. */
export function resolveOptions(o: DeltatokOptions, parseDate: (s: string) => Date): ResolvedOptions {
  if (typeof o !== "object" || o === null) throw optionError("", "must be an object");
  const str = (k: keyof DeltatokOptions) => {
    const v = o[k];
    if (v !== undefined && typeof v !== "string") throw optionError(k, `must be a string, got ${typeof v}`);
    return v as string | undefined;
  };
  const tokenizer = str("tokenizer") ?? DEFAULTS.tokenizer;
  const chatTemplate = str("chatTemplate");
  const chatTemplateFile = str("chatTemplateFile");
  if (chatTemplate !== undefined && chatTemplateFile !== undefined) {
    throw optionError("chatTemplate", "and options.chatTemplateFile are mutually exclusive");
  }
  let date: Date | null = null;
  let dateKey: string | null = null;
  if (o.date !== undefined) {
    if (typeof o.date === "string") {
      date = parseDate(o.date);
      dateKey = o.date;
    } else if (o.date instanceof Date && !Number.isNaN(o.date.getTime())) {
      // a Date is an instant: its local wall-clock time is the naive datetime the template sees
      date = new Date(o.date.getTime() - o.date.getTimezoneOffset() * 60_000);
      dateKey = date.toISOString();
    } else throw optionError("date", "must be a YYYY-MM-DD string or a valid Date");
  }
  const mode = o.mode ?? DEFAULTS.mode;
  if (mode !== "incremental" && mode !== "full") throw optionError("mode", `must be "incremental" or "full", got ${String(mode)}`);
  const storeIds = o.storeIds ?? DEFAULTS.storeIds;
  if (typeof storeIds !== "boolean") throw optionError("storeIds", "must be a boolean");
  const cacheBytes = o.cacheBytes ?? DEFAULTS.cacheBytes;
  if (!Number.isSafeInteger(cacheBytes) || cacheBytes < 1024 * 1024) {
    throw new DeltatokError("DT_INVALID_OPTION", `options.cacheBytes must be an integer ≥ 1 MiB, got ${String(cacheBytes)}`, {
      path: "options.cacheBytes",
    });
  }
  const maxPromptChars = o.maxPromptChars ?? DEFAULTS.maxPromptChars;
  if (!Number.isSafeInteger(maxPromptChars) || maxPromptChars < 1) {
    throw optionError("maxPromptChars", `must be a positive integer, got ${String(maxPromptChars)}`);
  }
  const renderer = o.renderer ?? DEFAULTS.renderer;
  if (renderer === "hf-jinja" && (o as { [UNBUDGETED_RENDERER]?: unknown })[UNBUDGETED_RENDERER] !== true) {
    throw optionError("renderer", `"hf-jinja" has no template budgets and is kept for benchmarks only; use "python"`);
  }
  if (renderer !== "python" && renderer !== "hf-jinja") {
    throw optionError("renderer", `must be "python", got ${String(renderer)}`);
  }
  const incrementalRender = o.incrementalRender ?? DEFAULTS.incrementalRender;
  if (typeof incrementalRender !== "boolean") throw optionError("incrementalRender", "must be a boolean");
  const templateBudget = resolveBudget(o.templateBudget);
  return Object.freeze({ tokenizer, chatTemplate, chatTemplateFile, date, dateKey, mode, storeIds, cacheBytes, maxPromptChars, renderer, incrementalRender, templateBudget });
}

function resolveBudget(b: TemplateBudgetOptions | undefined): Readonly<Required<TemplateBudgetOptions>> {
  if (b === undefined) return DEFAULT_BUDGET;
  if (typeof b !== "object" || b === null || Array.isArray(b)) throw optionError("templateBudget", "must be an object");
  const out: Record<string, number> = {};
  for (const k of Object.keys(BUDGET_MAX) as Array<keyof TemplateBudgetOptions>) {
    const v = b[k] ?? DEFAULT_BUDGET[k];
    const max = BUDGET_MAX[k];
    if (!Number.isSafeInteger(v) || v < 1 || v > max) throw optionError(`templateBudget.${k}`, `must be an integer from 1 to ${max}, got ${String(v)}`);
    out[k] = v;
  }
  const unknown = Object.keys(b).filter((k) => !(k in BUDGET_MAX));
  if (unknown.length > 0) throw optionError(`templateBudget.${unknown[0] as string}`, "is not a template budget option");
  return Object.freeze(out as Required<TemplateBudgetOptions>);
}

/** Validates per-request options; throws DT_INVALID_OPTION / DT_INVALID_TOOLS / DT_INVALID_KWARGS. */
export function checkPromptOptions(p: PromptOptions | undefined): PromptOptions {
  if (p === undefined) return {};
  if (typeof p !== "object" || p === null) throw new DeltatokError("DT_INVALID_OPTION", "request options must be an object");
  if (p.add_generation_prompt !== undefined && typeof p.add_generation_prompt !== "boolean") {
    throw new DeltatokError("DT_INVALID_OPTION", "add_generation_prompt must be a boolean", { path: "add_generation_prompt" });
  }
  if (p.parse_tool_arguments !== undefined && typeof p.parse_tool_arguments !== "boolean") {
    throw new DeltatokError("DT_INVALID_OPTION", "parse_tool_arguments must be a boolean", { path: "parse_tool_arguments" });
  }
  if (p.chat_template !== undefined && p.chat_template !== null && typeof p.chat_template !== "string") {
    throw new DeltatokError("DT_INVALID_OPTION", "chat_template must be a string", { path: "chat_template" });
  }
  return p;
}
