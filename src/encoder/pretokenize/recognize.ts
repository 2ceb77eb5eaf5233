/**
 * Which scanner cuts a pre-tokenizer: `scannerFor` reads a tokenizer.json pre_tokenizer object (the
 * Oniguruma flavor, as the Rust `tokenizers` crate runs it), `scannerForPattern` a bare pattern in
 * a named flavor (tiktoken's patterns: "rust-regex"). Both recognize exact shapes and pattern
 * strings only, and answer null for anything else: the regex path stays for those.
 *
 * tokenizer.json shapes recognized:
 * - `Split` with one of the families' patterns (`{"Regex": ...}`), behavior `Isolated` and invert
 *   false, or behavior `Removed` and invert true (the same pieces: the families' matches tile the
 *   text, so there is nothing between two matches to keep or remove);
 * - `ByteLevel` with `use_regex` true or absent and `add_prefix_space` false (GPT-2's pattern; a
 *   prefix space changes the text, which a scanner does not);
 * - `Sequence` of one such Split, or of DeepSeek V3's three Splits, followed by any number of
 *   `ByteLevel` with `use_regex: false, add_prefix_space: false` (those cut nothing; their byte
 *   mapping stays the caller's).
 *
 * Layer: encoder.
 */

import { classTable, type Flavor } from "./class-sources.js";
import { Cl100kScanner } from "./cl100k.js";
import { DeepSeekScanner } from "./deepseek.js";
import { Gpt2Scanner } from "./gpt2.js";
import { O200kScanner } from "./o200k.js";
import {
  CL100K_PATTERN,
  DEEPSEEK_PATTERNS,
  GPT2_PATTERN,
  KIMI_PATTERN,
  O200K_PATTERN,
  QWEN_PATTERN,
  TIKTOKEN_CL100K_PATTERN,
  TIKTOKEN_R50K_PATTERN,
} from "./patterns.js";
import type { PieceScanner } from "./scanner.js";

type Family = "gpt2" | "cl100k" | "cl100k-tiktoken" | "qwen" | "o200k" | "kimi" | "deepseek-v3";

const MAKERS: Readonly<Record<Family, (flavor: Flavor) => PieceScanner>> = {
  gpt2: (f) => new Gpt2Scanner(`gpt2/${f}`, classTable(f)),
  cl100k: (f) => new Cl100kScanner(`cl100k/${f}`, classTable(f), 3),
  "cl100k-tiktoken": (f) => new Cl100kScanner(`cl100k-tiktoken/${f}`, classTable(f), 3, true),
  qwen: (f) => new Cl100kScanner(`qwen/${f}`, classTable(f), 1),
  o200k: (f) => new O200kScanner(`o200k/${f}`, classTable(f), { han: false, slash: true }),
  kimi: (f) => new O200kScanner(`kimi/${f}`, classTable(f), { han: true, slash: false }),
  "deepseek-v3": (f) => new DeepSeekScanner(`deepseek-v3/${f}`, classTable(f)),
};

/** Pattern → family, per flavor: the combinations proven equal to their reference by the tests. */
const PATTERNS: Readonly<Record<Flavor, ReadonlyMap<string, Family>>> = {
  oniguruma: new Map<string, Family>([
    [GPT2_PATTERN, "gpt2"],
    [CL100K_PATTERN, "cl100k"],
    [QWEN_PATTERN, "qwen"],
    [O200K_PATTERN, "o200k"],
  ]),
  "rust-regex": new Map<string, Family>([
    [TIKTOKEN_R50K_PATTERN, "gpt2"],
    [TIKTOKEN_CL100K_PATTERN, "cl100k-tiktoken"],
    [CL100K_PATTERN, "cl100k"],
    [O200K_PATTERN, "o200k"],
    [KIMI_PATTERN, "kimi"],
  ]),
};

const made = new Map<string, PieceScanner>();

function scanner(family: Family, flavor: Flavor): PieceScanner {
  const key = `${family}/${flavor}`;
  let s = made.get(key);
  if (s === undefined) made.set(key, (s = MAKERS[family](flavor)));
  return s;
}

/**
 * The scanner of a pattern in a flavor ("oniguruma": as the Rust `tokenizers` crate runs it;
 * "rust-regex": as tiktoken runs it), or null. Its pieces are the pattern's matches, which tile
 * the text: also what tiktoken encodes, since it encodes the matches only.
 */
export function scannerForPattern(pattern: string, flavor: Flavor): PieceScanner | null {
  const family = PATTERNS[flavor]?.get(pattern);
  return family === undefined ? null : scanner(family, flavor);
}

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function hasOnlyKeys(o: Json, keys: readonly string[]): boolean {
  return Object.keys(o).every((k) => keys.includes(k));
}

/** The Regex string of a Split with a tiling behavior, or null. */
function splitPattern(c: Json, behavior: string, invert: boolean): string | null {
  if (c["type"] !== "Split" || !hasOnlyKeys(c, ["type", "pattern", "behavior", "invert"])) return null;
  if (c["behavior"] !== behavior || c["invert"] !== invert) return null;
  const p = c["pattern"];
  if (!isObj(p) || !hasOnlyKeys(p, ["Regex"]) || typeof p["Regex"] !== "string") return null;
  return p["Regex"];
}

function tilingSplit(c: Json): PieceScanner | null {
  const pattern = splitPattern(c, "Isolated", false) ?? splitPattern(c, "Removed", true);
  return pattern === null ? null : scannerForPattern(pattern, "oniguruma");
}

/** A ByteLevel that cuts nothing and adds nothing (its byte mapping aside). */
function isMappingOnly(c: unknown): boolean {
  return isObj(c) && c["type"] === "ByteLevel" && c["use_regex"] === false && c["add_prefix_space"] === false &&
    hasOnlyKeys(c, ["type", "add_prefix_space", "trim_offsets", "use_regex"]);
}

/** The scanner for a pre-tokenizer config exactly as tokenizer.json spells it, or null. */
export function scannerFor(preTokenizer: unknown): PieceScanner | null {
  if (!isObj(preTokenizer)) return null;
  switch (preTokenizer["type"]) {
    case "Split":
      return tilingSplit(preTokenizer);
    case "ByteLevel": {
      const c = preTokenizer;
      if (!hasOnlyKeys(c, ["type", "add_prefix_space", "trim_offsets", "use_regex"])) return null;
      if (c["add_prefix_space"] !== false || (c["use_regex"] !== undefined && c["use_regex"] !== true)) return null;
      return scanner("gpt2", "oniguruma");
    }
    case "Sequence": {
      const list = preTokenizer["pretokenizers"];
      if (!Array.isArray(list) || !hasOnlyKeys(preTokenizer, ["type", "pretokenizers"])) return null;
      let n = list.length;
      while (n > 0 && isMappingOnly(list[n - 1])) n--;
      const cutting = list.slice(0, n);
      if (cutting.length === 1) return cutting[0]?.["type"] === "Sequence" ? null : scannerFor(cutting[0]);
      if (cutting.length === DEEPSEEK_PATTERNS.length && cutting.every((c, i) => isObj(c) && splitPattern(c, "Isolated", false) === DEEPSEEK_PATTERNS[i])) {
        return scanner("deepseek-v3", "oniguruma");
      }
      return null;
    }
    default:
      return null;
  }
}
