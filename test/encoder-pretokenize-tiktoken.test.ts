/**
 * The tiktoken pattern families, scanned with the regex crate's classes ("rust-regex"), cut where
 * tiktoken itself cuts: r50k/p50k, cl100k_base, o200k_base, Kimi K2 and GLM-4 on 700 texts (hostile
 * ones and chunks of the bundled corpora) whose pieces Python tiktoken recorded
 * (test/fixtures/pretokenize/tiktoken-pieces.json, scripts/make-tiktoken-piece-fixtures.py). The
 * patterns in the fixture are tiktoken's and the models' own strings: the constants must be them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { scannerForPattern } from "../src/encoder/pretokenize/index.js";
import * as P from "../src/encoder/pretokenize/patterns.js";
import { repoPath } from "./helpers/paths.js";
import { scannedPieces } from "./helpers/pretokenize.js";

interface Fixture {
  tiktoken: string;
  patterns: Record<string, string>;
  cases: Array<{ text: string; ends: Record<string, number[]> }>;
}

const fixture = JSON.parse(readFileSync(repoPath("test", "fixtures", "pretokenize", "tiktoken-pieces.json"), "utf8")) as Fixture;

const CONSTANTS: Record<string, string> = {
  r50k: P.TIKTOKEN_R50K_PATTERN,
  cl100k: P.TIKTOKEN_CL100K_PATTERN,
  o200k: P.O200K_PATTERN,
  kimi: P.KIMI_PATTERN,
  glm4: P.GLM4_PATTERN,
};

test("the pattern constants are tiktoken's and the models' own pat_str", () => {
  assert.deepEqual(Object.keys(fixture.patterns).sort(), Object.keys(CONSTANTS).sort());
  for (const [name, pattern] of Object.entries(fixture.patterns)) assert.equal(CONSTANTS[name], pattern, name);
});

for (const name of Object.keys(CONSTANTS)) {
  test(`${name}: the rust-regex scanner cuts every fixture text where tiktoken cut it`, () => {
    const scanner = scannerForPattern(CONSTANTS[name] as string, "rust-regex");
    assert.ok(scanner !== null, name);
    let pieces = 0;
    for (const { text, ends } of fixture.cases) {
      assert.deepEqual(scannedPieces(scanner, text).ends, ends[name], `${name} on ${JSON.stringify(text)}`);
      pieces += ends[name]?.length ?? 0;
    }
    assert.ok(pieces > 5000, `${pieces} pieces`);
  });
}
