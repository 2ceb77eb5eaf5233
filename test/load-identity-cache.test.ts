/**
 * Tokenizer identity (xxhash64 of tokenizer.json + tokenizer_config.json bytes) is stable, and the
 * process-wide cache returns the same frozen object for the same arguments, shares the heavy
 * tokenizer between specs of one directory, and reloads when a file changes.
 */

import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { clearTokenizerCache, loadTokenizer, MAX_CACHED_TOKENIZERS } from "../src/load/index.js";
import { tokenizerIdentity } from "../src/load/identity.js";
import { repoPath } from "./helpers/paths.js";

const fx = (name: string): string => repoPath("test", "fixtures", "load", name);

let tmp: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "deltatok-load-identity-"));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("identity", () => {
  test("is 16 hex digits, equal for copies of the same files in other directories", async () => {
    const a = await loadTokenizer(fx("tiny"));
    assert.match(a.id, /^[0-9a-f]{16}$/);
    const copy = join(tmp, "tiny-copy");
    await cp(fx("tiny"), copy, { recursive: true });
    const b = await loadTokenizer(copy);
    assert.equal(b.id, a.id);
    assert.notEqual(b, a);
  });

  test("is the documented hash: tokenizer.json ‖ 0x00 ‖ tokenizer_config.json", async () => {
    const tok = await readFile(join(fx("tiny"), "tokenizer.json"));
    const cfg = await readFile(join(fx("tiny"), "tokenizer_config.json"));
    assert.equal((await loadTokenizer(fx("tiny"))).id, await tokenizerIdentity(tok, cfg));
    assert.equal((await loadTokenizer(fx("no-config"))).id, await tokenizerIdentity(tok, null));
  });

  test("changes with either file; templates do not change it", async () => {
    const base = await loadTokenizer(fx("tiny"));
    const noConfig = await loadTokenizer(fx("no-config")); // same tokenizer.json, no config
    assert.notEqual(noConfig.id, base.id);
    const withOverride = await loadTokenizer(fx("tiny"), { chatTemplate: "other" });
    assert.equal(withOverride.id, base.id);
  });

  test("is stable for a bundled tokenizer across cache clears", async () => {
    const first = await loadTokenizer("deepseek_v3");
    clearTokenizerCache();
    const second = await loadTokenizer("deepseek_v3");
    assert.notEqual(second, first);
    assert.equal(second.id, first.id);
  });
});

describe("cache", () => {
  test("the same arguments give the same frozen object; concurrent loads share one", async () => {
    clearTokenizerCache();
    const [a, b] = await Promise.all([loadTokenizer("qwen3"), loadTokenizer("qwen3")]);
    assert.equal(a, b);
    assert.equal(await loadTokenizer("qwen3"), a);
    assert.ok(Object.isFrozen(a));
  });

  test("another spec of the same directory shares the tokenizer but keeps its own spec", async () => {
    const byName = await loadTokenizer("qwen3");
    const byDir = await loadTokenizer(byName.dir);
    assert.notEqual(byDir, byName);
    assert.equal(byDir.spec, byName.dir);
    assert.equal(byDir.tokenizer, byName.tokenizer);
    assert.equal(byDir.id, byName.id);
  });

  test("an override gives a distinct object with the same tokenizer", async () => {
    const plain = await loadTokenizer(fx("tiny"));
    const over = await loadTokenizer(fx("tiny"), { chatTemplate: "X" });
    assert.notEqual(over, plain);
    assert.equal(over.tokenizer, plain.tokenizer);
    assert.equal(await loadTokenizer(fx("tiny"), { chatTemplate: "X" }), over);
  });

  test("a changed file is reloaded", async () => {
    const dir = join(tmp, "editable");
    await cp(fx("tiny"), dir, { recursive: true });
    const before1 = await loadTokenizer(dir);
    const cfgPath = join(dir, "tokenizer_config.json");
    const cfg = JSON.parse(await readFile(cfgPath, "utf8")) as Record<string, unknown>;
    cfg["eos_token"] = "<|im_end|>";
    cfg["chat_template"] = "EDITED";
    await writeFile(cfgPath, JSON.stringify(cfg, null, 1));
    const after1 = await loadTokenizer(dir);
    assert.notEqual(after1, before1);
    assert.notEqual(after1.id, before1.id);
    assert.equal(after1.specialTokens["eos_token"], "<|im_end|>");
    assert.equal(after1.templates.get("default"), "EDITED");

    await writeFile(join(dir, "chat_template.jinja"), "FROM FILE");
    const after2 = await loadTokenizer(dir);
    assert.equal(after2.templates.get("default"), "FROM FILE");
    assert.equal(after2.tokenizer, after1.tokenizer, "a template change does not rebuild the tokenizer");
  });

  test("the cache is bounded: the least recently used directory is dropped", async () => {
    clearTokenizerCache();
    const dirs: string[] = [];
    for (let i = 0; i <= MAX_CACHED_TOKENIZERS; i++) {
      const d = join(tmp, `bounded-${i}`);
      await cp(fx("tiny"), d, { recursive: true });
      dirs.push(d);
    }
    const first = await loadTokenizer(dirs[0] as string);
    const second = await loadTokenizer(dirs[1] as string);
    for (const d of dirs.slice(2)) await loadTokenizer(d);
    assert.equal(await loadTokenizer(dirs[dirs.length - 1] as string), await loadTokenizer(dirs[dirs.length - 1] as string));
    const firstAgain = await loadTokenizer(dirs[0] as string);
    assert.notEqual(firstAgain, first, "evicted, so loaded anew");
    assert.notEqual(firstAgain.tokenizer, first.tokenizer);
    assert.equal(firstAgain.id, first.id);
    assert.notEqual(await loadTokenizer(dirs[1] as string), second);
  });

  test("a failed load is not cached", async () => {
    const dir = join(tmp, "fixed-later");
    await cp(fx("no-config"), dir, { recursive: true });
    await writeFile(join(dir, "tokenizer_config.json"), "{ broken");
    await assert.rejects(loadTokenizer(dir), { code: "DT_TOKENIZER_INVALID" });
    await writeFile(join(dir, "tokenizer_config.json"), '{"eos_token": "</s>"}');
    const t = await loadTokenizer(dir);
    assert.equal(t.specialTokens["eos_token"], "</s>");
  });
});

describe("immutability", () => {
  test("templates, sources, config and tokenizer.json view cannot be changed", async () => {
    const t = await loadTokenizer(fx("named-list"));
    assert.throws(() => (t.templates as Map<string, string>).set("default", "evil"), TypeError);
    assert.throws(() => (t.templates as Map<string, string>).delete("default"), TypeError);
    assert.throws(() => (t.templateSources as Map<string, string>).clear(), TypeError);
    assert.equal(t.templates.get("default"), "DEFAULT {{ messages | length }}");
    assert.ok(Object.isFrozen(t.config));
    assert.ok(Object.isFrozen(t.config["chat_template"]));
    assert.ok(Object.isFrozen(t.tokenizerJson));
    assert.ok(Object.isFrozen(t.tokenizerJson.added_tokens));
    assert.ok(Object.isFrozen(t.tokenizerJson.added_tokens[0]));
    assert.ok(Object.isFrozen(t.tokenizerJson.model));
    assert.ok(Object.isFrozen(t.tokenizerJson.model["vocab"]));
    assert.throws(() => {
      (t as { spec: string }).spec = "x";
    }, TypeError);
  });

  test("the tokenizer still encodes after its JSON is frozen", async () => {
    const t = await loadTokenizer(fx("tiny"));
    assert.deepEqual(t.tokenizer.encode("<|im_start|>hello world<|im_end|>"), [2, 17, 10, 9, 11, 8, 12, 3]);
    const q = await loadTokenizer("qwen3");
    assert.deepEqual(q.tokenizer.encode("<|im_start|>user\nhi<|im_end|>"), [151644, 872, 198, 6023, 151645]);
  });

  test("added_tokens entries carry every flag", async () => {
    const t = await loadTokenizer("qwen3");
    const think = t.tokenizerJson.added_tokens.find((a) => a.content === "<think>");
    assert.deepEqual(think && { ...think }, {
      id: 151667,
      content: "<think>",
      special: false,
      lstrip: false,
      rstrip: false,
      single_word: false,
      normalized: false,
    });
    assert.equal(t.tokenizerJson.model.type, "BPE");
    assert.equal(t.tokenizerJson.normalizer?.type, "NFC");
  });
});
