/**
 * Segmented encoding (cut at boundary tokens, seam token prepended) equals one whole-text encode,
 * and so does reusing the ids before any boundary and encoding only the rest — on all five real
 * tokenizers, with hostile text. This is the tokenizer half of the reuse invariant.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { U32List, newBoundaries } from "../src/tokenize/encoder.js";
import { TOKENIZER_NAMES, encoderFor, specialTexts } from "./helpers/tokenizers.js";
import { hostileText } from "./helpers/texts.js";

for (const name of TOKENIZER_NAMES) {
  test(`${name}: segmented encode and every splice equal the whole encode`, () => {
    const enc = encoderFor(name);
    const specials = specialTexts(name);
    fc.assert(
      fc.property(hostileText(specials, 30), (text) => {
        const whole = enc.encodeWhole(text);
        const ids = new U32List();
        const b = newBoundaries();
        const n = enc.encodeFrom(text, 0, null, 0, ids, b);
        assert.equal(n, whole.length);
        assert.deepEqual(Array.from(ids.toArray()), whole);
        for (let k = 0; k < b.ends.length; k++) {
          const at = b.tokenCounts.data[k] as number;
          assert.equal(whole[at - 1], b.ids.data[k], "boundary token id sits at its recorded index");
          const ids2 = new U32List();
          ids2.pushAll(whole, 0, at);
          const n2 = enc.encodeFrom(text, b.ends.data[k] as number, b.ids.data[k] as number, at, ids2, newBoundaries());
          assert.equal(at + n2, whole.length);
          assert.deepEqual(Array.from(ids2.toArray()), whole);
        }
      }),
      { numRuns: name === "gemma3" ? 60 : 120 },
    );
  });
}
