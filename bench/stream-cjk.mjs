// Streaming an unpunctuated CJK run (no cut anywhere), 2 characters per append: the text
// counter with its open run (appendable BPE) against the same counter without it (the tail
// re-encoded per append) and one whole encode, in one process. Prints one JSON line per
// tokenizer and length; every streamed count is checked against the whole encode.
//
//   npm run build && node bench/stream-cjk.mjs [--tokenizers qwen3,deepseek_v3] [--lengths 6000,24000] [--no-before] [--text japanese]
//   node bench/stream-cjk.mjs --message [--tokenizers qwen3,gemma3] [--lengths 6000,24000] [--dist DIR]
//
// --text japanese: Japanese prose instead (sentences of 20–40 kana and ideographs, each ending in
// a kana and 。); "before" is then the counter without the kana / Hangul cut of rule 1 (a kana
// before 。 no cut, as before that rule), open run on in both.
//
// --message: the message counter (Deltatok.messageCounter, python renderer) fed the run as
// content deltas of 2 characters, against countMessage of the whole message once (best of 5);
// "stream": best of two after a first one. --dist DIR runs it on another build's dist/ (an older
// checkout's, for the figures before a change); stats that build lacks print as null.
//
// CPU time (process.cpuUsage). "whole": best of 5 warm encodes of the final text; "after": best of
// two streams after a first one (after_first_ms). The appendable index is built once per
// tokenizer before timing (index_ms), and a 6,000-character stream of other text warms the JIT.
// Tokenizers: the bundled ones and the extra dev-dependency ones (llama2, gemini, …).
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? dflt : process.argv[i + 1];
};
const tokenizers = arg("--tokenizers", "qwen3,deepseek_v3").split(",");
const lengths = arg("--lengths", "6000,24000").split(",").map(Number);
const before = !process.argv.includes("--no-before");
const japanese = arg("--text", "ideographs") === "japanese";
const message = process.argv.includes("--message");
const dist = new URL(arg("--dist", new URL("../dist/", import.meta.url).pathname).replace(/\/?$/, "/"), "file:///");
const { TextStream, streamRuleFor } = await import(new URL("src/tokenize/stream.js", dist).href);
const { TokenEncoder } = await import(new URL("src/tokenize/encoder.js", dist).href);
const { rawTokenizer, modelsDir } = await import(new URL("test/helpers/tokenizers.js", dist).href);
const { ideographs, japaneseProse } = await import(new URL("test/helpers/cjk-text.js", dist).href);
const { Deltatok } = await import(new URL("src/api/deltatok.js", dist).href);

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

if (message) {
  for (const name of tokenizers) {
    const dt = await Deltatok.create({ tokenizer: modelsDir(name), renderer: "python" });
    const stream = (text) => {
      const m = dt.messageCounter();
      for (let i = 0; i < text.length; i += 2) m.append({ content: text.slice(i, i + 2) });
      return m;
    };
    stream(ideographs(6000, 1, IDEOGRAPHS)); // warm
    for (const n of lengths) {
      const text = textOf(n, 20261202 + n);
      const msg = { role: "assistant", content: text };
      let once = Infinity;
      let count = 0;
      for (let k = 0; k < 5; k++) {
        const t = cpu(() => dt.countMessage(msg));
        once = Math.min(once, t.ms);
        count = t.r;
      }
      const runs = [0, 1, 2].map(() => cpu(() => stream(text)));
      for (const a of runs) if (a.r.count !== count) throw new Error(`${name} ${n}: message counter counted ${a.r.count}, countMessage ${count}`);
      const best = runs.slice(1).reduce((a, b) => (b.ms < a.ms ? b : a), runs[1]);
      const st = best.r.stats();
      process.stdout.write(
        JSON.stringify({
          tokenizer: name,
          mode: "message",
          text: japanese ? "japanese" : "ideographs",
          chars: n,
          tokens: count,
          once_ms: +once.toFixed(2),
          stream_first_ms: +runs[0].ms.toFixed(1),
          stream_ms: +best.ms.toFixed(1),
          ratio: +(best.ms / once).toFixed(1),
          chars_encoded: st.charsEncoded,
          suffix_chars: st.suffixChars ?? null,
          render_chars: st.renderChars,
          rewinds: st.rewinds,
          plain_appends: st.plainAppends ?? null,
          run_appends: st.runAppends ?? null,
        }) + "\n",
      );
    }
  }
  process.exit(0);
}

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
