/**
 * Reading test/fixtures/formats/: the texts (checked against the helpers that made them) and the
 * expectation files written by scripts/make-format-fixtures.py, with the same short hashes.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

import { corpusTexts, formatHostileTexts } from "./format-texts.js";
import { repoPath } from "./paths.js";

export function formatFixturePath(...parts: string[]): string {
  return repoPath("test", "fixtures", "formats", ...parts);
}

export function readFormatJson<T>(...parts: string[]): T {
  return JSON.parse(readFileSync(formatFixturePath(...parts), "utf8")) as T;
}

/** First 16 hex digits of the sha256 of the text's UTF-8. */
export function shortHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16);
}

/** First 16 hex digits of the sha256 of the ids as little-endian uint32. */
export function shortIdsHash(ids: ArrayLike<number>): string {
  const bytes = new Uint8Array(ids.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < ids.length; i++) view.setUint32(4 * i, ids[i] as number, true);
  return createHash("sha256").update(bytes).digest("hex").slice(0, 16);
}

export interface FormatTexts {
  corpus: string[];
  hostile: string[];
}

let cached: FormatTexts | undefined;

/**
 * The fixture texts, after checking that the corpus extraction and the seeded fast-check sample
 * still give exactly the strings the references were computed on.
 */
export function formatTexts(): FormatTexts {
  if (cached !== undefined) return cached;
  const stored = readFormatJson<{ corpus: string[]; hostile: string[] }>("texts.json");
  const corpus = corpusTexts();
  assert.deepEqual(corpus.map(shortHash), stored.corpus, "corpus texts changed: rerun scripts/make-format-fixtures.py");
  assert.deepEqual(formatHostileTexts(), stored.hostile, "the seeded hostile texts changed (fast-check version?): rerun scripts/make-format-fixtures.py");
  cached = { corpus, hostile: stored.hostile };
  return cached;
}

/** A hostile expectation in full, or (past the first ones) as a hashed row like the corpus rows. */
export type FullRow = { ids: number[]; normalized?: string; decoded?: string };
export type HashRow = [number, string, ...string[]];

export interface Expectations {
  corpus: HashRow[];
  hostile: Array<FullRow | HashRow>;
}

export interface Answer {
  ids: ArrayLike<number>;
  normalized?: string;
  decoded?: string;
}

/**
 * Compares answers with expectations over every text; returns a list of mismatch descriptions
 * (empty when all agree). `answer` computes what the implementation under test says.
 */
export function compareExpectations(
  texts: FormatTexts,
  expect: Expectations,
  answer: (text: string) => Answer,
  options: { normalized?: boolean; decoded?: boolean } = {},
): string[] {
  const problems: string[] = [];
  const check = (kind: string, i: number, text: string, row: FullRow | HashRow): void => {
    const got = answer(text);
    const label = `${kind}[${i}] ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}`;
    if (Array.isArray(row)) {
      const [count, idsHash, ...rest] = row;
      if (got.ids.length !== count || shortIdsHash(got.ids) !== idsHash) {
        problems.push(`${label}: ids differ (count ${got.ids.length} vs ${count})`);
      }
      let k = 0;
      if (options.normalized === true && shortHash(got.normalized ?? "") !== rest[k++]) problems.push(`${label}: normalized text differs`);
      if (options.decoded === true && shortHash(got.decoded ?? "") !== rest[k++]) problems.push(`${label}: decoded text differs`);
    } else {
      const ids = Array.from(got.ids);
      if (JSON.stringify(ids) !== JSON.stringify(row.ids)) problems.push(`${label}: ids ${JSON.stringify(ids)} vs ${JSON.stringify(row.ids)}`);
      if (options.normalized === true && got.normalized !== row.normalized) {
        problems.push(`${label}: normalized ${JSON.stringify(got.normalized)} vs ${JSON.stringify(row.normalized)}`);
      }
      if (options.decoded === true && got.decoded !== row.decoded) {
        problems.push(`${label}: decoded ${JSON.stringify(got.decoded)} vs ${JSON.stringify(row.decoded)}`);
      }
    }
  };
  texts.corpus.forEach((text, i) => check("corpus", i, text, expect.corpus[i] as HashRow));
  texts.hostile.forEach((text, i) => check("hostile", i, text, expect.hostile[i] as FullRow | HashRow));
  return problems;
}
