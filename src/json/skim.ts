/**
 * A structural skim of JSON text: finds a few top-level members (the corpus line's `id`, a
 * request's `tools` and leading `messages`) by their raw text ranges, without building any
 * values. Strings are skipped with `indexOf('"')`, so the cost is a fraction of a parse, and the
 * main thread stays free while workers do the real parsing (with the project's Python-faithful
 * parser).
 *
 * Every function returns null on text it cannot follow; routing callers then go without a key.
 * Callers that keep what they find (a number id's exact text, src/corpus/id.ts) skim only text
 * the parser has accepted, which it always follows.
 *
 * Layer: json (imports nothing).
 */

const enum C {
  Quote = 34,
  Backslash = 92,
  Comma = 44,
  Colon = 58,
  LBrace = 123,
  RBrace = 125,
  LBracket = 91,
  RBracket = 93,
}

function isWs(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function skipWs(s: string, i: number): number {
  while (i < s.length && isWs(s.charCodeAt(i))) i++;
  return i;
}

/** Index just past the closing quote of the string opening at `i`, or -1. */
export function endOfString(s: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = s.indexOf('"', j);
    if (q < 0) return -1;
    let n = 0;
    for (let b = q - 1; b > i && s.charCodeAt(b) === C.Backslash; b--) n++;
    if ((n & 1) === 0) return q + 1;
    j = q + 1;
  }
}

/** Index just past the JSON value starting at `i` (no leading whitespace), or -1. */
export function endOfValue(s: string, i: number): number {
  if (i >= s.length) return -1;
  const c = s.charCodeAt(i);
  if (c === C.Quote) return endOfString(s, i);
  if (c === C.LBrace || c === C.LBracket) {
    let depth = 0;
    let j = i;
    while (j < s.length) {
      const d = s.charCodeAt(j);
      if (d === C.Quote) {
        j = endOfString(s, j);
        if (j < 0) return -1;
        continue;
      }
      if (d === C.LBrace || d === C.LBracket) depth++;
      else if (d === C.RBrace || d === C.RBracket) {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    return -1;
  }
  let j = i;
  while (j < s.length) {
    const d = s.charCodeAt(j);
    if (d === C.Comma || d === C.RBrace || d === C.RBracket || isWs(d)) break;
    j++;
  }
  return j > i ? j : -1;
}

export interface Member {
  key: string;
  /** [start, end) of the value's text. */
  start: number;
  end: number;
}

function decodeKey(s: string, a: number, b: number): string | null {
  const raw = s.slice(a + 1, b - 1);
  if (!raw.includes("\\")) return raw;
  try {
    return JSON.parse(s.slice(a, b)) as string;
  } catch {
    return null;
  }
}

/**
 * Calls `visit` for each member of the object starting at `i` (after whitespace) until it
 * returns false. Returns false when the text is not an object it can follow.
 */
export function eachMember(s: string, i: number, visit: (m: Member) => boolean): boolean {
  i = skipWs(s, i);
  if (s.charCodeAt(i) !== C.LBrace) return false;
  i = skipWs(s, i + 1);
  if (s.charCodeAt(i) === C.RBrace) return true;
  for (;;) {
    if (s.charCodeAt(i) !== C.Quote) return false;
    const ke = endOfString(s, i);
    if (ke < 0) return false;
    const key = decodeKey(s, i, ke);
    if (key === null) return false;
    i = skipWs(s, ke);
    if (s.charCodeAt(i) !== C.Colon) return false;
    i = skipWs(s, i + 1);
    const ve = endOfValue(s, i);
    if (ve < 0) return false;
    if (!visit({ key, start: i, end: ve })) return true;
    i = skipWs(s, ve);
    const c = s.charCodeAt(i);
    if (c === C.RBrace) return true;
    if (c !== C.Comma) return false;
    i = skipWs(s, i + 1);
  }
}

/** Calls `visit` with the [start, end) of each element of the array at `i` until it returns false. */
export function eachElement(s: string, i: number, visit: (start: number, end: number) => boolean): boolean {
  i = skipWs(s, i);
  if (s.charCodeAt(i) !== C.LBracket) return false;
  i = skipWs(s, i + 1);
  if (s.charCodeAt(i) === C.RBracket) return true;
  for (;;) {
    const e = endOfValue(s, i);
    if (e < 0) return false;
    if (!visit(i, e)) return true;
    i = skipWs(s, e);
    const c = s.charCodeAt(i);
    if (c === C.RBracket) return true;
    if (c !== C.Comma) return false;
    i = skipWs(s, i + 1);
  }
}

/** The raw text of a top-level member's value, or null. Stops at the first match. */
export function topLevelRaw(s: string, key: string): string | null {
  let out: string | null = null;
  eachMember(s, 0, (m) => {
    if (m.key !== key) return true;
    out = s.slice(m.start, m.end);
    return false;
  });
  return out;
}

/** Roles that lead a conversation and are shared by many conversations. */
export const LEADING_ROLES: ReadonlySet<string> = new Set(["system", "developer"]);

/**
 * The raw text of the leading messages of a `messages` array at `i`: every message up to and
 * including the first one whose role is not system/developer. null if there is none.
 */
export function leadingMessagesRaw(s: string, i: number): string | null {
  const parts: string[] = [];
  let done = false;
  const ok = eachElement(s, i, (a, b) => {
    parts.push(s.slice(a, b));
    let role: string | null = null;
    eachMember(s, a, (m) => {
      if (m.key !== "role") return true;
      const raw = s.slice(m.start, m.end);
      role = raw.startsWith('"') ? (decodeKey(s, m.start, m.end) ?? raw) : raw;
      return false;
    });
    if (role === null || !LEADING_ROLES.has(role)) {
      done = true;
      return false;
    }
    return true;
  });
  if (!ok || !done) return null;
  return parts.join("\u0001");
}

/**
 * The affinity material of a request body `{"messages": [...], "tools": [...], ...}`: its tools
 * and its leading messages, as raw text; null when there are no leading messages to find.
 */
export function requestAffinityText(s: string): string | null {
  let tools = "";
  let lead: string | null = null;
  const ok = eachMember(s, 0, (m) => {
    if (m.key === "tools") tools = s.slice(m.start, m.end);
    else if (m.key === "messages") lead = leadingMessagesRaw(s, m.start);
    return true;
  });
  if (!ok || lead === null) return null;
  return `${tools}\u0002${lead as string}`;
}
