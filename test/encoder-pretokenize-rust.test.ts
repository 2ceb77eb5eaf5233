/**
 * A spot check of the scanners against the Rust `tokenizers` binding itself (not only the regex
 * path): the bundled tokenizers' pre-tokenizers cut a few hundred hostile texts (no lone
 * surrogates: the binding receives UTF-8) at the same code point offsets.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { scannerFor } from "../src/encoder/pretokenize/index.js";
import { preTokenizerOf, SCANNED, scannedPieces, scannerText } from "./helpers/pretokenize.js";
import { rustPreTokenizerOffsets } from "./helpers/rust.js";

const TEXTS = fc.sample(scannerText(false), { numRuns: 300, seed: 20261203 });

/** UTF-16 ends → [start, end) code point offsets. */
function codePointSpans(text: string, ends: readonly number[]): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let prevUnit = 0;
  let prevCp = 0;
  for (const e of ends) {
    const cp = prevCp + [...text.slice(prevUnit, e)].length;
    spans.push([prevCp, cp]);
    prevUnit = e;
    prevCp = cp;
  }
  return spans;
}

for (const [name] of SCANNED) {
  test(`${name}: the scanner cuts where the Rust binding cuts`, () => {
    const config = preTokenizerOf(name);
    const scanner = scannerFor(config);
    assert.ok(scanner !== null);
    const rust = rustPreTokenizerOffsets(config);
    let pieces = 0;
    for (const text of TEXTS) {
      const spans = codePointSpans(text, scannedPieces(scanner, text).ends);
      assert.deepEqual(spans, rust(text), `${name} on ${JSON.stringify(text)}`);
      pieces += spans.length;
    }
    assert.ok(pieces > 2000, `only ${pieces} pieces`);
  });
}
