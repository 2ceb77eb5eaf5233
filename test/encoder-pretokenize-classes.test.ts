/**
 * The scanners' class tables hold exactly their sources' sets, for every code point and both
 * flavors (Oniguruma's from the translator's tables, the regex crate's read off tiktoken); lone
 * surrogates are in no class; `\s` stays below U+10000 (the scanners rely on it); the memory of a
 * table is what classes.ts states.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CLASS_BITS, type ClassName, classOf } from "../src/encoder/pretokenize/classes.js";
import { classTable, FLAVORS, ONIGURUMA_SOURCE, RUST_REGEX_SOURCE } from "../src/encoder/pretokenize/class-sources.js";
import { has } from "../src/encoder/regex/unicode-sets.js";

for (const flavor of FLAVORS) {
  test(`${flavor}: every code point has exactly its classes' bits`, () => {
    const t = classTable(flavor);
    assert.equal(classTable(flavor), t, "built once");
    const sets = (flavor === "oniguruma" ? ONIGURUMA_SOURCE : RUST_REGEX_SOURCE).sets();
    const names = Object.keys(CLASS_BITS) as ClassName[];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const bits = classOf(t, cp);
      if (cp >= 0xd800 && cp <= 0xdfff) {
        assert.equal(bits, 0);
        continue;
      }
      let want = 0;
      for (const n of names) if (has(sets[n], cp)) want |= CLASS_BITS[n];
      if (bits !== want) assert.fail(`U+${cp.toString(16)}: ${bits} vs ${want}`);
    }
    assert.ok(t.bytes < 256 * 1024, `${t.bytes} bytes`);
  });
}

test("the two flavors have the same members (both Unicode 16.0), \\s included: U+0085 in, U+FEFF out", () => {
  const onig = classTable("oniguruma");
  const rust = classTable("rust-regex");
  for (let cp = 0; cp < 0x80; cp++) assert.equal(classOf(onig, cp), classOf(rust, cp), `U+${cp.toString(16)}`);
  let differ = 0;
  for (let cp = 0; cp <= 0x10ffff; cp++) if (classOf(onig, cp) !== classOf(rust, cp)) differ++;
  // Oniguruma in tokenizers 0.23.2 and the regex crate in tiktoken 0.14 both have Unicode 16.0;
  // tables regenerated from other versions would differ here, and the flavors keep them apart
  assert.equal(differ, 0, `${differ} code points differ`);
  assert.equal(classOf(onig, 0x85) & CLASS_BITS.White_Space, CLASS_BITS.White_Space);
  assert.equal(classOf(rust, 0xfeff) & CLASS_BITS.White_Space, 0);
});

test("DeepSeek's CJK ranges hold no number (its scanner cuts splits 1 and 2 in one pass on that)", () => {
  const t = classTable("oniguruma");
  for (const [lo, hi] of [[0x4e00, 0x9fa5], [0x3040, 0x30ff]] as const) {
    for (let cp = lo; cp <= hi; cp++) assert.equal(classOf(t, cp) & CLASS_BITS.N, 0, `U+${cp.toString(16)}`);
  }
});
