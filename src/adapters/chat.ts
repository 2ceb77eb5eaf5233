/**
 * The OpenAI chat format as deltatok takes it — the target of the framework adapters
 * (`deltatok/adapters/ai-sdk`, `deltatok/adapters/langchain`) — and what those adapters share:
 * their options, the JSON checks and conversions of tool-call arguments, and their errors.
 *
 * Layer: adapters (above api). Imports nothing from a framework.
 */
import { DeltatokError } from "../errors.js";
import { MAX_DEPTH } from "../render/messages.js";

/** JSON data: what tool-call arguments and JSON tool results may hold. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** One text part of a multi-part content (`[{ type: "text", text }]`). */
export interface ChatTextPart {
  type: "text";
  text: string;
}

/** A tool call of an assistant message. */
export interface ChatToolCall {
  /** The call's id (what the tool message's `tool_call_id` answers); absent when the framework had none. */
  id?: string;
  type: "function";
  function: {
    name: string;
    /**
     * The call's arguments: their JSON text (the OpenAI wire format; `toolArguments: "string"`),
     * or the value itself (`toolArguments: "object"`, what vLLM hands the template after parsing).
     */
    arguments: string | JsonValue;
  };
}

/** A message in OpenAI chat format, with the fields chat templates read. */
export interface ChatMessage {
  role: string;
  /** Text, text parts, or null (an assistant message that only calls tools may have either "" or null). */
  content: string | ChatTextPart[] | null;
  /** The participant's name (LangChain `name`); on tool messages, the tool's name. */
  name?: string;
  /** An assistant message's reasoning (the field Qwen3-style templates render inside `<think>`). */
  reasoning_content?: string;
  tool_calls?: ChatToolCall[];
  /** A tool message: the id of the call it answers. */
  tool_call_id?: string;
}

/** Options of the `from…` adapters (framework messages → OpenAI chat format). */
export interface FromOptions {
  /**
   * How tool-call arguments are written: `"string"` — their JSON text, as the frameworks send them
   * to an OpenAI-compatible server (count with `parse_tool_arguments: true` to get what vLLM or
   * MLCommons endpoints render: they parse the text before rendering) — or `"object"`, the value
   * itself (the form transformers' templates expect; counts like `"string"` with
   * `parse_tool_arguments: true`; an integer beyond ±2^53 is refused, as its digits would differ).
   * @defaultValue "string"
   */
  toolArguments?: "string" | "object";
  /**
   * Multi-part text content of user, system and tool messages: `"keep"` passes the parts through
   * as a list (what `apply_chat_template` receives; a template that reads content as a string,
   * such as Qwen3's, then fails with DT_TEMPLATE_RUNTIME as transformers does), `"join"` joins
   * their texts with "\n" into one string, as an OpenAI-compatible server does for such templates.
   * Assistant text parts are always joined with "" (what the frameworks send).
   * @defaultValue "keep"
   */
  textParts?: "keep" | "join";
}

/** FromOptions with every default filled in. */
export interface ResolvedFromOptions {
  readonly toolArguments: "string" | "object";
  readonly textParts: "keep" | "join";
}

const FROM_KEYS: Readonly<Record<keyof FromOptions, readonly string[]>> = {
  toolArguments: ["string", "object"],
  textParts: ["keep", "join"],
};

/** Validates and resolves FromOptions (`where` names the function, for the messages). */
export function resolveFromOptions(options: FromOptions | undefined, where: string): ResolvedFromOptions {
  if (options === undefined || options === null) return { toolArguments: "string", textParts: "keep" };
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new DeltatokError("DT_INVALID_OPTION", `${where}: options must be an object`, { path: "options" });
  }
  for (const k of Object.keys(options)) {
    if (!Object.hasOwn(FROM_KEYS, k)) {
      throw new DeltatokError("DT_INVALID_OPTION", `${where}: unknown option ${JSON.stringify(k)} (options: ${Object.keys(FROM_KEYS).join(", ")})`, {
        path: `options.${k}`,
      });
    }
  }
  const pick = <K extends keyof FromOptions>(k: K, dflt: string): string => {
    const v: unknown = options[k];
    if (v === undefined) return dflt;
    if (typeof v !== "string" || !FROM_KEYS[k].includes(v)) {
      throw new DeltatokError("DT_INVALID_OPTION", `${where}: options.${k} must be one of ${FROM_KEYS[k].map((x) => JSON.stringify(x)).join(", ")}`, {
        path: `options.${k}`,
      });
    }
    return v;
  };
  return Object.freeze({
    toolArguments: pick("toolArguments", "string") as "string" | "object",
    textParts: pick("textParts", "keep") as "keep" | "join",
  });
}

/** A framework value with no OpenAI chat-format equivalent (an image, a file, a provider-run tool…). */
export function unsupported(path: string, what: string): DeltatokError {
  return new DeltatokError("DT_ADAPTER_UNSUPPORTED", `${path}: ${what}`, { path });
}

/** A value that is not of the shape the framework defines. */
export function invalid(path: string, what: string, code: "DT_INVALID_MESSAGE" | "DT_INVALID_CONTENT" | "DT_INVALID_TOOL_CALLS" | "DT_INVALID_MESSAGES" = "DT_INVALID_MESSAGE"): DeltatokError {
  return new DeltatokError(code, `${path} ${what}`, { path });
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `v` as a string, or a DT_INVALID_MESSAGE at `path`. */
export function str(v: unknown, path: string): string {
  if (typeof v !== "string") throw invalid(path, `must be a string, got ${typeof v === "object" ? (v === null ? "null" : "an object") : typeof v}`);
  return v;
}

/** `v` as an array, or `code` at `path`. */
export function list(v: unknown, path: string, code: "DT_INVALID_MESSAGES" | "DT_INVALID_CONTENT" | "DT_INVALID_TOOL_CALLS" = "DT_INVALID_CONTENT"): readonly unknown[] {
  if (!Array.isArray(v)) throw invalid(path, "must be a list", code);
  return v;
}

/**
 * Checks that `v` is JSON data that JSON.stringify writes and JSON.parse reads back as the same
 * value: plain objects, lists, strings, finite numbers, booleans, null (an undefined object entry
 * is absent, as JSON writes it). Anything else — NaN, a bigint, a Date, a Map, a class instance,
 * a function, a cycle, nesting deeper than 256 — is DT_INVALID_MESSAGE at its path, because its
 * JSON text would not be the value. With `safeIntegers`, an integer beyond ±2^53 (1e21 included)
 * is DT_ADAPTER_UNSUPPORTED: rendered as a value, its digits are the double's exact ones
 * (123456789012345683968), while a server parses the JSON text's (123456789012345680000).
 */
export function checkJson(v: unknown, path: string, depth = 0, safeIntegers = false): void {
  switch (typeof v) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(v)) throw invalid(path, `is ${v}, which JSON cannot hold`);
      if (safeIntegers && Number.isInteger(v) && !Number.isSafeInteger(v)) {
        throw unsupported(
          path,
          `is ${v}, an integer beyond 2^53: the template would render the JavaScript number's digits, a server the digits of its JSON text (${JSON.stringify(v)}); use toolArguments: "string" with parse_tool_arguments`,
        );
      }
      return;
    case "object": {
      if (v === null) return;
      if (depth >= MAX_DEPTH) throw invalid(path, `is nested more than ${MAX_DEPTH} levels deep (or a cycle)`);
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          if (!(i in v)) throw invalid(`${path}[${i}]`, "is a hole in a sparse list: not JSON data");
          checkJson(v[i], `${path}[${i}]`, depth + 1, safeIntegers);
        }
        return;
      }
      const proto: unknown = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw invalid(path, "is not a plain object: not JSON data");
      for (const k of Object.keys(v)) {
        const x: unknown = (v as Record<string, unknown>)[k];
        if (x !== undefined) checkJson(x, `${path}.${k}`, depth + 1, safeIntegers);
      }
      return;
    }
    default:
      throw invalid(path, `is ${typeof v === "undefined" ? "undefined" : `a ${typeof v}`}: not JSON data`);
  }
}

/** The JSON text of JSON data (checked: see checkJson). */
export function jsonText(v: unknown, path: string): string {
  checkJson(v, path);
  return JSON.stringify(v);
}

/** Tool-call arguments in the form the options ask for, from the framework's value. */
export function toArguments(input: unknown, path: string, o: ResolvedFromOptions): string | JsonValue {
  if (o.toolArguments === "object") {
    checkJson(input, path, 0, true);
    return input as JsonValue;
  }
  return jsonText(input, path);
}

/**
 * The framework's value of tool-call arguments: a JSON text parsed (JSON.parse: JavaScript
 * values, as the frameworks hold them), any other value as it is. Text that is not JSON is
 * DT_INVALID_TOOL_ARGUMENTS — or null when `lenient` (the caller keeps it as raw text).
 */
export function fromArguments(args: unknown, path: string, lenient = false): { value: unknown } | null {
  if (typeof args !== "string") {
    checkJson(args, path);
    return { value: args };
  }
  try {
    return { value: JSON.parse(args) as unknown };
  } catch (e) {
    if (lenient) return null;
    throw new DeltatokError("DT_INVALID_TOOL_ARGUMENTS", `${path} is not valid JSON: ${(e as Error).message}`, { path, cause: e });
  }
}

/** The texts of a content part list that may hold only `{type: "text", text}` parts. */
export function textsOf(parts: readonly unknown[], path: string): string[] {
  const out: string[] = [];
  for (let j = 0; j < parts.length; j++) {
    const p = parts[j];
    const at = `${path}[${j}]`;
    if (!isRecord(p) || typeof p.type !== "string") throw invalid(at, "must be a content part with a string type", "DT_INVALID_CONTENT");
    if (p.type !== "text") throw unsupported(at, `a ${JSON.stringify(p.type)} content part has no equivalent in the framework's message here`);
    out.push(str(p.text, `${at}.text`));
  }
  return out;
}
