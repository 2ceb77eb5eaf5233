// Streaming an unpunctuated CJK run (no cut anywhere), 2 characters per append: the text
// counter with its open run (appendable BPE) against the same counter without it (the tail
// re-encoded per append) and one whole encode, in one process. Prints one JSON line per
// tokenizer and length; every streamed count is checked against the whole encode.
//
//   npm run build && node bench/stream-cjk.mjs [--tokenizers qwen3,deepseek_v3] [--lengths 6000,24000] [--no-before] [--text japanese]
//
// --text japanese: Japanese prose instead (sentences of 20–40 kana and ideographs, each ending in
// a kana and 。); "before" is then the counter without the kana / Hangul cut of rule 1 (a kana
// before 。 no cut, as before that rule), open run on in both.
//
// CPU time (process.cpuUsage). "whole": best of 5 warm encodes of the final text; "after": best of
// two streams after a first one (after_first_ms). The appendable index is built once per
// tokenizer before timing (index_ms), and a 6,000-character stream of other text warms the JIT.
import { TextStream, streamRuleFor } from "../dist/src/tokenize/stream.js";
import { TokenEncoder } from "../dist/src/tokenize/encoder.js";
import { rawTokenizer } from "../dist/test/helpers/tokenizers.js";
import { ideographs, japaneseProse } from "../dist/test/helpers/cjk-text.js";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? dflt : process.argv[i + 1];
};
const tokenizers = arg("--tokenizers", "qwen3,deepseek_v3").split(",");
const lengths = arg("--lengths", "6000,24000").split(",").map(Number);
const before = !process.argv.includes("--no-before");
const japanese = arg("--text", "ideographs") === "japanese";

const IDEOGRAPHS = "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生会自能";
const textOf = (n, seed) => (japanese ? japaneseProse : ideographs)(n, seed, IDEOGRAPHS);
/** Kana letters and Hangul syllables: the letters rule 1 cuts after since the kana cut. */
const kanaOrHangul = (u) => (u >= 0x3041 && u <= 0x3096) || (u >= 0x30a1 && u <= 0x30fa) || u === 0x30fc || (u >= 0xac00 && u <= 0xd7a3);

const cpu = (f) => {
  const a = process.cpuUsage();
  const r = f();
  const d = process.cpuUsage(a);
  return { ms: (d.user + d.system) / 1000, r };
};

for (const name of tokenizers) {
  const raw = rawTokenizer(name);
  const rule = streamRuleFor(raw);
  const enc = new TokenEncoder(raw);
  const index = rule.appendable === null ? null : cpu(() => rule.appendable.index());
  const stream = (r, text) => {
    const s = new TextStream(enc, r, { maxChars: 1 << 20, maxLookBack: 1 << 20, ids: false });
    for (let i = 0; i < text.length; i += 2) s.append(text.slice(i, i + 2));
    return s;
  };
  stream(rule, ideographs(6000, 1, IDEOGRAPHS)); // warm: the JIT and the compatibility cache
  for (const n of lengths) {
    const text = textOf(n, 20261202 + n);
    let whole = Infinity;
    let count = 0;
    for (let k = 0; k < 5; k++) {
      const t = cpu(() => enc.encodeWhole(text).length);
      whole = Math.min(whole, t.ms);
      count = t.r;
    }
    // first: this text's first stream (new pairs for the compatibility cache); best of 3 after it
    const runs = [0, 1, 2].map(() => cpu(() => stream(rule, text)));
    for (const a of runs) if (a.r.count !== count) throw new Error(`${name} ${n}: open run counted ${a.r.count}, whole ${count}`);
    const after = runs.slice(1).reduce((a, b) => (b.ms < a.ms ? b : a), runs[1]);
    const out = {
      tokenizer: name,
      text: japanese ? "japanese" : "ideographs",
      chars: n,
      tokens: count,
      index_ms: index === null ? null : +index.ms.toFixed(1),
      appendable: rule.appendableReason === "" ? "yes" : rule.appendableReason,
      whole_ms: +whole.toFixed(2),
      after_first_ms: +runs[0].ms.toFixed(1),
      after_ms: +after.ms.toFixed(1),
      after_ratio: +(after.ms / whole).toFixed(2),
      after_chars_encoded: after.r.stats().charsEncoded,
      after_run_appends: after.r.stats().runAppends,
      after_max_chars_encoded: after.r.stats().maxCharsEncoded,
    };
    if (before) {
      const off = japanese
        ? { ...rule, isCut: (p, q) => rule.isCut(p, q) && !kanaOrHangul(p) }
        : { ...rule, appendable: null, appendableReason: "off" };
      const b = cpu(() => stream(off, text));
      if (b.r.count !== count) throw new Error(`${name} ${n}: counted ${b.r.count}, whole ${count}`);
      Object.assign(out, { before_ms: +b.ms.toFixed(1), before_ratio: +(b.ms / whole).toFixed(1), before_chars_encoded: b.r.stats().charsEncoded, before_max_chars_encoded: b.r.stats().maxCharsEncoded });
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  }
}
