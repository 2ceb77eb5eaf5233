import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { AddedTokenScanner } from "../src/tokenize/added-tokens.js";

const spec = [
  { id: 1, content: "<s>", special: true },
  { id: 2, content: "<s>x", special: true }, // longer token starting at the same place
  { id: 3, content: "<think>", special: false }, // matched, never a cut point
  { id: 4, content: "<r>", special: true, rstrip: true }, // flags: matched, never a cut point
  { id: 5, content: "<n>", special: true, normalized: true }, // matched after normalization
  { id: 6, content: "s>y", special: true },
];

test("scanner takes the longest token at each position, leftmost first", () => {
  const s = new AddedTokenScanner(spec, true);
  assert.deepEqual(s.scan("a<s>b<s>xc"), [
    { start: 1, end: 4, id: 1 },
    { start: 5, end: 9, id: 2 },
  ]);
  // "<s>y": "<s>" matches at 0, so "s>y" starting inside it is never seen
  assert.deepEqual(s.scan("<s>y"), [{ start: 0, end: 3, id: 1 }]);
  assert.deepEqual(s.scan("a s>y"), [{ start: 2, end: 5, id: 6 }]);
});

test("non-special and flagged tokens are matched but not reported as cut points", () => {
  const s = new AddedTokenScanner(spec, true);
  // "<think>" consumes its text; a special token after it is still found
  assert.deepEqual(s.scan("<think><s>"), [{ start: 7, end: 10, id: 1 }]);
  assert.deepEqual(s.scan("<r><s>"), [{ start: 3, end: 6, id: 1 }]);
  assert.equal(s.boundaryTokenCount, 3);
});

test("normalized tokens are raw when the tokenizer has no normalizer", () => {
  assert.deepEqual(new AddedTokenScanner(spec, true).scan("<n>"), []);
  assert.deepEqual(new AddedTokenScanner(spec, false).scan("<n>"), [{ start: 0, end: 3, id: 5 }]);
});

test("scan from a position and up to a limit", () => {
  const s = new AddedTokenScanner(spec, true);
  assert.deepEqual(s.scan("<s><s><s>", 3), [
    { start: 3, end: 6, id: 1 },
    { start: 6, end: 9, id: 1 },
  ]);
  assert.deepEqual(s.scan("<s><s>x", 0, 6), [
    { start: 0, end: 3, id: 1 },
    { start: 3, end: 6, id: 1 },
  ]);
});

test("scanner agrees with a naive leftmost-longest reference on random texts", () => {
  const s = new AddedTokenScanner(spec, true);
  const raw = spec.filter((t) => !t.normalized);
  const naive = (text: string) => {
    const out: Array<{ start: number; end: number; id: number }> = [];
    let i = 0;
    while (i < text.length) {
      let best: (typeof raw)[number] | undefined;
      for (const t of raw) if (text.startsWith(t.content, i) && (best === undefined || t.content.length > best.content.length)) best = t;
      if (best === undefined) {
        i++;
        continue;
      }
      if (best.special && !best.rstrip) out.push({ start: i, end: i + best.content.length, id: best.id });
      i += best.content.length;
    }
    return out;
  };
  fc.assert(
    fc.property(fc.array(fc.constantFrom("<", "s", ">", "x", "y", "<s>", "<think>", "<r>", "a", " "), { maxLength: 30 }), (parts) => {
      const text = parts.join("");
      assert.deepEqual(s.scan(text), naive(text));
    }),
    { numRuns: 500 },
  );
});
