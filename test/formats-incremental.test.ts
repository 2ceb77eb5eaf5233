/**
 * The incremental paths over tokenizers that ship no tokenizer.json: incremental == full
 * (`verifyCorpus`) on every format's fixture directory, the worker tables (SharedTokenizer)
 * rebuilding the same encoder, the streaming counter (its cut rule per format, or whole mode,
 * named) and rollouts on one tiktoken and one SentencePiece model, and Kimi's chats through the
 * Deltatok equal transformers' apply_chat_template(tokenize=True) ids.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions } from "../src/api/options.js";
import { verifyCorpus, type VerifyOptions } from "../src/cli/verify.js";
import { compareCodePoints, isPlainObject, keysOf, parseJson, setKeyOrder } from "../src/json/index.js";
import { shareTokenizer } from "../src/load/index.js";
import { coreFromShared } from "../src/load/shared-core.js";
import { formatFixturePath, formatTexts, readFormatJson, shortIdsHash } from "./helpers/format-fixtures.js";
import { CORPUS_FILES } from "./helpers/format-texts.js";
import { repoPath } from "./helpers/paths.js";

const CORPUS = repoPath("data", "tau-bench-airline-20.jsonl");
const DATE = "2026-11-30";

const tekkenDir = mkdtempSync(join(tmpdir(), "deltatok-tekken-inc-"));
copyFileSync(formatFixturePath("tekken", "tekken.json"), join(tekkenDir, "tekken.json"));

const unigramDir = mkdtempSync(join(tmpdir(), "deltatok-unigram-inc-"));
copyFileSync(formatFixturePath("sentencepiece", "unigram-nfkc-bf.model"), join(unigramDir, "tokenizer.model"));

const GLM_TEMPLATE =
  "[gMASK]<sop>{% for m in messages %}<|{{ m.role }}|>\n{{ m.content or '' }}{% if m.tool_calls %}{{ m.tool_calls | tojson }}{% endif %}{% endfor %}" +
  "{% if add_generation_prompt %}<|assistant|>{% endif %}";
const PLAIN_TEMPLATE = "{% for m in messages %}[{{ m.role }}] {{ m.content or '' }}{% if m.tool_calls %}{{ m.tool_calls | tojson }}{% endif %}<|endoftext|>{% endfor %}";
const CHATML_TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content or '' }}{% if m.tool_calls %}<tool_call>{{ m.tool_calls | tojson }}</tool_call>{% endif %}</s>\n{% endfor %}";
const TEKKEN_TEMPLATE = "<s>{% for m in messages %}{% if m.role == 'user' %}[INST]{{ m.content }}[/INST]{% else %}{{ m.content or '' }}{% endif %}{% endfor %}";

/** Each format's fixture with a chat template: [name, Deltatok options, boundary tokens expected]. */
const FORMATS: Array<[string, DeltatokOptions, boolean]> = [
  ["tiktoken, Kimi family", { tokenizer: formatFixturePath("kimi") }, true],
  ["tiktoken, GLM-4 family", { tokenizer: formatFixturePath("glm4"), chatTemplate: GLM_TEMPLATE }, true],
  ["tiktoken, OpenAI o200k_base by name", { tokenizer: "o200k_base", chatTemplate: PLAIN_TEMPLATE }, true],
  ["tekken.json", { tokenizer: tekkenDir, chatTemplate: TEKKEN_TEMPLATE }, false],
  ["SentencePiece (mistral-v3, LlamaTokenizer)", { tokenizer: formatFixturePath("mistral-v3-chat") }, true],
  ["SentencePiece Unigram (unigram-nfkc-bf, TokenizersBackend)", { tokenizer: unigramDir, chatTemplate: CHATML_TEMPLATE }, true],
];

const VERIFY: VerifyOptions = { chatTemplateKwargs: null, parseToolArguments: false, final: false, maxReported: 10, progress: false };

for (const [name, options, boundaries] of FORMATS) {
  test(`${name}: incremental == full on every request of the tau-bench sample (verify)`, async () => {
    const [inc, full] = await Promise.all([Deltatok.create({ ...options, date: DATE }), Deltatok.create({ ...options, date: DATE, mode: "full" })]);
    const s = await verifyCorpus(inc, full, CORPUS, VERIFY, (ids) => inc.tokenizer.tokenizer.decode(Array.from(ids)));
    assert.equal(s.differ, 0, JSON.stringify(s.differences.slice(0, 2)));
    assert.ok(s.requests > 100);
    assert.equal(s.identical + s.same_errors, s.requests);
    assert.equal(s.identical, s.requests, "the sample renders with every fixture template");
    // reuse needs boundary tokens; tekken's specials are never matched in text, so it has none
    if (boundaries) assert.ok(s.reuse_ratio > 0.5, `reuse ${s.reuse_ratio}`);
    else assert.ok(s.reuse_ratio < 0.1, `reuse ${s.reuse_ratio}: only renders identical to a cached one`);
  });

  test(`${name}: the worker tables (SharedTokenizer) rebuild an encoder with the same ids`, async () => {
    const dt = await Deltatok.create({ ...options, date: DATE });
    const core = coreFromShared(await shareTokenizer(options.tokenizer as string));
    const texts = formatTexts();
    for (const text of [...texts.corpus.slice(0, 200), ...texts.hostile]) {
      assert.deepEqual(core.tokenizer.encode(text), dt.tokenizer.tokenizer.encode(text));
    }
    assert.deepEqual(core.tokenizerJson.added_tokens, dt.tokenizer.tokenizerJson.added_tokens);
  });
}

function corpusText(): string {
  const parts: string[] = [];
  for (const line of readFileSync(CORPUS, "utf8").split("\n").slice(0, 3)) {
    if (line.trim() === "") continue;
    for (const m of (JSON.parse(line) as { messages: Array<{ content?: unknown }> }).messages) if (typeof m.content === "string") parts.push(m.content);
  }
  return parts.join("\n\n");
}

for (const [name, options, mode] of [
  ["tiktoken (GLM-4)", { tokenizer: formatFixturePath("glm4") }, "regex"],
  ["SentencePiece (mistral-v3)", { tokenizer: formatFixturePath("mistral-v3-chat") }, "sentencepiece"],
  ["tiktoken (Kimi: cuts by run length, no cut rule)", { tokenizer: formatFixturePath("kimi") }, "whole"],
  ["SentencePiece Unigram (best path over the whole section, no cut rule)", { tokenizer: unigramDir, chatTemplate: CHATML_TEMPLATE }, "whole"],
] as const) {
  test(`${name}: the streaming text counter equals countText after every append (mode ${mode})`, async () => {
    const dt = await Deltatok.create({ ...options, date: DATE });
    const text = corpusText().slice(0, mode === "whole" ? 6_000 : 40_000);
    const c = dt.textCounter();
    const step = 97;
    for (let i = 0; i < text.length; i += step) {
      c.append(text.slice(i, i + step));
      if ((i / step) % 20 === 0) assert.equal(c.count, dt.countText(text.slice(0, i + step)), `at ${i}`);
    }
    assert.equal(c.stats().mode, mode);
    assert.equal(c.finish(), dt.countText(text));
  });
}

for (const [name, options] of [
  ["tiktoken (GLM-4)", { tokenizer: formatFixturePath("glm4"), chatTemplate: GLM_TEMPLATE }],
  ["SentencePiece (mistral-v3)", { tokenizer: formatFixturePath("mistral-v3-chat") }],
] as const) {
  test(`${name}: rollouts of the tau-bench sample equal the full mode's, and each prompt's ids its ISL ids`, async () => {
    const [inc, full] = await Promise.all([Deltatok.create({ ...options, date: DATE }), Deltatok.create({ ...options, date: DATE, mode: "full" })]);
    let turns = 0;
    for (const line of readFileSync(CORPUS, "utf8").split("\n").slice(0, 6)) {
      if (line.trim() === "") continue;
      const record = JSON.parse(line) as { messages: Array<{ role: string }>; tools?: unknown[] };
      const opts = record.tools === undefined ? {} : { tools: record.tools };
      const a = inc.tokenizeRollout(record.messages, opts);
      const b = full.tokenizeRollout(record.messages, opts);
      assert.deepEqual(a, b);
      for (const seq of a.sequences) {
        for (const t of seq.turns) {
          const prompt = record.messages.slice(0, t.index);
          assert.equal(t.promptTokens, inc.countPrompt(prompt, { ...opts, add_generation_prompt: true }));
          turns++;
        }
      }
    }
    assert.ok(turns > 20);
  });
}

/** Kimi's deep_sort_dict: every dict rebuilt with its keys in code point order, recursively. */
function deepSort(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepSort);
  if (isPlainObject(value)) {
    const keys = [...keysOf(value as Record<string, unknown>)].sort(compareCodePoints);
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = deepSort((value as Record<string, unknown>)[k]);
    setKeyOrder(out, keys);
    return out;
  }
  return value;
}

test("Kimi chats through the Deltatok (add_generation_prompt, tools deep-sorted by the caller as Kimi's apply_chat_template sorts them) equal transformers' ids", async () => {
  const dt = await Deltatok.create({ tokenizer: formatFixturePath("kimi"), date: DATE });
  const expect = readFormatJson<{ chat: Array<{ count: number; ids: string }> }>("kimi", "expect.json");
  let k = 0;
  for (const file of CORPUS_FILES) {
    for (const line of readFileSync(repoPath(file), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const record = parseJson(line) as { messages: unknown[]; tools?: unknown[] };
      const want = expect.chat[k++];
      const ids = dt.encodePrompt(record.messages, { tools: deepSort(record.tools ?? null) as unknown[] | undefined, add_generation_prompt: true });
      assert.equal(ids.length, want?.count, `chat ${k}`);
      assert.equal(shortIdsHash(ids), want?.ids, `chat ${k}`);
    }
  }
  assert.equal(k, expect.chat.length);
});

test("SentencePiece streaming cut rule under transformers' Metaspace (legacy true: dummy prefix at every section; false: at the start only): the count after every append equals countText, hostile texts included", async () => {
  const { writeFileSync } = await import("node:fs");
  for (const legacy of [false, true]) {
    const dir = mkdtempSync(join(tmpdir(), "deltatok-spm-stream-"));
    copyFileSync(formatFixturePath("sentencepiece", "mistral-v3.model"), join(dir, "tokenizer.model"));
    writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ tokenizer_class: "LlamaTokenizer", legacy }));
    const dt = await Deltatok.create({ tokenizer: dir, date: DATE });
    const texts = formatTexts();
    const sample = [...texts.hostile, ...texts.corpus.slice(0, 40), "a b<s> c [INST] d  e[/INST]f g </s> h", " x  y   z "];
    let cuts = 0;
    for (const text of sample) {
      const c = dt.textCounter();
      let at = 0;
      for (let i = 0; at < text.length; i++) {
        const n = 1 + (i % 5);
        // never end a chunk between the two halves of a surrogate pair
        let end = Math.min(text.length, at + n);
        if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end++;
        c.append(text.slice(at, end));
        at = end;
        assert.equal(c.count, dt.countText(text.slice(0, at)), `legacy ${legacy}, ${JSON.stringify(text.slice(0, 60))} at ${at}`);
      }
      assert.equal(c.stats().mode, "sentencepiece");
      cuts += c.stats().committedChars > 0 ? 1 : 0;
    }
    assert.ok(cuts > 20, `the rule cut ${cuts} texts`);
  }
});

test("replay on the worker pool shares the format's tables (no DELTATOK_TABLES_UNSHARED) and answers as in-process, the pattern option included", async () => {
  const { runCli } = await import("./helpers/cli.js");
  const { writeFileSync } = await import("node:fs");
  const dir = mkdtempSync(join(tmpdir(), "deltatok-formats-pool-"));
  const corpus = join(dir, "c.jsonl");
  writeFileSync(corpus, readFileSync(CORPUS, "utf8").split("\n").slice(0, 3).join("\n") + "\n");
  const runs: Array<[string, string[]]> = [
    ["kimi", ["--tokenizer", formatFixturePath("kimi")]],
    ["glm4 with --pattern", ["--tokenizer", formatFixturePath("glm4"), "--pattern", String.raw`\S+|\s+`, "--template", formatFixturePath("mistral-v3-chat", "chat_template.jinja")]],
  ];
  for (const [what, args] of runs) {
    const base = ["replay", corpus, "--date", DATE, ...args];
    const one = await runCli(base);
    const pooled = await runCli([...base, "--workers", "2"]);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(pooled.code, 0, pooled.stderr);
    assert.equal(pooled.stdout, one.stdout, what);
    assert.doesNotMatch(pooled.stderr, /DELTATOK_TABLES_UNSHARED/, what);
  }
  const plain = await runCli(["replay", corpus, "--date", DATE, "--tokenizer", formatFixturePath("glm4"), "--template", formatFixturePath("mistral-v3-chat", "chat_template.jinja")]);
  assert.notEqual(plain.stdout, (await runCli(["replay", corpus, "--date", DATE, ...(runs[1] as [string, string[]])[1]])).stdout, "the pattern changes the counts");
});
