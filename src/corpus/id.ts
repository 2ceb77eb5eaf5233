/**
 * A corpus conversation's id, given back exactly as the line spelt it. A JSON string id is its
 * decoded string; a JSON number id is a `NumberId` holding the number's text (`7`, `1e3`, `-0`,
 * `1.50`, `9007199254740993`) — never a JS number, which would round past 2^53, drop `-0` and
 * re-spell `1e3`. Every output writes it back as that text (`recordJson`, `jsonWithIds`):
 * `"id": 7` in the corpus is `"id": 7` in every record, summary, shard, merged output and
 * binary index, and Python's json.loads reads the same value from both.
 *
 * Identity: two ids are the same id when they are spelt the same (`idKey`): 7 and "7" are two
 * ids, and so are 7, 7.0 and 7e0. They come back differently, so treating them as one would
 * lose what was sent, and `--shard` already keys lines this way ("s:" / "r:", src/cli/shard.ts).
 * Nothing is merged or refused by id: two lines with one id give their own records.
 *
 * A NumberId is plain data (`{number: text}`), so it crosses to and from workers by structured
 * clone as it is. `NaN`, `Infinity` and `-Infinity` (which the Python-faithful parser reads)
 * are not JSON numbers and are not ids.
 *
 * Layer: corpus (imports the JSON skim only).
 */
import { randomBytes } from "node:crypto";
import { eachMember } from "../json/skim.js";
import { wireJson } from "../json/wire.js";

/** A JSON number id, as the exact text the corpus line carried. */
export interface NumberId {
  readonly number: string;
}

/** A corpus conversation's id: a string, or a JSON number kept as its text. */
export type CorpusId = string | NumberId;

/** The JSON number grammar (RFC 8259), whole string. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

export function isNumberId(v: unknown): v is NumberId {
  return typeof v === "object" && v !== null && typeof (v as { number?: unknown }).number === "string";
}

/** The id a JSON value's raw text spells: a string (decoded) or a JSON number (its text); else null. */
export function idFromRaw(raw: string): CorpusId | null {
  if (raw.startsWith('"')) {
    try {
      const v: unknown = JSON.parse(raw);
      return typeof v === "string" ? v : null;
    } catch {
      return null;
    }
  }
  return JSON_NUMBER.test(raw) ? { number: raw } : null;
}

/**
 * The raw text of the top-level `"id"` member of a JSON object's text — the last one, as parsers
 * keep the last of duplicate keys — or null.
 */
export function rawIdOf(text: string): string | null {
  let raw: string | null = null;
  eachMember(text, 0, (m) => {
    if (m.key === "id") raw = text.slice(m.start, m.end);
    return true;
  });
  return raw;
}

/** The id of a JSON object's text (its top-level "id"), or null when it has none that is an id. */
export function idOfText(text: string): CorpusId | null {
  const raw = rawIdOf(text);
  return raw === null ? null : idFromRaw(raw);
}

/** A key for maps and routing: equal exactly when the ids are spelt the same ("s:7" ≠ "r:7"). */
export function idKey(id: CorpusId): string {
  return typeof id === "string" ? `s:${id}` : `r:${id.number}`;
}

/** The id for people (progress lines, messages): the string, or the number's text. */
export function idLabel(id: CorpusId): string {
  return typeof id === "string" ? id : id.number;
}

/** The JSON text of an id (null: `null`). */
export function idJson(id: CorpusId | null | undefined): string {
  if (id === null || id === undefined) return "null";
  return typeof id === "string" ? JSON.stringify(id) : id.number;
}

/**
 * A record's JSON text (as JSON.stringify writes it, keys in order) with its top-level `id`
 * written back as sent. Records without a number id take JSON.stringify's own path.
 */
export function recordJson(rec: object): string {
  const id = (rec as { id?: unknown }).id;
  if (!isNumberId(id)) return wireJson(rec);
  let out = "{";
  for (const [k, v] of Object.entries(rec)) {
    const text = k === "id" ? id.number : (wireJson(v) as string | undefined);
    if (text === undefined) continue; // undefined, a function: JSON.stringify leaves the key out
    out += (out.length > 1 ? "," : "") + JSON.stringify(k) + ":" + text;
  }
  return out + "}";
}

/** Marks a number id's text inside JSON.stringify's output (a random tag no corpus string can guess). */
const MARK = `\u0000deltatok-id-${randomBytes(8).toString("hex")}:`;
const MARKED = new RegExp(`"${JSON.stringify(MARK).slice(1, -1).replace(/\\/g, "\\\\")}([^"]*)"`, "g");

/**
 * JSON.stringify(value, null, indent) with every `id` member holding a NumberId, at any depth
 * (a summary's differences), written back as sent.
 */
export function jsonWithIds(value: unknown, indent?: number): string {
  let marked = false;
  const text = JSON.stringify(
    value,
    (k, v: unknown) => {
      if (k !== "id" || !isNumberId(v)) return v;
      marked = true;
      return MARK + v.number;
    },
    indent,
  );
  return marked ? text.replace(MARKED, (_m, t: string) => t) : text;
}
