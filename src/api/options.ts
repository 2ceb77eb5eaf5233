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
  /**
   * The pre-tokenizer pattern of a tiktoken rank file (tiktoken's `pat_str`): wins over the
   * directory's tokenizer_config.json, `tokenization_*.py` and the family table. Refused for any
   * other tokenizer format.
   * @defaultValue undefined (the directory's own pattern)
   */
  pattern?: string;
  /**
   * The on-disk cache of built tokenizers (DESIGN.md, "Tokenizer disk cache"): a directory, or
   * `"off"`. A relative directory resolves against `process.cwd()`.
   * @defaultValue `DELTATOK_CACHE_DIR` (also `"off"`), else `$XDG_CACHE_HOME/deltatok`, else `~/.cache/deltatok`
   */
  tokenizerCacheDir?: string;
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
   * parts of its previous render whose inputs did not change (src/template/incremental/INCREMENTAL.md), so a
   * request costs about what it appended. `false` renders every request whole (tokenization
   * stays incremental). Only the `python` renderer renders incrementally.
   * @defaultValue true
   */
  incrementalRender?: boolean;
  /**
   * In `incremental` mode, splice: reuse the ids of the longest safe prefix of a cached render
   * and encode only the rest (DESIGN.md, "The reuse invariant"). `false` encodes every render
   * whole, in one call (rendering stays incremental; requests count as misses): with
   * `incrementalRender` it isolates which stage a wrong answer comes from (docs/DEBUGGING.md).
   * @defaultValue true
   */
  incrementalSplice?: boolean;
  /**
   * Also render every incrementally rendered request whole and compare (text, generation spans,
   * error): a difference fails that request with DT_INTERNAL naming the first differing offset.
   * A debugging net (it costs a whole render per request), never needed for exact answers.
   * @defaultValue false
   */
  checkIncrementalRender?: boolean;
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
  /**
   * Leave the final message open so the model continues it (prefill), as transformers'
   * `continue_final_message`: `true` continues its `content`, a string names the field to
   * continue. Not with `add_generation_prompt: true` (which then defaults to false).
   * @defaultValue false
   */
  continue_final_message?: boolean | string;
}

/** Options of a rollout: a prompt's, without add_generation_prompt (prompts have it, completions do not). */
export type RolloutOptions = Omit<PromptOptions, "add_generation_prompt">;

/** Per-request options of OSL counting (no tools: the definition renders without them). */
export type MessageOptions = Pick<PromptOptions, "chat_template" | "chat_template_kwargs" | "parse_tool_arguments">;

export interface ResolvedOptions {
  readonly tokenizer: string;
  readonly pattern: string | undefined;
  readonly tokenizerCacheDir: string | undefined;
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
  readonly incrementalSplice: boolean;
  readonly checkIncrementalRender: boolean;
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
  incrementalSplice: true,
  checkIncrementalRender: false,
});

function optionError(path: string, message: string): DeltatokError {
  return new DeltatokError("DT_INVALID_OPTION", `options.${path} ${message}`, { path: `options.${path}` });
}

/**
 * Every option of each entry point. `satisfies Record<keyof ...>` makes the compiler insist that
 * an option added to an interface is added here too (else it would be refused as unknown).
 */
const ENGINE_KEYS = {
  tokenizer: true,
  pattern: true,
  tokenizerCacheDir: true,
  chatTemplate: true,
  chatTemplateFile: true,
  date: true,
  mode: true,
  storeIds: true,
  cacheBytes: true,
  maxPromptChars: true,
  renderer: true,
  incrementalRender: true,
  incrementalSplice: true,
  checkIncrementalRender: true,
  templateBudget: true,
} as const satisfies Record<keyof Required<DeltatokOptions>, true>;
const PROMPT_KEYS = {
  tools: true,
  documents: true,
  add_generation_prompt: true,
  chat_template: true,
  chat_template_kwargs: true,
  parse_tool_arguments: true,
  continue_final_message: true,
} as const satisfies Record<keyof Required<PromptOptions>, true>;
const MESSAGE_KEYS = {
  chat_template: true,
  chat_template_kwargs: true,
  parse_tool_arguments: true,
} as const satisfies Record<keyof Required<MessageOptions>, true>;

/**
 * The per-request option names of the prompt methods (countPrompt, encodePrompt, ...) and of
 * countMessage: the one list the sidecar's params, the pool's wire items and the Python
 * client's option lists are derived from or tested against (test/protocol-options.test.ts).
 */
export const PROMPT_OPTION_NAMES: readonly (keyof PromptOptions)[] = Object.freeze(Object.keys(PROMPT_KEYS) as (keyof PromptOptions)[]);
export const MESSAGE_OPTION_NAMES: readonly (keyof MessageOptions)[] = Object.freeze(Object.keys(MESSAGE_KEYS) as (keyof MessageOptions)[]);
/** tokenizeRollout's: a prompt's but the two that shape a single prompt's end. */
export const ROLLOUT_OPTION_NAMES: readonly (keyof RolloutOptions)[] = Object.freeze(
  PROMPT_OPTION_NAMES.filter((k) => k !== "add_generation_prompt" && k !== "continue_final_message") as (keyof RolloutOptions)[],
);

/** Which options an object holds, for the messages about unknown ones. */
interface OptionSet {
  /** e.g. "Deltatok.create", "countPrompt" */
  readonly where: string;
  readonly keys: readonly string[];
  /** Path prefix of errors: "options." for Deltatok options, "" for request options (as before). */
  readonly prefix: string;
  /** Options of the other kind, to say "that one belongs elsewhere". */
  readonly elsewhere: ReadonlyArray<{ readonly keys: readonly string[]; readonly where: string }>;
  /** Why an option of another method is not one of this method's. */
  readonly notHere?: Readonly<Record<string, string>>;
}

const squash = (k: string): string => k.toLowerCase().replace(/[-_\s]/g, "");

/** Edit distance, for typo hints (both strings short). */
function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length] as number;
}

/** A hint for an unknown option name: the option meant, or where it belongs. */
function hint(key: string, set: OptionSet): string {
  const k = squash(key);
  const exact = set.keys.filter((o) => squash(o) === k);
  if (exact.length > 0) return ` (did you mean "${exact[0]}"?)`;
  const why = set.notHere?.[key];
  if (why !== undefined) return ` (${why})`;
  for (const other of set.elsewhere) {
    const o = other.keys.find((x) => squash(x) === k);
    if (o !== undefined) return ` ("${o}" is an option of ${other.where}, not of ${set.where})`;
  }
  const near = set.keys.filter((o) => k.length >= 3 && (distance(k, squash(o)) <= 2 || (k.length >= 4 && squash(o).includes(k))));
  if (near.length === 1) return ` (did you mean "${near[0]}"?)`;
  if (near.length > 1) return ` (did you mean one of ${near.map((o) => `"${o}"`).join(", ")}?)`;
  return "";
}

/**
 * Reads the options an object holds, each exactly once (a getter or Proxy trap that throws is a
 * DT_INVALID_OPTION), into a fresh plain object; an own key that is not an option of `set`
 * throws DT_INVALID_OPTION naming it (with a hint for a misspelled or misplaced one). Keys whose
 * value is undefined are left out.
 */
function readOptions(o: object, set: OptionSet): Record<string, unknown> {
  let own: string[];
  try {
    own = Object.keys(o);
  } catch (e) {
    throw new DeltatokError("DT_INVALID_OPTION", `the options of ${set.where} could not be read: ${String((e as Error)?.message ?? e)}`, { cause: e });
  }
  const unknown = own.filter((k) => !set.keys.includes(k));
  if (unknown.length > 0) {
    const list = unknown.slice(0, 8).map((k) => `"${k}"${hint(k, set)}`);
    if (unknown.length > 8) list.push(`and ${unknown.length - 8} more`);
    throw new DeltatokError(
      "DT_INVALID_OPTION",
      `unknown option${unknown.length > 1 ? "s" : ""} of ${set.where}: ${list.join(", ")}; its options are ${set.keys.join(", ")}`,
      { path: `${set.prefix}${unknown[0]}` },
    );
  }
  const out: Record<string, unknown> = {};
  for (const k of set.keys) {
    let v: unknown;
    try {
      v = (o as Record<string, unknown>)[k];
    } catch (e) {
      throw new DeltatokError("DT_INVALID_OPTION", `${set.prefix}${k} could not be read: ${String((e as Error)?.message ?? e)}`, {
        path: `${set.prefix}${k}`,
        cause: e,
      });
    }
    if (v !== undefined) out[k] = v;
  }
  return out;
}

const ENGINE_SET: OptionSet = {
  where: "Deltatok.create",
  keys: Object.keys(ENGINE_KEYS),
  prefix: "options.",
  elsewhere: [{ keys: Object.keys(PROMPT_KEYS), where: "the request methods (countPrompt, encodePrompt, ...)" }],
};
const PROMPT_ELSEWHERE = [{ keys: Object.keys(ENGINE_KEYS), where: "Deltatok.create" }];

function promptSet(where: string): OptionSet {
  return { where, keys: Object.keys(PROMPT_KEYS), prefix: "", elsewhere: PROMPT_ELSEWHERE };
}
const MESSAGE_SET: OptionSet = {
  where: "countMessage",
  keys: Object.keys(MESSAGE_KEYS),
  prefix: "",
  elsewhere: PROMPT_ELSEWHERE,
  notHere: {
    tools: "OSL is defined without tools: countMessage renders without them",
    documents: "OSL is defined without documents",
    add_generation_prompt: "OSL is defined without a generation prompt",
    continue_final_message: "OSL counts a whole message",
  },
};

const ROLLOUT_SET: OptionSet = {
  where: "tokenizeRollout",
  keys: ROLLOUT_OPTION_NAMES,
  prefix: "",
  elsewhere: PROMPT_ELSEWHERE,
  notHere: {
    add_generation_prompt: "a rollout's prompts have the generation prompt and its completions do not",
    continue_final_message: "a rollout's completions are whole assistant messages",
  },
};

const TRIM_SET: OptionSet = {
  where: "trimToFit",
  keys: [...Object.keys(PROMPT_KEYS), "policy", "keep_first_user"],
  prefix: "",
  elsewhere: PROMPT_ELSEWHERE,
};

/**
 * trimToFit's options: a prompt's options (checked as countPrompt's), `policy` ("oldest" |
 * "turns", default "oldest") and `keep_first_user` (default false). Unknown keys are refused.
 */
export function checkTrimOptions(t: unknown): { prompt: PromptOptions; policy: "oldest" | "turns"; keepFirstUser: boolean } {
  if (t === undefined) return { prompt: {}, policy: "oldest", keepFirstUser: false };
  if (typeof t !== "object" || t === null || isList(t, "trimToFit")) {
    throw new DeltatokError("DT_INVALID_OPTION", `the options of trimToFit must be an object, got ${t === null ? "null" : typeof t === "object" ? "a list" : typeof t}`);
  }
  const o = readOptions(t, TRIM_SET);
  const { policy, keep_first_user: keep, ...rest } = o as Record<string, unknown>;
  if (policy !== undefined && policy !== "oldest" && policy !== "turns") {
    throw new DeltatokError("DT_INVALID_OPTION", `policy must be "oldest" or "turns", got ${typeof policy === "string" ? JSON.stringify(policy) : typeof policy}`, { path: "policy" });
  }
  if (keep !== undefined && typeof keep !== "boolean") throw new DeltatokError("DT_INVALID_OPTION", "keep_first_user must be a boolean", { path: "keep_first_user" });
  return { prompt: checkPromptOptions(rest as PromptOptions, "trimToFit"), policy: policy ?? "oldest", keepFirstUser: keep ?? false };
}

/** Array.isArray, which throws for a revoked Proxy: then DT_INVALID_OPTION. */
function isList(v: unknown, where: string): boolean {
  try {
    return Array.isArray(v);
  } catch (e) {
    throw new DeltatokError("DT_INVALID_OPTION", `the options of ${where} could not be read: ${String((e as Error)?.message ?? e)}`, { cause: e });
  }
}

/** Validates and resolves options; `parseDate` turns `YYYY-MM-DD` into a Date. */
export function resolveOptions(options: DeltatokOptions, parseDate: (s: string) => Date): ResolvedOptions {
  if (typeof options !== "object" || options === null || isList(options, "Deltatok.create")) {
    throw new DeltatokError("DT_INVALID_OPTION", `the options of Deltatok.create must be an object, got ${options === null ? "null" : typeof options === "object" ? "a list" : typeof options}`, { path: "options" });
  }
  const o = readOptions(options, ENGINE_SET) as DeltatokOptions;
  const str = (k: keyof DeltatokOptions) => {
    const v = o[k];
    if (v !== undefined && typeof v !== "string") throw optionError(k, `must be a string, got ${typeof v}`);
    return v as string | undefined;
  };
  const tokenizer = str("tokenizer") ?? DEFAULTS.tokenizer;
  const pattern = str("pattern");
  if (pattern === "") throw optionError("pattern", "must be a non-empty string");
  const tokenizerCacheDir = str("tokenizerCacheDir");
  if (tokenizerCacheDir === "") throw optionError("tokenizerCacheDir", 'must be a non-empty string (a directory, or "off")');
  const chatTemplate = str("chatTemplate");
  const chatTemplateFile = str("chatTemplateFile");
  if (chatTemplate !== undefined && chatTemplateFile !== undefined) {
    throw optionError("chatTemplate", "and options.chatTemplateFile are mutually exclusive");
  }
  let date: Date | null = null;
  let dateKey: string | null = null;
  const d = o.date;
  if (d !== undefined) {
    if (typeof d === "string") {
      date = parseDate(d);
      dateKey = d;
    } else if (d instanceof Date && !Number.isNaN(d.getTime())) {
      // a Date is an instant: its local wall-clock time is the naive datetime the template sees
      const t = d.getTime();
      date = new Date(t - new Date(t).getTimezoneOffset() * 60_000);
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
  const incrementalSplice = o.incrementalSplice ?? DEFAULTS.incrementalSplice;
  if (typeof incrementalSplice !== "boolean") throw optionError("incrementalSplice", "must be a boolean");
  const checkIncrementalRender = o.checkIncrementalRender ?? DEFAULTS.checkIncrementalRender;
  if (typeof checkIncrementalRender !== "boolean") throw optionError("checkIncrementalRender", "must be a boolean");
  const templateBudget = resolveBudget(o.templateBudget);
  return Object.freeze({
    tokenizer,
    pattern,
    tokenizerCacheDir,
    chatTemplate,
    chatTemplateFile,
    date,
    dateKey,
    mode,
    storeIds,
    cacheBytes,
    maxPromptChars,
    renderer,
    incrementalRender,
    incrementalSplice,
    checkIncrementalRender,
    templateBudget,
  });
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

/**
 * Validates per-request options of `method` (countPrompt, encodePrompt, ...; countMessage takes
 * fewer): each read once into a fresh object, unknown ones refused. Throws DT_INVALID_OPTION;
 * tools, documents and chat_template_kwargs are checked when the request is read.
 */
export function checkPromptOptions(p: PromptOptions | undefined, method = "countPrompt"): PromptOptions {
  if (p === undefined) return {};
  if (typeof p !== "object" || p === null || isList(p, method)) {
    throw new DeltatokError("DT_INVALID_OPTION", `the options of ${method} must be an object, got ${p === null ? "null" : typeof p === "object" ? "a list" : typeof p}`);
  }
  const o = readOptions(p, method === "countMessage" ? MESSAGE_SET : method === "tokenizeRollout" ? ROLLOUT_SET : promptSet(method)) as PromptOptions;
  if (o.add_generation_prompt !== undefined && typeof o.add_generation_prompt !== "boolean") {
    throw new DeltatokError("DT_INVALID_OPTION", "add_generation_prompt must be a boolean", { path: "add_generation_prompt" });
  }
  if (o.parse_tool_arguments !== undefined && typeof o.parse_tool_arguments !== "boolean") {
    throw new DeltatokError("DT_INVALID_OPTION", "parse_tool_arguments must be a boolean", { path: "parse_tool_arguments" });
  }
  if (o.chat_template !== undefined && o.chat_template !== null && typeof o.chat_template !== "string") {
    throw new DeltatokError("DT_INVALID_OPTION", "chat_template must be a string", { path: "chat_template" });
  }
  const cfm = o.continue_final_message;
  if (cfm !== undefined) {
    if (typeof cfm !== "boolean" && (typeof cfm !== "string" || cfm.length === 0)) {
      throw new DeltatokError("DT_INVALID_OPTION", "continue_final_message must be a boolean or a field name", { path: "continue_final_message" });
    }
    if (cfm !== false && o.add_generation_prompt === true) {
      throw new DeltatokError(
        "DT_INVALID_OPTION",
        "continue_final_message and add_generation_prompt are not compatible: continue the final message, or start a new assistant message",
        { path: "continue_final_message" },
      );
    }
  }
  return o;
}
