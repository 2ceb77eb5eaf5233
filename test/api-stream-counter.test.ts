/**
 * Streaming counters: the work per append stays bounded as the text grows (characters counted,
 * never timed), the coded errors (bad chunk, after finish, over budget, no cut within
 * maxLookBack, lone surrogates) leave the counter as it was, tokenizers without a proven cut
 * rule count whole and say so, and the normalizers the regex rule accepts are local at its cuts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Deltatok } from "../src/api/deltatok.js";
import { TextStream, streamRuleFor } from "../src/tokenize/stream.js";
import { TokenEncoder } from "../src/tokenize/encoder.js";
import { modelsDir } from "./helpers/tokenizers.js";
import { syntheticTokenizer } from "./helpers/tokenizers.js";
import { repoPath } from "./helpers/paths.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const code = (f: () => unknown): string | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
};

/** The assistant texts of the bundled corpus, joined: ~100k characters of ordinary text. */
function corpusText(): string {
  const out: string[] = [];
  for (const line of readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n")) {
    if (line.trim() === "") continue;
    for (const m of (JSON.parse(line) as { messages: Array<{ role: string; content?: unknown }> }).messages) {
      if (m.role === "assistant" && typeof m.content === "string") out.push(m.content);
    }
  }
  return out.join("\n\n");
}

for (const spec of ["qwen3", "llama2"]) {
  test(`${spec}: characters re-encoded per append stay within chunk + a fixed look-back as the text grows`, async () => {
    const dt = await Deltatok.create({ tokenizer: spec === "qwen3" ? spec : modelsDir("llama2"), renderer: TEST_RENDERER });
    const text = corpusText();
    assert.ok(text.length > 20_000);
    const CHUNK = 64;
    const K = 96;
    const c = dt.textCounter();
    let worst = 0;
    let worstLate = 0;
    for (let i = 0; i < text.length; i += CHUNK) {
      const chunk = text.slice(i, i + CHUNK);
      c.append(chunk);
      const s = c.stats();
      worst = Math.max(worst, s.lastCharsEncoded - chunk.length);
      if (i > text.length / 2) worstLate = Math.max(worstLate, s.lastCharsEncoded - chunk.length);
      assert.ok(s.tailChars <= K, `uncut tail ${s.tailChars} at ${i}`);
    }
    const s = c.stats();
    assert.ok(worst <= K, `look-back ${worst} > ${K}`);
    assert.ok(s.maxLookBack <= K && s.maxLookBack >= worst - 1);
    assert.ok(worstLate <= K);
    // in total: the text once plus the look-backs, far from the O(n²) of re-encoding the prefix
    assert.ok(s.charsEncoded <= text.length * 1.5, `${s.charsEncoded} chars encoded for ${text.length}`);
    assert.equal(c.finish(), dt.countText(text));
  });
}

test("bad chunks, finish and budgets fail with their codes and leave the counter unchanged", async () => {
  const dt = await Deltatok.create({ tokenizer: "qwen3", renderer: TEST_RENDERER, maxPromptChars: 1000 });
  const c = dt.textCounter();
  c.append("Hello world");
  const before = c.count;
  assert.equal(code(() => c.append(42)), "DT_INVALID_REQUEST");
  assert.equal(code(() => c.append(null)), "DT_INVALID_REQUEST");
  assert.equal(code(() => c.append("a\udc00b")), "DT_LONE_SURROGATE");
  assert.equal(code(() => c.append("x".repeat(1000))), "DT_INPUT_TOO_LARGE");
  assert.equal(c.count, before);
  assert.equal(c.text, "Hello world");
  // a pair split across chunks is counted once whole; the half is held back meanwhile
  assert.equal(c.append(" \ud83d"), dt.countText("Hello world "));
  assert.equal(c.length, "Hello world ".length);
  assert.equal(c.append("\ude00!"), dt.countText("Hello world 😀!"));
  c.append(" \ud83d");
  assert.equal(code(() => c.finish()), "DT_LONE_SURROGATE");
  assert.equal(code(() => c.append("x")), "DT_LONE_SURROGATE"); // a high surrogate then a non-low unit
  c.append("\ude00");
  assert.equal(c.finish(), dt.countText("Hello world 😀! 😀"));
  assert.equal(code(() => c.append("more")), "DT_STREAM_FINISHED");
  c.reset();
  assert.equal(c.append("again"), dt.countText("again"));
  assert.equal(code(() => dt.textCounter({ maxLookBack: 0 })), "DT_INVALID_OPTION");
  assert.equal(code(() => dt.textCounter({ maxLookBack: 1001 })), "DT_INVALID_OPTION");
  assert.equal(code(() => dt.textCounter({ nope: true } as never)), "DT_INVALID_OPTION");
  assert.equal(code(() => dt.textCounter({ ids: 1 } as never)), "DT_INVALID_OPTION");
  assert.equal(code(() => dt.textCounter().ids()), "DT_INVALID_OPTION");
});

test("an uncut tail longer than maxLookBack fails DT_STREAM_LOOKBACK; the counter keeps its last answer", async () => {
  const dt = await Deltatok.create({ tokenizer: "qwen3", renderer: TEST_RENDERER });
  const c = dt.textCounter({ maxLookBack: 200 });
  c.append("A short sentence, then one long word: ");
  const word = "abc".repeat(40);
  c.append(word); // 120 letters: within the look-back
  const before = c.count;
  assert.equal(code(() => c.append(word)), "DT_STREAM_LOOKBACK");
  assert.equal(c.count, before);
  assert.equal(c.count, dt.countText(c.text));
  // text that brings a cut answers again
  assert.equal(c.append("."), dt.countText(c.text));
});

test("a tokenizer without a proven cut rule counts whole, exactly, and reports it; Metaspace without split has the SentencePiece rule", async () => {
  for (const [name, mode] of [["metaspace-first", "sentencepiece"], ["stripping-added", "whole"]] as const) {
    const raw = syntheticTokenizer(name);
    const rule = streamRuleFor(raw);
    assert.equal(rule.mode, mode, name);
    if (mode === "whole") assert.notEqual(rule.reason, "");
    const enc = new TokenEncoder(raw);
    const s = new TextStream(enc, rule, { maxChars: 10_000, maxLookBack: 10_000, ids: false });
    let text = "";
    for (const chunk of ["Hello", " wor", "ld  ", "again\n", "x", " <s> he", "llo [INST] x", " world"]) {
      text += chunk;
      assert.equal(s.append(chunk), enc.encodeWhole(text).length, `${name} at ${JSON.stringify(text)}`);
      if (mode === "whole") assert.equal(s.stats().lastCharsEncoded, text.length);
    }
    assert.equal(s.stats().mode, mode);
  }
});

test("NFC and NFKC never join a cut's characters with what precedes them", () => {
  // the regex rule's cut characters: ASCII (the unit after a letter) and, after a newline, a letter or ideograph
  const after = ["a", "Z", " ", "\n", ".", "0", "-", "\t", "一", "龥", "、", "。", "〃", "「", "】", "〜", "〟", "！", "，", "／", "：", "＠", "［", "｀", "｛", "､"];
  for (const form of ["NFC", "NFKC"] as const) {
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      const nc = c.normalize(form);
      for (const y of after) {
        if ((c + y).normalize(form) !== nc + y.normalize(form)) assert.fail(`${form}: U+${cp.toString(16)} joins ${JSON.stringify(y)}`);
      }
    }
  }
});

test("under NFC (qwen3) and NFKC (claude) non-ASCII text before a cut takes one encode when the form leaves it unchanged, and stays exact when it does not", async () => {
  // stable under both forms: precomposed letters, dashes, quotes, ideographs, emoji; changed by
  // NFC: decomposed é / Å and conjoining Hangul jamo; changed by NFKC only: …, ﬁ, ①, full-width Ａ
  const stable = "Café — naïve “quotes” 東京 👍🏽, Größe: ÆØÅ. ";
  const changing = "cafe\u0301, A\u030a; \u1100\u1161\u11a8 x… ﬁne ① Ａb, done.\n";
  for (const spec of ["qwen3", "claude"]) {
    const dt = await Deltatok.create({ tokenizer: spec === "qwen3" ? spec : modelsDir("claude"), renderer: TEST_RENDERER });
    for (const [text, fast] of [
      [stable.repeat(6), true],
      [(stable + changing).repeat(4), false],
    ] as const) {
      for (let chunk = 1; chunk <= 9; chunk += 2) {
        const c = dt.textCounter();
        for (let i = 0; i < text.length; i += chunk) {
          assert.equal(c.append(text.slice(i, i + chunk)), dt.countText(text.slice(0, Math.min(text.length, i + chunk)).replace(/[\ud800-\udbff]$/, "")), `${spec} chunk ${chunk} at ${i}`);
        }
        const st = c.stats();
        // every append that finds a cut in stable text takes the single encode
        if (fast) assert.equal(st.pieceEncodes, 0, `${spec} chunk ${chunk}: ${st.pieceEncodes} appends encoded in two pieces`);
      }
    }
    // unseen pieces in one chunk: one encode split at every cut in it (the memo knows none of them)
    const fresh = `Zörq${spec}ä, wüxy${spec}, qüzz ${spec}vö. `;
    const c = dt.textCounter({ ids: true });
    c.append("Start: ");
    const before = c.stats();
    assert.equal(c.append(fresh), dt.countText("Start: " + fresh));
    assert.equal(c.stats().splitEncodes - before.splitEncodes, 1);
    assert.equal(c.stats().pieceEncodes, 0);
    assert.deepEqual(Array.from(c.ids()), Array.from(dt.encodeText("Start: " + fresh)));
    // unseen pieces the form changes (decomposed é, a ligature under NFKC): the committed span and the tail apart
    const changed = `Zo\u0308rq${spec}e\u0301, \ufb01wu\u0308xy${spec}, qu\u0308zz ${spec}vo\u0308. `;
    const d = dt.textCounter({ ids: true });
    d.append("Start: ");
    assert.equal(d.append(changed), dt.countText("Start: " + changed));
    assert.equal(d.stats().pieceEncodes, 1);
    assert.deepEqual(Array.from(d.ids()), Array.from(dt.encodeText("Start: " + changed)));
  }
});

test("the piece memo answers pieces seen before, exactly; counts and ids are held apart", async () => {
  for (const spec of ["qwen3", "llama2"] as const) {
    const dt = await Deltatok.create({ tokenizer: spec === "qwen3" ? spec : modelsDir(spec), renderer: TEST_RENDERER });
    // corpus text under ROT13: ordinary word shapes no other test of this process streams
    const rot13 = corpusText().slice(0, 3000).replace(/[a-z]/gi, (ch) => String.fromCharCode(((ch.charCodeAt(0) & 31) + 12) % 26 + (ch.charCodeAt(0) & 96) + 1));
    const text = `${rot13} memo-${spec}-ending`;
    const stream = (ids: boolean) => {
      const c = dt.textCounter({ ids });
      for (let i = 0; i < text.length; i += 37) assert.equal(c.append(text.slice(i, i + 37)), dt.countText(text.slice(0, i + 37)), `${spec} at ${i}`);
      if (ids) assert.deepEqual(Array.from(c.ids()), Array.from(dt.encodeText(text)));
      return c.stats();
    };
    // byte-level tokenizers learn every piece of a span from its one encode (split at the cuts);
    // SentencePiece ones only the pieces encoded alone (a committed span of several is one encode)
    const k = spec === "qwen3" ? 4 : 1.1;
    const first = stream(false);
    const again = stream(false);
    assert.ok(again.memoPieces > first.memoPieces, `${spec}: ${again.memoPieces} vs ${first.memoPieces} pieces from the memo`);
    assert.ok(again.charsEncoded * k < first.charsEncoded, `${spec}: ${again.charsEncoded} vs ${first.charsEncoded} characters encoded`);
    // a count-only counter stored no ids: an ids counter encodes the pieces again, then knows them
    const withIds = stream(true);
    assert.ok(withIds.charsEncoded > again.charsEncoded * k);
    const idsAgain = stream(true);
    assert.ok(idsAgain.charsEncoded * k < withIds.charsEncoded);
  }
});

test("messageCounter: deltas build the message; a template that rewrites earlier text stays exact", async () => {
  const dt = await Deltatok.create({ tokenizer: "qwen3", renderer: TEST_RENDERER, date: "2026-11-30" });
  const mc = dt.messageCounter();
  const deltas = [
    { role: "assistant", reasoning_content: "Let me look" },
    { reasoning_content: " up the user." },
    { content: "\n\n" }, // Qwen3 strips leading newlines of the content: the render changes earlier text
    { content: "Sure, " },
    { content: "one moment." },
    { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_user", arguments: "" } }] },
    { tool_calls: [{ index: 0, function: { arguments: "{\"user_id\": " } }] },
    { tool_calls: [{ index: 0, function: { arguments: "\"omar\"}" } }] },
  ];
  for (const d of deltas) assert.equal(mc.append(d), dt.countMessage(mc.message()));
  assert.deepEqual(mc.message().tool_calls, [{ id: "call_1", type: "function", function: { name: "get_user", arguments: "{\"user_id\": \"omar\"}" } }]);
  const s = mc.stats();
  assert.ok(s.unchangedChars > 0 && s.renderChars > s.unchangedChars);
  assert.equal(mc.finish(), dt.countMessage(mc.message()));
  assert.equal(code(() => mc.append({ content: "x" })), "DT_STREAM_FINISHED");
  const bad = dt.messageCounter();
  assert.equal(code(() => bad.append("text")), "DT_INVALID_REQUEST");
  assert.equal(code(() => bad.append({ content: 5 })), "DT_INVALID_REQUEST");
  assert.equal(code(() => bad.append({ tool_calls: [{ index: 3 }] })), "DT_INVALID_TOOL_CALLS");
  assert.equal(code(() => bad.append({ surprise: "x" })), "DT_INVALID_REQUEST");
  assert.equal(code(() => dt.messageCounter({ tools: [] } as never)), "DT_INVALID_OPTION");
  // streamed arguments are incomplete JSON until the call ends: refused when the counter opens
  // (before, each argument delta was refused and finish() counted the message without the call)
  assert.equal(code(() => dt.messageCounter({ parse_tool_arguments: true })), "DT_INVALID_OPTION");
  assert.equal(dt.messageCounter({ parse_tool_arguments: false }).append({ content: "ok" }), dt.countMessage({ role: "assistant", content: "ok" }));
  assert.equal(bad.append({ content: "ok" }), dt.countMessage({ role: "assistant", content: "ok" }));
});
