/**
 * Validation of chat messages and request values, and the opt-in `parse_tool_arguments`
 * normalization. Validation reads every value of the caller's data exactly once (getters,
 * Proxy traps and all, each inside a try/catch) and returns a snapshot — plain objects, lists
 * and primitives, never the caller's objects — which is what the template renders. So nothing a
 * caller's object does later (a getter that throws or changes on the next read) can reach a
 * render, and nothing here mutates the caller's data.
 *
 * What counts as data: strings (well-formed UTF-16), numbers (NaN and ±Infinity are Python
 * floats), booleans, null, bigint (Python int), PyFloat, lists without holes, and plain objects
 * (prototype Object.prototype or null; a `__proto__` key is an ordinary key). undefined is
 * mapped as JSON.stringify maps it, so the library sees what the sidecar would: a key whose
 * value is undefined is absent from the snapshot, an undefined list item is null. Anything else — a Map, Set, Date, class instance, function, symbol, a cycle, or
 * nesting deeper than MAX_DEPTH — is a coded error naming the path of the value.
 */
import { DeltatokError, type ErrorCode } from "../errors.js";
import { KEY_ORDER, PyFloat, setKeyOrder } from "../json/values.js";

/** Limits applied while validating. */
export interface InputLimits {
  /**
   * Largest total size of the messages of one prompt: UTF-16 units of their strings (keys
   * included) plus one per list item and object entry. Tools, documents and
   * chat_template_kwargs are each bounded by the same number.
   */
  maxPromptChars: number;
}

/** Parses a JSON string the way the request's values are parsed (Python json.loads semantics). */
export type JsonParser = (text: string) => unknown;

/** Deepest nesting of lists and objects accepted inside one value. */
export const MAX_DEPTH = 256;

const OBJECT_PROTO = Object.prototype;
const PYFLOAT_PROTO = PyFloat.prototype;
const hasOwn = Object.prototype.hasOwnProperty;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Array.isArray, which throws for a revoked Proxy: then `code` at `path`. */
function isList(v: unknown, code: ErrorCode, path: string): boolean {
  try {
    return Array.isArray(v);
  } catch (e) {
    throw new DeltatokError(code, `${path} could not be read: ${thrownText(e)}`, { path, cause: e });
  }
}

/**
 * A finished walk of an object: its keys as they were read, the snapshot made of its values
 * (which also tells whether a value is still the one read: see `entrySize`), their size, and a
 * version. A conversation's messages are validated again on
 * every request; an object whose entries are all still the same (`Object.is`; nested objects
 * walked again the same way, recursively) has the same content, so its snapshot and size are
 * reused without scanning its strings. A changed entry anywhere inside (a caller may mutate
 * messages between requests) means a full walk, a new snapshot and a new version. So an object
 * that shows the same version at two validations had the same content at both
 * (`validateMessages`' `versions`), and its snapshot is the very same object.
 */
interface Walked {
  /** Object.keys order (null for a list). */
  readonly keys: string[] | null;
  /** The snapshot: what the template sees. */
  readonly copy: object;
  /** The object's KEY_ORDER value when walked (JSON-parsed objects with integer-like keys). */
  readonly order: unknown;
  readonly size: number;
  readonly ver: number;
}
const WALKED = new WeakMap<object, Walked>();
let VERSIONS = 0;
/** the entry of the object whose walk finished last */
let lastWalked: Walked | null = null;

/** One validation: where it is, what it may still take, and the code of its errors. */
interface Walk {
  /** Path of the value walked, e.g. `messages[3]`. */
  readonly base: string;
  /** Code for values that are not data (and unreadable, cyclic or too deep ones). */
  readonly area: ErrorCode;
  /** Size budget (see InputLimits). */
  readonly limit: number;
  size: number;
}

/** Keys (or indices) from the walk's base down to the value at each depth. */
const PATH: Array<string | number> = [];
/** The objects from the walk's base down (to tell a cycle from deep nesting). */
const STACK: object[] = [];

function segment(k: string | number): string {
  return typeof k === "number" ? `[${k}]` : `.${k}`;
}

/** Path of the value at `depth` (below the walk's base). */
function pathAt(w: Walk, depth: number): string {
  let s = w.base;
  for (let i = 0; i < depth; i++) s += segment(PATH[i] as string | number);
  return s;
}

/** A path short enough for a message (the full one is in the error's `path`). */
function shortPath(p: string): string {
  return p.length <= 160 ? p : `${p.slice(0, 80)}…${p.slice(-60)}`;
}

/** Text of anything thrown, without trusting it (its message may be a throwing getter too). */
function thrownText(e: unknown): string {
  try {
    if (e instanceof Error) return `${e.name}: ${e.message}`;
    return String(e);
  } catch {
    return "(an unprintable value)";
  }
}

/** A short description of what a non-data value is. */
function kindOf(v: unknown): string {
  if (typeof v === "function") return "a function";
  if (typeof v === "symbol") return "a symbol";
  try {
    const tag = Object.prototype.toString.call(v).slice(8, -1);
    if (tag !== "Object") return `a ${tag}`;
    const p = Object.getPrototypeOf(v) as { constructor?: unknown } | null;
    const ctor = p !== null && hasOwn.call(p, "constructor") ? (p.constructor as { name?: unknown }) : null;
    const name = typeof ctor === "function" && typeof ctor.name === "string" && ctor.name !== "" ? ctor.name : null;
    return name === null ? "an object with a custom prototype" : `an instance of ${name}`;
  } catch {
    return "an object that cannot be inspected";
  }
}

function notData(w: Walk, depth: number, v: unknown): DeltatokError {
  const path = pathAt(w, depth);
  return new DeltatokError(
    w.area,
    `${shortPath(path)} is ${kindOf(v)}, not JSON data (a string, number, boolean, null, list or plain object)`,
    { path },
  );
}

function tooLarge(w: Walk, depth: number): DeltatokError {
  const path = pathAt(w, depth);
  return new DeltatokError(
    "DT_INPUT_TOO_LARGE",
    `${shortPath(path)} makes the request larger than the limit of ${w.limit} (characters of strings plus one per list item and object entry; raise maxPromptChars / --max-prompt-chars)`,
    { path },
  );
}

function tooDeep(w: Walk, depth: number, v: object): DeltatokError {
  // a cycle shows as nesting without end: name the first value that is its own ancestor
  STACK[depth] = v;
  for (let j = 1; j <= depth; j++) {
    const at = STACK.indexOf(STACK[j] as object);
    if (at < j) {
      const path = pathAt(w, j);
      return new DeltatokError(w.area, `${shortPath(path)} is ${shortPath(pathAt(w, at))} again (a cycle): not JSON data`, { path });
    }
  }
  const path = pathAt(w, depth);
  return new DeltatokError(w.area, `${shortPath(path)} is nested more than ${MAX_DEPTH} levels deep`, { path });
}

/** Walks `v` (at `depth` below the walk's base) and returns its snapshot. */
function walk(v: unknown, depth: number, w: Walk): unknown {
  switch (typeof v) {
    case "string":
      if (!v.isWellFormed()) {
        const path = pathAt(w, depth);
        throw new DeltatokError("DT_LONE_SURROGATE", `${shortPath(path)} contains a lone UTF-16 surrogate (no UTF-8 encoding exists)`, { path });
      }
      w.size += v.length;
      return v;
    case "number":
    case "boolean":
    case "bigint":
    case "undefined":
      return v;
    case "object":
      if (v === null) return null;
      return walkObject(v, depth, w);
    default:
      throw notData(w, depth, v);
  }
}

function walkObject(v: object, depth: number, w: Walk): unknown {
  if (depth >= MAX_DEPTH) throw tooDeep(w, depth, v);
  const memo = WALKED.get(v);
  if (memo !== undefined) {
    const n = rewalk(v, memo, depth);
    if (n >= 0) {
      w.size += n;
      lastWalked = memo;
      return memo.copy;
    }
  }
  STACK[depth] = v;
  const start = w.size;
  let key: string | number | null = null;
  try {
    let keys: string[] | null = null;
    let order: unknown = undefined;
    let copy: object;
    if (Array.isArray(v)) {
      const n: number = v.length;
      if (w.size + n > w.limit) throw tooLarge(w, depth);
      const list: unknown[] = [];
      for (let i = 0; i < n; i++) {
        key = i;
        PATH[depth] = i;
        const x: unknown = v[i];
        if (x === undefined && !(i in v)) {
          const path = pathAt(w, depth + 1);
          throw new DeltatokError(w.area, `${shortPath(path)} is a hole in a sparse list: not JSON data`, { path });
        }
        // as JSON has it: an undefined item is null
        list.push(x === undefined ? null : walk(x, depth + 1, w));
      }
      w.size += n;
      copy = list;
    } else {
      const proto: unknown = Object.getPrototypeOf(v);
      if (proto !== OBJECT_PROTO && proto !== null) {
        if (proto === PYFLOAT_PROTO) {
          const x: unknown = (v as PyFloat).value;
          if (typeof x !== "number") throw notData(w, depth, v);
          return new PyFloat(x);
        }
        throw notData(w, depth, v);
      }
      keys = Object.keys(v);
      if (w.size + keys.length > w.limit) throw tooLarge(w, depth);
      order = (v as { [KEY_ORDER]?: unknown })[KEY_ORDER];
      const obj: Record<string, unknown> = {};
      for (const k of keys) {
        key = k;
        PATH[depth] = k;
        if (!k.isWellFormed()) {
          const path = pathAt(w, depth);
          throw new DeltatokError("DT_LONE_SURROGATE", `${shortPath(path)} has a key with a lone UTF-16 surrogate`, { path });
        }
        const x: unknown = (v as Record<string, unknown>)[k];
        if (x === undefined) continue; // as JSON has it: a key whose value is undefined is absent
        const c = walk(x, depth + 1, w);
        if (k === "__proto__") Object.defineProperty(obj, k, { value: c, writable: true, enumerable: true, configurable: true });
        else obj[k] = c;
        w.size += k.length + 1;
      }
      if (order !== undefined) {
        // the dict order a JSON parse recorded (integer-like keys), while it still matches
        const seen = new Set(keys);
        if (Array.isArray(order) && order.length === keys.length && order.every((k) => typeof k === "string" && seen.has(k))) {
          setKeyOrder(obj, (order as string[]).slice());
        }
      }
      copy = obj;
    }
    if (w.size > w.limit) throw tooLarge(w, depth);
    const entry: Walked = { keys, copy, order, size: w.size - start, ver: ++VERSIONS };
    WALKED.set(v, entry);
    lastWalked = entry;
    return copy;
  } catch (e) {
    if (e instanceof DeltatokError) throw e;
    // a getter, a Proxy trap or an accessor of the caller's object threw
    const path = key === null ? pathAt(w, depth) : pathAt(w, depth) + segment(key);
    throw new DeltatokError(w.area, `${shortPath(path)} could not be read: ${thrownText(e)}`, { path, cause: e });
  }
}

/** The size of an object walked before, or -1 when something inside it changed (or threw). */
function rewalk(v: object, m: Walked, depth: number): number {
  try {
    const keys = m.keys;
    let n = 0;
    if (keys === null) {
      const copy = m.copy as unknown[];
      if (!Array.isArray(v) || v.length !== copy.length) return -1;
      for (let i = 0; i < copy.length; i++) {
        const x: unknown = v[i];
        const k = entrySize(x === undefined ? null : x, copy[i], depth);
        if (k < 0) return -1;
        n += k;
      }
      return n + copy.length;
    }
    if (Array.isArray(v) || (v as { [KEY_ORDER]?: unknown })[KEY_ORDER] !== m.order) return -1;
    // the same own enumerable keys in the same order as Object.keys gave (for-in lists them in
    // that order, then inherited ones: any of those fails hasOwn), without building their list
    const copy = m.copy as Record<string, unknown>;
    let i = 0;
    for (const key in v) {
      if (i >= keys.length || key !== keys[i] || !hasOwn.call(v, key)) return -1;
      const k = entrySize((v as Record<string, unknown>)[key], copy[key], depth);
      if (k < 0) return -1;
      n += key.length + 1 + k;
      i++;
    }
    return i === keys.length ? n : -1;
  } catch {
    // read again with paths (walkObject), to report where it throws
    return -1;
  }
}

/**
 * The size of an entry walked before when it is unchanged (-1 otherwise): `x` is what the
 * caller's object holds now, `copied` its snapshot from last time. A primitive must be the same
 * value; an object must be the one whose snapshot `copied` is, with nothing changed inside it.
 */
function entrySize(x: unknown, copied: unknown, depth: number): number {
  if (typeof x !== "object" || x === null) {
    if (!Object.is(x, copied)) return -1;
    return typeof x === "string" ? x.length : 0;
  }
  const mm = WALKED.get(x);
  if (mm === undefined) {
    // a PyFloat is not memoized: the same value is the same content
    return x instanceof PyFloat && copied instanceof PyFloat && Object.is(x.value, copied.value) ? 0 : -1;
  }
  if (mm.copy !== copied || depth + 1 >= MAX_DEPTH) return -1;
  return rewalk(x, mm, depth + 1);
}

/**
 * The message lists read last (at most RECALL_LISTS), to recognise a message passed as a *new*
 * object with the content of one read before: a framework that builds new message objects every
 * turn, or a server that parses each request's JSON. Such a message is compared with the message
 * read at the same index (structural equality: the same keys in the same order, `Object.is`
 * primitives — strings compared by content — recursively) and, when equal, takes that message's
 * snapshot and content version, exactly as the same object passed again unchanged does. That is
 * exact because a snapshot is never written after it is made and holds what was read, and
 * nothing is recorded about the new object: passed again (changed or not) it is compared again
 * (DESIGN.md, "Incremental rendering"). Hold one per Deltatok: it keeps its
 * lists alive.
 */
export class MessageRecall {
  /** Most recent first: each list's top-level Walked entries. */
  readonly lists: Walked[][] = [];
  /** Messages given as objects not seen before whose content was recognised (their snapshot reused). */
  recognised = 0;

  remember(list: Walked[]): void {
    const l = this.lists;
    // a list that only extends (or repeats) one kept replaces it
    const at = l.findIndex((x) => x.length <= list.length && x[0]?.copy === list[0]?.copy && x[x.length - 1]?.copy === list[x.length - 1]?.copy);
    if (at >= 0) l.splice(at, 1);
    else if (l.length >= RECALL_LISTS) l.pop();
    l.unshift(list);
  }
}

/** Message lists a MessageRecall keeps. */
const RECALL_LISTS = 8;

/**
 * The entry of a message read before whose content `m` (an object not walked before) has, or
 * null: the entry at index `i` of the list that matched the previous message first (`st.cur`),
 * then of the other lists. `st.size` is then `m`'s size. Nothing is recorded about `m`: passed
 * again, it is compared again (a framework's new objects are not passed twice).
 */
function recognise(recall: MessageRecall, m: unknown, i: number, st: { cur: Walked[] | null; size: number }): Walked | null {
  if (typeof m !== "object" || m === null || WALKED.has(m)) return null;
  const first = st.cur?.[i];
  try {
    if (first !== undefined) {
      const n = sameMessage(m, first);
      if (n >= 0) {
        st.size = n;
        return first;
      }
    }
    for (const list of recall.lists) {
      const c = list[i];
      if (c === undefined || list === st.cur || c.copy === first?.copy) continue;
      const n = sameMessage(m, c);
      if (n >= 0) {
        st.cur = list;
        st.size = n;
        return c;
      }
    }
  } catch {
    // a getter or Proxy trap threw: the full walk reports it at its path
  }
  return null;
}

/**
 * `m`'s size when it has the content of the message walked as `c`, else -1: its own keys must
 * be c's, in order (as a rewalk requires), each value equal to the snapshot's (`sameContent`).
 */
function sameMessage(m: object, c: Walked): number {
  const keys = c.keys;
  if (keys === null || Array.isArray(m) || Object.getPrototypeOf(m) !== OBJECT_PROTO) return sameContent(m, c.copy, 0);
  if ((m as { [KEY_ORDER]?: unknown })[KEY_ORDER] !== c.order) return -1;
  const copy = c.copy as Record<string, unknown>;
  let n = 0;
  let i = 0;
  for (const key in m) {
    if (i >= keys.length || key !== keys[i] || !hasOwn.call(m, key)) return -1;
    const x: unknown = (m as Record<string, unknown>)[key];
    if (x !== undefined) {
      const k = sameContent(x, copy[key], 0);
      if (k < 0) return -1;
      n += key.length + 1 + k;
    } else if (hasOwn.call(copy, key)) return -1;
    i++;
  }
  return i === keys.length ? n : -1;
}

/**
 * The size (as a walk counts it) of caller value `v` when its content equals snapshot `copy`, else
 * -1. Reads each entry once; records nothing. An object walked before to this very snapshot is
 * rewalked (what a rewalk proves is the same). Recursion follows `copy`, a finite tree, so a
 * cycle in `v` cannot make it loop.
 */
function sameContent(v: unknown, copy: unknown, depth: number): number {
  if (typeof v !== "object" || v === null) {
    if (!Object.is(v, copy)) return -1;
    return typeof v === "string" ? v.length : 0;
  }
  if (typeof copy !== "object" || copy === null || depth >= MAX_DEPTH) return -1;
  const memo = WALKED.get(v);
  if (memo !== undefined && memo.copy === copy) return rewalk(v, memo, depth);
  let size = 0;
  if (Array.isArray(v)) {
    if (!Array.isArray(copy)) return -1;
    const n: number = v.length;
    if (n !== copy.length) return -1;
    for (let i = 0; i < n; i++) {
      const x: unknown = v[i];
      if (x === undefined) {
        if (!(i in v) || copy[i] !== null) return -1;
        continue;
      }
      const k = sameContent(x, copy[i], depth + 1);
      if (k < 0) return -1;
      size += k;
    }
    return size + n;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto === PYFLOAT_PROTO) {
    const x: unknown = (v as PyFloat).value;
    return typeof x === "number" && copy instanceof PyFloat && Object.is(x, copy.value) ? 0 : -1;
  }
  if ((proto !== OBJECT_PROTO && proto !== null) || Array.isArray(copy) || copy instanceof PyFloat) return -1;
  if ((v as { [KEY_ORDER]?: unknown })[KEY_ORDER] !== undefined || (copy as { [KEY_ORDER]?: unknown })[KEY_ORDER] !== undefined) return -1;
  const copyKeys = Object.keys(copy);
  let j = 0;
  for (const k of Object.keys(v)) {
    const x: unknown = (v as Record<string, unknown>)[k];
    if (x === undefined) continue; // absent from a snapshot, as in walkObject
    if (copyKeys[j] !== k) return -1;
    const n = sameContent(x, (copy as Record<string, unknown>)[k], depth + 1);
    if (n < 0) return -1;
    size += n + k.length + 1;
    j++;
  }
  return j === copyKeys.length ? size : -1;
}

/** Snapshot of `v` (the value at the walk's base). */
function snapshot(v: unknown, w: Walk): unknown {
  try {
    return walk(v, 0, w);
  } catch (e) {
    if (e instanceof DeltatokError) throw e;
    throw new DeltatokError(w.area, `${w.base} could not be read: ${thrownText(e)}`, { path: w.base, cause: e });
  } finally {
    STACK.length = 0;
  }
}

function newWalk(base: string, area: ErrorCode, limit: number, size = 0): Walk {
  return { base, area, limit, size };
}

/** Checks the shape of a message snapshot (role, content, tool_calls). */
function checkShape(m: unknown, path: string): asserts m is Record<string, unknown> {
  if (!isPlainObject(m) || m instanceof PyFloat) {
    throw new DeltatokError("DT_INVALID_MESSAGE", `${path} must be an object, got ${describe(m)}`, { path });
  }
  if (!hasOwn.call(m, "role")) throw new DeltatokError("DT_INVALID_MESSAGE", `${path}.role is missing`, { path: `${path}.role` });
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
}

/**
 * Reads one message (e.g. the one `countMessage` is given): checks its shape (role, content,
 * tool_calls) and values, and returns its snapshot. `limit` bounds its size.
 */
export function readMessage(m: unknown, path: string, limit = Number.MAX_SAFE_INTEGER): Record<string, unknown> {
  const s = snapshot(m, newWalk(path, "DT_INVALID_MESSAGE", limit));
  checkShape(s, path);
  return s;
}

/**
 * Reads a prompt's messages: validates each (shape, values, the size limit) and returns their
 * snapshots, a new list. Throws a DeltatokError naming the offending field for every kind of bad
 * input. With `versions`, fills `versions[i]` with the content version of message i (see
 * `Walked`): equal versions at two validations mean the same object with the same content, and
 * the same snapshot object.
 */
export function readMessages(
  messages: unknown,
  limits: InputLimits,
  path = "messages",
  versions?: number[],
  size?: { total: number },
  recall?: MessageRecall,
): unknown[] {
  if (messages === undefined || messages === null) {
    throw new DeltatokError("DT_INVALID_MESSAGES", `${path} is missing`, { path });
  }
  if (!isList(messages, "DT_INVALID_MESSAGES", path)) {
    throw new DeltatokError("DT_INVALID_MESSAGES", `${path} must be an array, got ${describe(messages)}`, { path });
  }
  let n: number;
  try {
    n = (messages as unknown[]).length;
  } catch (e) {
    throw new DeltatokError("DT_INVALID_MESSAGES", `${path} could not be read: ${thrownText(e)}`, { path, cause: e });
  }
  if (n === 0) throw new DeltatokError("DT_INVALID_MESSAGES", `${path} is empty`, { path });
  const limit = limits.maxPromptChars;
  if (n > limit) {
    throw new DeltatokError("DT_INPUT_TOO_LARGE", `${path} holds ${n} messages, over the limit of ${limit} (raise maxPromptChars / --max-prompt-chars)`, { path });
  }
  const out: unknown[] = [];
  const entries: Walked[] | null = recall === undefined ? null : [];
  const st = { cur: null as Walked[] | null, size: 0 };
  let total = n;
  for (let i = 0; i < n; i++) {
    const at = `${path}[${i}]`;
    let m: unknown;
    try {
      m = (messages as unknown[])[i];
    } catch (e) {
      throw new DeltatokError("DT_INVALID_MESSAGE", `${at} could not be read: ${thrownText(e)}`, { path: at, cause: e });
    }
    let s: unknown;
    let entry: Walked | null = recall === undefined ? null : recognise(recall, m, i, st);
    if (entry !== null && total + st.size <= limit) {
      (recall as MessageRecall).recognised++;
      s = entry.copy;
      total += st.size;
    } else {
      // (over the limit: walked again, to fail where a walk fails)
      const w = newWalk(at, "DT_INVALID_MESSAGE", limit, total);
      lastWalked = null;
      s = snapshot(m, w);
      total = w.size;
      entry = lastWalked as Walked | null;
    }
    checkShape(s, at);
    if (versions !== undefined) versions[i] = entry?.ver ?? -1;
    if (entries !== null && entry !== null && entry.copy === s) entries.push(entry);
    if (total > limit) {
      throw new DeltatokError(
        "DT_INPUT_TOO_LARGE",
        `${path} exceed the limit of ${limit} characters at ${at} (raise maxPromptChars / --max-prompt-chars)`,
        { path: at },
      );
    }
    out.push(s);
  }
  if (recall !== undefined && entries !== null && entries.length === n) recall.remember(entries);
  if (size !== undefined) size.total = total;
  return out;
}

/** Validates a prompt's messages; returns their total size (see readMessages, which also gives the snapshots). */
export function validateMessages(messages: unknown, limits: InputLimits, path = "messages", versions?: number[]): number {
  const size = { total: 0 };
  readMessages(messages, limits, path, versions, size);
  return size.total;
}

/** Reads `tools` (a list, or null/undefined → null) into a snapshot. */
export function readTools(tools: unknown, limit = Number.MAX_SAFE_INTEGER, path = "tools"): unknown[] | null {
  if (tools === undefined || tools === null) return null;
  if (!isList(tools, "DT_INVALID_TOOLS", path)) throw new DeltatokError("DT_INVALID_TOOLS", `${path} must be a list, got ${describe(tools)}`, { path });
  return snapshot(tools, newWalk(path, "DT_INVALID_TOOLS", limit)) as unknown[];
}

/** Reads `documents` (a list, or null/undefined → null) into a snapshot. */
export function readDocuments(documents: unknown, limit = Number.MAX_SAFE_INTEGER, path = "documents"): unknown[] | null {
  if (documents === undefined || documents === null) return null;
  if (!isList(documents, "DT_INVALID_REQUEST", path)) {
    throw new DeltatokError("DT_INVALID_REQUEST", `${path} must be a list, got ${describe(documents)}`, { path });
  }
  return snapshot(documents, newWalk(path, "DT_INVALID_REQUEST", limit)) as unknown[];
}

/** Reads chat_template_kwargs (an object, or null/undefined → null) into a snapshot. */
export function readKwargs(kwargs: unknown, limit = Number.MAX_SAFE_INTEGER, path = "chat_template_kwargs"): Record<string, unknown> | null {
  if (kwargs === undefined || kwargs === null) return null;
  if (typeof kwargs !== "object" || isList(kwargs, "DT_INVALID_KWARGS", path)) {
    throw new DeltatokError("DT_INVALID_KWARGS", `${path} must be an object, got ${describe(kwargs)}`, { path });
  }
  const s = snapshot(kwargs, newWalk(path, "DT_INVALID_KWARGS", limit));
  if (!isPlainObject(s) || s instanceof PyFloat) {
    throw new DeltatokError("DT_INVALID_KWARGS", `${path} must be an object, got ${describe(kwargs)}`, { path });
  }
  return s;
}

/**
 * Returns messages whose JSON-string tool-call arguments are parsed into objects (what MLCommons
 * endpoints does before rendering). Messages without string arguments are returned as the same
 * objects; changed ones are shallow copies. The input is never mutated. Expects snapshots
 * (readMessages).
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
  if (typeof v === "object") {
    try {
      const p: unknown = Object.getPrototypeOf(v);
      if (p === OBJECT_PROTO || p === null) return "an object";
    } catch {
      return "an object that cannot be inspected";
    }
    return kindOf(v);
  }
  if (typeof v === "function" || typeof v === "symbol") return kindOf(v);
  if (typeof v === "string") return v.length > 40 ? `a string` : `the string ${JSON.stringify(v)}`;
  if (v === undefined) return "nothing";
  return `${typeof v} ${String(v)}`;
}
