/**
 * Token offsets rebuilt from ids equal the Rust reference's offsets (converted from code points)
 * on hostile texts for the five bundled tokenizers, wherever the normalizer leaves the text as it
 * is; where it changes it (NFC composing), offsets stay ordered, inside the text, and exact=true.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import fc from "fast-check";
import { OffsetMapper } from "../src/tokenize/offsets.js";
import { TOKENIZER_NAMES, modelsDir, rawTokenizer, specialTexts } from "./helpers/tokenizers.js";
import { hostileText } from "./helpers/texts.js";

type RustEnc = { getIds(): number[]; getOffsets(): Array<[number, number]> };
const { Tokenizer: Rust } = createRequire(import.meta.url)("tokenizers") as {
  Tokenizer: { fromFile(p: string): { encode(t: string, p: null, o: { addSpecialTokens: boolean }): Promise<RustEnc> } };
};

/** UTF-16 offset → code point offset. */
function cpIndex(text: string): (u: number) => number {
  const m = new Uint32Array(text.length + 1);
  let cp = 0;
  for (let i = 0; i < text.length; i++) {
    m[i] = cp;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) m[++i] = cp;
    cp++;
  }
  m[text.length] = cp;
  return (u) => m[u] as number;
}

for (const name of TOKENIZER_NAMES) {
  test(`${name}: rebuilt offsets equal Rust's`, async () => {
    const raw = rawTokenizer(name);
    const mapper = new OffsetMapper(raw);
    const rust = Rust.fromFile(join(modelsDir(name), "tokenizer.json"));
    const texts = fc.sample(hostileText(specialTexts(name), 24), { numRuns: 150, seed: 7 });
    let compared = 0;
    for (const text of texts) {
      const stable = text.normalize("NFC") === text;
      const enc = await rust.encode(text, null, { addSpecialTokens: false });
      const ids = raw.tokenizer.encode(text);
      assert.deepEqual(ids, enc.getIds());
      const o = mapper.offsets(text, ids);
      assert.ok(o.exact, `inexact on ${JSON.stringify(text)}`);
      const cp = cpIndex(text);
      for (let k = 0; k < ids.length; k++) {
        assert.ok((o.starts[k] as number) <= (o.ends[k] as number) && (o.ends[k] as number) <= text.length);
        if (k > 0) assert.ok((o.starts[k] as number) >= (o.starts[k - 1] as number), "ordered");
      }
      if (!stable) continue;
      const want = enc.getOffsets();
      for (let k = 0; k < ids.length; k++) {
        const got: [number, number] = [cp(o.starts[k] as number), cp(o.ends[k] as number)];
        // Rust gives partial-character tokens (bytes of one emoji split over tokens) the
        // character's span; so do we.
        assert.deepEqual(got, want[k], `${JSON.stringify(text)} token ${k}`);
      }
      compared++;
    }
    assert.ok(compared > 50);
  });
}
