/**
 * Every scanner cuts exactly where its pattern's regex path cuts (the translated Oniguruma pattern
 * through pattern-split.ts, composed as the Sequence composes it), piece by piece: on fast-check
 * hostile text (lone surrogates included), inside a longer string (a range of it, which is all the
 * scanner sees), and on every string of the bundled corpora.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { scannerFor } from "../src/encoder/pretokenize/index.js";
import { corpusStrings, firstDifference, preTokenizerOf, regexPieces, SCANNED, scannedPieces, scannerText } from "./helpers/pretokenize.js";

const RUNS = Number(process.env.DELTATOK_PROPERTY_RUNS ?? 400);
const SEED = 20261202;

for (const [name, family] of SCANNED) {
  const config = preTokenizerOf(name);
  const scanner = scannerFor(config);
  const reference = regexPieces(config);

  test(`${name}: scannerFor gives ${family}, and it cuts hostile text as the regex path does`, () => {
    assert.ok(scanner !== null, `${name}: no scanner`);
    assert.equal(scanner.family, family);
    fc.assert(
      fc.property(scannerText(true), (text) => {
        const got = scannedPieces(scanner, text).pieces;
        const want = reference(text);
        assert.deepEqual(got, want, `${name} on ${JSON.stringify(text)}: ${firstDifference(got, want)}`);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  test(`${name}: a range of a longer string is cut as that range alone`, () => {
    assert.ok(scanner !== null);
    fc.assert(
      fc.property(scannerText(true, 8), scannerText(true, 12), scannerText(true, 8), (before, text, after) => {
        const whole = before + text + after;
        const { pieces, ends } = scannedPieces(scanner, whole, before.length, before.length + text.length);
        assert.deepEqual(pieces, reference(text), JSON.stringify([before, text, after]));
        if (text.length > 0) assert.equal(ends[ends.length - 1], before.length + text.length);
        else assert.equal(ends.length, 0);
      }),
      { numRuns: Math.ceil(RUNS / 4), seed: SEED + 1 },
    );
  });

  test(`${name}: every string of the bundled corpora is cut as the regex path cuts it`, () => {
    assert.ok(scanner !== null);
    let pieces = 0;
    for (const text of corpusStrings()) {
      const got: string[] = scannedPieces(scanner, text).pieces;
      const want: string[] = reference(text);
      if (got.length !== want.length || got.some((p, i) => p !== want[i])) assert.fail(`${name}: ${firstDifference(got, want)}`);
      pieces += got.length;
    }
    assert.ok(pieces > 100_000, `only ${pieces} pieces`);
  });
}
