/**
 * Where a tiktoken model's pre-tokenizer pattern comes from, first match wins:
 * 1. the caller's explicit pattern (`--pattern`, library option `pattern`);
 * 2. tokenizer_config.json's `pat_str` (a string);
 * 3. a `pat_str` literal in the directory's `tokenization_*.py` (python-literal.ts: read, never
 *    run); several files or assignments with different values are ambiguous and refused;
 * 4. the family table (tiktoken-families.ts), when the directory was recognized as a family;
 * else DT_TOKENIZER_PATTERN_MISSING, naming what was looked at and how to pass one.
 *
 * Layer: load.
 */

import { DeltatokError } from "../../errors.js";
import { findPatternLiterals } from "./python-literal.js";
import type { TiktokenFamily } from "./tiktoken-families.js";

export interface PatternResolution {
  readonly pattern: string;
  /** Where it came from, for summaries and errors (e.g. `tokenization_kimi.py:26 pat_str`). */
  readonly source: string;
}

export interface PatternInputs {
  /** The explicit pattern, or null. */
  readonly override: string | null;
  /** tokenizer_config.json parsed, or null when absent. */
  readonly tokenizerConfig: unknown;
  /** The directory's `tokenization_*.py` files (name and text). */
  readonly pythonSources: ReadonlyArray<{ readonly name: string; readonly text: string }>;
  /** The recognized family, or null. */
  readonly family: { readonly family: TiktokenFamily; readonly reason: string } | null;
  /** The directory, for messages. */
  readonly dir: string;
}

export function resolveTiktokenPattern(input: PatternInputs): PatternResolution {
  if (input.override !== null) {
    if (input.override === "") throw new DeltatokError("DT_INVALID_OPTION", "pattern must be a non-empty string", { path: "pattern" });
    return { pattern: input.override, source: "the pattern option" };
  }
  const config = input.tokenizerConfig;
  if (typeof config === "object" && config !== null && Object.hasOwn(config, "pat_str")) {
    const value = (config as Record<string, unknown>).pat_str;
    if (typeof value !== "string" || value === "") {
      throw new DeltatokError("DT_TOKENIZER_INVALID", `${input.dir}/tokenizer_config.json: pat_str must be a non-empty string`, { path: "pat_str" });
    }
    return { pattern: value, source: "tokenizer_config.json pat_str" };
  }
  const found: Array<{ value: string; where: string }> = [];
  for (const { name, text } of input.pythonSources) {
    for (const literal of findPatternLiterals(text, `${input.dir}/${name}`)) {
      found.push({ value: literal.value, where: `${name}:${literal.line} ${literal.target}` });
    }
  }
  const distinct = [...new Set(found.map((f) => f.value))];
  if (distinct.length > 1) {
    throw new DeltatokError(
      "DT_TOKENIZER_AMBIGUOUS",
      `${input.dir}: the tokenization_*.py files assign different pat_str literals (${found.map((f) => f.where).join(", ")}); pass the one to use with --pattern`,
    );
  }
  if (distinct.length === 1) return { pattern: distinct[0] as string, source: (found[0] as { where: string }).where };
  if (input.family !== null) {
    return { pattern: input.family.family.pattern, source: `the ${input.family.family.name} family (${input.family.reason})` };
  }
  const looked = [
    "tokenizer_config.json has no pat_str",
    input.pythonSources.length === 0
      ? "there is no tokenization_*.py"
      : `${input.pythonSources.map((s) => s.name).join(", ")} assign${input.pythonSources.length === 1 ? "s" : ""} no pat_str literal`,
    "the rank file is not one of a known family (kimi, glm4, o200k_base, cl100k_base, p50k_base, r50k_base)",
  ];
  throw new DeltatokError(
    "DT_TOKENIZER_PATTERN_MISSING",
    `${input.dir}: no pre-tokenizer pattern for the tiktoken rank file: ${looked.join("; ")}. Pass it with --pattern (library: pattern), or add "pat_str" to tokenizer_config.json`,
  );
}
