/**
 * What deltatok writes out (CLI records and summaries, sidecar answers) is snake_case; the
 * TypeScript API is camelCase. `snakeKeys` is the conversion, applied where a TS result becomes a
 * written record (README "Field names"). `wireJson` is JSON.stringify except that a negative zero
 * is written `-0.0`, so that json.loads and JSON.parse read a negative zero back (JSON.stringify
 * writes `0`; a rollout's logprob can be -0.0).
 *
 * Layer: json.
 */
import { randomBytes } from "node:crypto";

/** A key written as it is: anything that is not a camelCase identifier (snake_case, DT_ codes, ids, text). */
const CAMEL = /^[a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*$/;

/**
 * `maxRssMb` → `max_rss_mb`, `charsEncoded` → `chars_encoded`, `utf16Offsets` → `utf16_offsets`
 * (digits stay with the word before them), `idsFromHTTP` → `ids_from_http`, `parseJSONText` →
 * `parse_json_text` (an acronym is one word; its last capital starts the next word when a
 * lowercase letter follows). A key that is not a camelCase identifier — already snake_case, a
 * code such as `DT_FORBIDDEN`, a number — is returned unchanged.
 */
export function snakeCase(key: string): string {
  if (!CAMEL.test(key)) return key;
  let out = "";
  for (let i = 0; i < key.length; i++) {
    const c = key[i] as string;
    const upper = c >= "A" && c <= "Z";
    if (upper && i > 0) {
      const prev = key[i - 1] as string;
      const next = key[i + 1];
      const prevUpper = prev >= "A" && prev <= "Z";
      const nextLower = next !== undefined && next >= "a" && next <= "z";
      // a new word: after a lowercase letter or digit, or the last capital of an acronym before a lowercase letter
      if (!prevUpper || nextLower) out += "_";
    }
    out += upper ? c.toLowerCase() : c;
  }
  return out;
}

function isPlain(v: object): boolean {
  const p = Object.getPrototypeOf(v) as unknown;
  return p === Object.prototype || p === null;
}

/**
 * `value` with the keys of its plain objects (at any depth, through arrays) in snake_case
 * (`snakeCase`); values are not touched, and objects of a class (a NumberId) are kept as they are.
 * For a TS result object only: a caller's data (message contents, template kwargs) must not go
 * through it, since its keys are not ours.
 */
export function snakeKeys(value: object): Record<string, unknown>;
export function snakeKeys(value: unknown): unknown;
export function snakeKeys(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((v: unknown) => snakeKeys(v));
  if (!isPlain(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[snakeCase(k)] = snakeKeys(v);
  return out;
}

/** Marks a negative zero inside JSON.stringify's output (a random tag no string can guess). */
const MARK = `\u0000deltatok-negzero-${randomBytes(8).toString("hex")}`;
const MARKED = `"${JSON.stringify(MARK).slice(1, -1)}"`;

const isNegativeZero = (x: number): boolean => x === 0 && 1 / x < 0;

/**
 * `v` with every negative zero (in arrays and plain objects) replaced by MARK: the same value
 * when it holds none, else a copy of only the arrays and objects on the way to one.
 */
function markNegativeZeros(v: unknown): unknown {
  if (typeof v === "number") return isNegativeZero(v) ? MARK : v;
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const y = typeof x === "number" ? (x === 0 && 1 / x < 0 ? MARK : x) : typeof x === "object" && x !== null ? markNegativeZeros(x) : x;
      if (y !== x && out === null) out = v.slice(0, i);
      if (out !== null) out.push(y);
    }
    return out ?? v;
  }
  if (!isPlain(v)) return v; // a class instance (its toJSON, if any, decides its text)
  let out: Record<string, unknown> | null = null;
  for (const k in v) {
    const x = (v as Record<string, unknown>)[k];
    const y = markNegativeZeros(x);
    if (y !== x && out === null) out = { ...(v as Record<string, unknown>) };
    if (out !== null) out[k] = y;
  }
  return out ?? v;
}

/**
 * JSON.stringify(value, null, indent), with every negative zero written `-0.0` (Python's
 * json.loads gives -0.0, JSON.parse -0). A value without one is JSON.stringify's own text; with
 * one, only the arrays and objects holding it are copied (no replacer: the text is still written
 * by JSON.stringify alone).
 */
export function wireJson(value: unknown, indent?: number): string {
  const marked = markNegativeZeros(value);
  const text = JSON.stringify(marked, null, indent);
  return marked === value ? text : text.split(MARKED).join("-0.0");
}
