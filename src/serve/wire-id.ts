/**
 * Request ids answered back exactly as they were sent. A JSON number id is kept as its text
 * (`WireId`) from the moment the request is read, and written back verbatim: `9007199254740993`
 * (past 2^53), `1.50`, `1e2`, `-0` come back as those characters, never rounded, re-formatted or
 * turned into a bigint that `JSON.stringify` cannot write. Ids of other JSON types (string,
 * true/false/null, an object or array) are answered as the parsed value.
 *
 * Layer: serve (imports the pool's JSON skimmer and the json value model only).
 */
import { eachMember } from "../json/skim.js";
import { PyFloat, wireJson } from "../json/index.js";

/** A JSON number id, held as the exact text the request carried. */
export class WireId {
  constructor(readonly text: string) {}
  /** As a number, for code that wants the value (never used to answer). */
  toJSON(): number {
    return Number(this.text);
  }
}

/** The JSON number grammar (RFC 8259), whole string. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

/** A WireId for `raw` when it is a JSON number's text; else null. */
export function wireIdOf(raw: string): WireId | null {
  return JSON_NUMBER.test(raw) ? new WireId(raw) : null;
}

/** Whether an id parsed by JSON.parse or parseJson may print differently from how it was sent. */
function mayDiffer(id: unknown): boolean {
  if (typeof id === "bigint" || id instanceof PyFloat) return true;
  // an integer number other than 0 can only have been written as its canonical digits (JSON has
  // no leading zeros or "+"; a fraction or exponent makes parseJson keep it a float): only 0
  // (perhaps "-0") and non-integers need their text
  return typeof id === "number" && (id === 0 || !Number.isSafeInteger(id));
}

/**
 * When the request object `v` (parsed from `line`) has a number id, replaces it by the WireId
 * of its text (the last "id" member, as JSON parsers keep the last of duplicate keys). The scan
 * runs only for ids that could print differently: a Python client's integer ids cost nothing.
 */
export function keepIdText(line: string, v: unknown): void {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return;
  const r = v as Record<string, unknown>;
  if (!mayDiffer(r.id)) return;
  let raw: string | null = null;
  eachMember(line, 0, (m) => {
    if (m.key === "id") raw = line.slice(m.start, m.end);
    return true;
  });
  const w = raw === null ? null : wireIdOf(raw);
  if (w !== null) r.id = w;
}

/**
 * The JSON text of a response envelope `{id, ...}`: a WireId is written as its text; anything
 * else as JSON.stringify writes it (a bigint — not reachable from a request — as its digits).
 */
export function responseText(r: { id: unknown }): string {
  const { id, ...rest } = r;
  const tail = wireJson(rest).slice(1); // `"result":...}` or `}`
  const idText = id instanceof WireId ? id.text : typeof id === "bigint" ? id.toString() : JSON.stringify(id ?? null);
  return tail === "}" ? `{"id":${idText}}` : `{"id":${idText},${tail}`;
}
