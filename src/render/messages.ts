/**
 * Validation of chat messages and request options, and the opt-in `parse_tool_arguments`
 * normalization. Messages are passed to the template as given; nothing here mutates the
 * caller's data.
 */
import { DeltatokError } from "../errors.js";

/** Limits applied while validating. */
export interface InputLimits {
  /** Largest total string length (UTF-16 units) of the messages of one prompt. */
  maxPromptChars: number;
}

/** Parses a JSON string the way the request's values are parsed (Python json.loads semantics). */
export type JsonParser = (text: string) => unknown;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A finished walk of an object: its own entries as they were (keys, values), the string size
 * found, and a version. A conversation's messages are validated again on every request; an
 * object whose entries are all still the same (`Object.is`: strings compared by value; nested
 * objects walked again the same way, recursively) has the same content, so its size is reused
 * without scanning its strings. A changed entry anywhere inside (a caller may mutate messages
 * between requests) means a full walk and a new version. So an object that shows the same
 * version at two validations had the same content at both (`validateMessages`' `versions`).
 */
interface Walked {
  readonly keys: string[] | null;
  readonly vals: unknown[];
  readonly size: number;
  readonly ver: number;
}
const WALKED = new WeakMap<object, Walked>();
const hasOwn = Object.prototype.hasOwnProperty;
let VERSIONS = 0;
/** the entry of the object whose walk finished last */
let lastWalked: Walked | null = null;

/**
 * Walks every string inside `v`; throws DT_LONE_SURROGATE for the first ill-formed one and
 * returns the total string length seen (keys included).
 */
function walkStrings(v: unknown, path: string, depth = 0): number {
  if (typeof v === "string") {
    if (!v.isWellFormed()) {
      throw new DeltatokError("DT_LONE_SURROGATE", `${path} contains a lone UTF-16 surrogate (no UTF-8 encoding exists)`, { path });
    }
    return v.length;
  }
  if (typeof v !== "object" || v === null) return 0;
  if (depth > 256) throw new DeltatokError("DT_INVALID_REQUEST", `${path} is nested more than 256 levels deep`, { path });
  const memo = WALKED.get(v);
  if (memo !== undefined) {
    const n = rewalk(v, memo, depth);
    if (n >= 0) {
      lastWalked = memo;
      return n;
    }
  }
  let n = 0;
  let keys: string[] | null = null;
  const vals: unknown[] = [];
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      vals.push(x);
      n += walkStrings(x, `${path}[${i}]`, depth + 1);
    }
  } else {
    keys = Object.keys(v);
    for (const k of keys) {
      if (!k.isWellFormed()) {
        throw new DeltatokError("DT_LONE_SURROGATE", `${path} has a key with a lone UTF-16 surrogate`, { path });
      }
      const x = (v as Record<string, unknown>)[k];
      vals.push(x);
      n += k.length + walkStrings(x, `${path}.${k}`, depth + 1);
    }
  }
  const w: Walked = { keys, vals, size: n, ver: ++VERSIONS };
  WALKED.set(v, w);
  lastWalked = w;
  return n;
}

/** The size of an object walked before, or -1 when something inside it changed. */
function rewalk(v: object, m: Walked, depth: number): number {
  const vals = m.vals;
  const keys = m.keys;
  let n = 0;
  if (keys === null) {
    if (!Array.isArray(v) || v.length !== vals.length) return -1;
    for (let i = 0; i < vals.length; i++) {
      const x: unknown = v[i];
      if (!Object.is(x, vals[i])) return -1;
      const k = sizeOf(x, depth);
      if (k < 0) return -1;
      n += k;
    }
    return n;
  }
  if (Array.isArray(v)) return -1;
  // the same own enumerable keys in the same order as Object.keys gave (for-in lists them in
  // that order, then inherited ones: any of those fails hasOwn), without building their list
  let i = 0;
  for (const key in v) {
    if (i >= keys.length || key !== keys[i] || !hasOwn.call(v, key)) return -1;
    const x = (v as Record<string, unknown>)[key];
    if (!Object.is(x, vals[i])) return -1;
    const k = sizeOf(x, depth);
    if (k < 0) return -1;
    n += key.length + k;
    i++;
  }
  return i === keys.length ? n : -1;
}

/** The string size of an entry walked before: a string's length, a nested object's (rewalk). */
function sizeOf(x: unknown, depth: number): number {
  if (typeof x === "string") return x.length;
  if (typeof x !== "object" || x === null) return 0;
  // unchanged only if everything inside is (else the whole object is walked again)
  const mm = WALKED.get(x);
  if (mm === undefined || depth + 1 > 256) return -1;
  return rewalk(x, mm, depth + 1);
}

/** Checks one message's shape (role, content, tool_calls) and strings; returns its string size. */
export function validateMessage(m: unknown, path: string): number {
  if (!isPlainObject(m)) {
    throw new DeltatokError("DT_INVALID_MESSAGE", `${path} must be an object, got ${describe(m)}`, { path });
  }
  if (!("role" in m)) throw new DeltatokError("DT_INVALID_MESSAGE", `${path}.role is missing`, { path: `${path}.role` });
  if (typeof m.role !== "string") {
    throw new DeltatokError("DT_INVALID_MESSAGE", `${path}.role must be a string, got ${describe(m.role)}`, { path: `${path}.role` });
  }
  const c = m.content;
  if (c !== undefined && c !== null && typeof c !== "string") {
    if (!Array.isArray(c)) {
      throw new DeltatokError(
        "DT_INVALID_CONTENT",
        `${path}.content must be a string, null or a list of content parts, got ${describe(c)}`,
        { path: `${path}.content` },
      );
    }
    for (let i = 0; i < c.length; i++) {
      const part: unknown = c[i];
      if (!isPlainObject(part) || typeof part.type !== "string") {
        throw new DeltatokError(
          "DT_INVALID_CONTENT",
          `${path}.content[${i}] must be a content part object with a string "type", got ${describe(part)}`,
          { path: `${path}.content[${i}]` },
        );
      }
    }
  }
  const tc = m.tool_calls;
  if (tc !== undefined && tc !== null) {
    if (!Array.isArray(tc)) {
      throw new DeltatokError("DT_INVALID_TOOL_CALLS", `${path}.tool_calls must be a list, got ${describe(tc)}`, { path: `${path}.tool_calls` });
    }
    for (let i = 0; i < tc.length; i++) {
      if (!isPlainObject(tc[i])) {
        throw new DeltatokError("DT_INVALID_TOOL_CALLS", `${path}.tool_calls[${i}] must be an object, got ${describe(tc[i])}`, {
          path: `${path}.tool_calls[${i}]`,
        });
      }
    }
  }
  return walkStrings(m, path);
}

/**
 * Validates a prompt's messages. Returns the total string size. Throws a DeltatokError naming
 * the offending field for every kind of bad input the engine can meet. With `versions`, fills
 * `versions[i]` with the content version of message i (see `Walked`): equal versions at two
 * validations mean the same object with the same content.
 */
export function validateMessages(messages: unknown, limits: InputLimits, path = "messages", versions?: number[]): number {
  if (messages === undefined || messages === null) {
    throw new DeltatokError("DT_INVALID_MESSAGES", `${path} is missing`, { path });
  }
  if (!Array.isArray(messages)) {
    throw new DeltatokError("DT_INVALID_MESSAGES", `${path} must be an array, got ${describe(messages)}`, { path });
  }
  if (messages.length === 0) throw new DeltatokError("DT_INVALID_MESSAGES", `${path} is empty`, { path });
  let total = 0;
  for (let i = 0; i < messages.length; i++) {
    total += validateMessage(messages[i], `${path}[${i}]`);
    if (versions !== undefined) versions[i] = (lastWalked as Walked).ver;
    if (total > limits.maxPromptChars) {
      throw new DeltatokError(
        "DT_INPUT_TOO_LARGE",
        `${path} exceed the limit of ${limits.maxPromptChars} characters at ${path}[${i}] (raise limits.maxPromptChars / --max-prompt-chars)`,
        { path: `${path}[${i}]` },
      );
    }
  }
  return total;
}

/** Validates `tools` (a list, or null/undefined). */
export function validateTools(tools: unknown, path = "tools"): void {
  if (tools === undefined || tools === null) return;
  if (!Array.isArray(tools)) throw new DeltatokError("DT_INVALID_TOOLS", `${path} must be a list, got ${describe(tools)}`, { path });
  walkStrings(tools, path);
}

/** Validates `documents` (a list, or null/undefined). */
export function validateDocuments(documents: unknown, path = "documents"): void {
  if (documents === undefined || documents === null) return;
  if (!Array.isArray(documents)) {
    throw new DeltatokError("DT_INVALID_REQUEST", `${path} must be a list, got ${describe(documents)}`, { path });
  }
  walkStrings(documents, path);
}

/** Validates chat_template_kwargs (an object, or null/undefined). */
export function validateKwargs(kwargs: unknown, path = "chat_template_kwargs"): void {
  if (kwargs === undefined || kwargs === null) return;
  if (!isPlainObject(kwargs)) throw new DeltatokError("DT_INVALID_KWARGS", `${path} must be an object, got ${describe(kwargs)}`, { path });
  walkStrings(kwargs, path);
}

/**
 * Returns messages whose JSON-string tool-call arguments are parsed into objects (what MLCommons
 * endpoints does before rendering). Messages without string arguments are returned as the same
 * objects; changed ones are shallow copies. The input is never mutated.
 */
export function parseToolArguments(messages: readonly unknown[], parse: JsonParser, path = "messages"): unknown[] {
  let out: unknown[] | null = null;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Record<string, unknown>;
    const calls = m.tool_calls;
    if (!Array.isArray(calls)) continue;
    let newCalls: unknown[] | null = null;
    for (let j = 0; j < calls.length; j++) {
      const call = calls[j] as Record<string, unknown>;
      const fn = call.function;
      if (!isPlainObject(fn) || typeof fn.arguments !== "string") continue;
      const argPath = `${path}[${i}].tool_calls[${j}].function.arguments`;
      let parsed: unknown;
      try {
        parsed = parse(fn.arguments);
      } catch (e) {
        throw new DeltatokError("DT_INVALID_TOOL_ARGUMENTS", `${argPath} is not valid JSON: ${(e as Error)?.message ?? e}`, {
          path: argPath,
          cause: e,
        });
      }
      newCalls ??= calls.slice();
      newCalls[j] = { ...call, function: { ...fn, arguments: parsed } };
    }
    if (newCalls !== null) {
      out ??= messages.slice();
      out[i] = { ...m, tool_calls: newCalls };
    }
  }
  return out ?? (messages as unknown[]);
}

/** A short description of a value's type for error messages. */
export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return v.length > 40 ? `a string` : `the string ${JSON.stringify(v)}`;
  if (v === undefined) return "nothing";
  return `${typeof v} ${String(v)}`;
}
