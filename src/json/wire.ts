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

/** Whether a negative zero is anywhere in `v` (arrays and plain objects). */
function hasNegativeZero(v: unknown): boolean {
  if (typeof v === "number") return v === 0 && 1 / v < 0;
  if (typeof v !== "object" || v === null) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === "number") {
        if (x === 0 && 1 / x < 0) return true;
      } else if (typeof x === "object" && x !== null && hasNegativeZero(x)) return true;
    }
    return false;
  }
  if (ArrayBuffer.isView(v) || !isPlain(v)) return false;
  for (const k in v) if (hasNegativeZero((v as Record<string, unknown>)[k])) return true;
  return false;
}

/** Marks a negative zero inside JSON.stringify's output (a random tag no string can guess). */
const MARK = `\u0000deltatok-negzero-${randomBytes(8).toString("hex")}`;
const MARKED = `"${JSON.stringify(MARK).slice(1, -1)}"`;

/**
 * JSON.stringify(value, null, indent), with every negative zero written `-0.0` (Python's
 * json.loads gives -0.0, JSON.parse -0). Values without one take JSON.stringify's own path.
 */
export function wireJson(value: unknown, indent?: number): string {
  if (!hasNegativeZero(value)) return JSON.stringify(value, null, indent);
  const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === "number" && v === 0 && 1 / v < 0 ? MARK : v), indent);
  return text.split(MARKED).join("-0.0");
}
