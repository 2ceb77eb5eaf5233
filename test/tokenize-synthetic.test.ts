/**
 * The reuse invariant on tokenizers built to break naive reuse: Metaspace `prepend_scheme:
 * first` (the first section is tokenized differently), an added token that is a prefix of
 * another and one that starts inside another, lstrip/rstrip flags. The Rust tokenizers binding is
 * the reference for whole-text ids.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import fc from "fast-check";
import { TokenEncoder, U32List, newBoundaries } from "../src/tokenize/encoder.js";
import { TokenSplicer, wholeText } from "../src/splice/splicer.js";
import { SYNTHETIC_NAMES, syntheticDir, syntheticTokenizer, type SyntheticName } from "./helpers/tokenizers.js";

const { Tokenizer: RustTokenizer } = createRequire(import.meta.url)("tokenizers") as {
  Tokenizer: { fromFile(p: string): { encode(t: string, p: null, o: { addSpecialTokens: boolean }): Promise<{ getIds(): number[] }> } };
};

const PIECES: Record<SyntheticName, string[]> = {
  "metaspace-first": ["<s>", "</s>", "[INST]", "[/INST]", "hello", " world", " ", "he", "\n", "x"],
  "overlapping-added": ["<t>", "<t>x", "t>y", "<u>", "<", "t", ">", "x", "y", "q", "r", "q<t>", " hi", "\n"],
  "stripping-added": ["<a>", "<b>", "<c>", "  ", " ", "hi", "yo", "\n", "z"],
};
const text = (name: SyntheticName) => fc.array(fc.constantFrom(...PIECES[name]), { maxLength: 20 }).map((p) => p.join(""));

for (const name of SYNTHETIC_NAMES) {
  const enc = new TokenEncoder(syntheticTokenizer(name));

  test(`${name}: whole-text ids equal the Rust reference`, async () => {
    const rust = RustTokenizer.fromFile(join(syntheticDir(name), "tokenizer.json"));
    const samples = fc.sample(text(name), { numRuns: 200, seed: 42 });
    for (const t of samples) {
      const want = (await rust.encode(t, null, { addSpecialTokens: false })).getIds();
      assert.deepEqual(enc.encodeWhole(t), want, JSON.stringify(t));
    }
  });

  test(`${name}: segmented encode and every splice equal the whole encode`, () => {
    fc.assert(
      fc.property(text(name), (t) => {
        const whole = enc.encodeWhole(t);
        const ids = new U32List();
        const b = newBoundaries();
        enc.encodeFrom(t, 0, null, 0, ids, b);
        assert.deepEqual(Array.from(ids.toArray()), whole);
        for (let k = 0; k < b.ends.length; k++) {
          const at = b.tokenCounts.data[k] as number;
          const ids2 = new U32List();
          ids2.pushAll(whole, 0, at);
          enc.encodeFrom(t, b.ends.data[k] as number, b.ids.data[k] as number, at, ids2, newBoundaries());
          assert.deepEqual(Array.from(ids2.toArray()), whole);
        }
      }),
      { numRuns: 400 },
    );
  });

  test(`${name}: the splicer equals the whole encode over random request sequences`, () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(text(name), fc.boolean()), { minLength: 1, maxLength: 10 }), (steps) => {
        const splicer = new TokenSplicer(enc, { storeIds: true, maxBytes: 1 << 24 });
        let t = "";
        for (let i = 0; i < steps.length; i++) {
          const [piece, restart] = steps[i] as [string, boolean];
          // grow the text, or replace its tail (history rewrite / generation prompt swap)
          t = restart ? t.slice(0, Math.floor(t.length / 2)) + piece : t + piece;
          const r = splicer.tokenize(wholeText(t), [1n, BigInt(i + 2)], true, splicer.lookup([1n, BigInt(i + 2)]));
          assert.deepEqual(Array.from(r.ids ?? []), enc.encodeWhole(t), JSON.stringify(t));
        }
      }),
      { numRuns: 400 },
    );
  });
}

test("overlapping-added: a token that starts before a cached boundary and ends after it forbids that cut", () => {
  const enc = new TokenEncoder(syntheticTokenizer("overlapping-added"));
  const splicer = new TokenSplicer(enc, { storeIds: true, maxBytes: 1 << 24 });
  splicer.tokenize(wholeText("<u> hi q<t>"), [1n], true, splicer.lookup([1n])); // "<t>" is a boundary here...
  const r = splicer.tokenize(wholeText("<u> hi q<t>r"), [1n, 2n], true, splicer.lookup([1n, 2n])); // ...but "q<t>r" is one token here
  assert.deepEqual(Array.from(r.ids ?? []), enc.encodeWhole("<u> hi q<t>r"));
  assert.equal(r.outcome, "partial", "reuse stops at the earlier boundary <u>");
  assert.equal(r.reused, 1);
});

test("overlapping-added: a longer token starting at a cached boundary token forbids that cut", () => {
  const enc = new TokenEncoder(syntheticTokenizer("overlapping-added"));
  const splicer = new TokenSplicer(enc, { storeIds: true, maxBytes: 1 << 24 });
  splicer.tokenize(wholeText("<u> hi <t>"), [1n], true, splicer.lookup([1n]));
  const r = splicer.tokenize(wholeText("<u> hi <t>x"), [1n, 2n], true, splicer.lookup([1n, 2n]));
  assert.deepEqual(Array.from(r.ids ?? []), enc.encodeWhole("<u> hi <t>x"));
  assert.equal(r.reused, 1);
});

test("metaspace-first: the piece after a cut is tokenized as a non-first section", () => {
  const enc = new TokenEncoder(syntheticTokenizer("metaspace-first"));
  const splicer = new TokenSplicer(enc, { storeIds: true, maxBytes: 1 << 24 });
  splicer.tokenize(wholeText("[INST]hello[/INST]"), [1n], true, splicer.lookup([1n]));
  const r = splicer.tokenize(wholeText("[INST]hello[/INST]hello world"), [1n, 2n], true, splicer.lookup([1n, 2n]));
  assert.equal(r.outcome, "partial");
  const whole = enc.encodeWhole("[INST]hello[/INST]hello world");
  assert.deepEqual(Array.from(r.ids ?? []), whole);
  // and that differs from encoding the piece as a fresh text: the seam matters here
  assert.notDeepEqual(enc.encodeWhole("hello world"), whole.slice(whole.length - enc.encodeWhole("hello world").length));
});
