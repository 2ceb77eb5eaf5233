/**
 * Every loading failure is a DeltatokError with the right code and the offending file in its
 * message: unreadable or invalid JSON (with line and column), a tokenizer.json without model or
 * added_tokens or that @huggingface/tokenizers rejects, malformed config templates, bad options.
 */

import assert from "node:assert/strict";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { loadTokenizer } from "../src/load/index.js";
import { repoPath } from "./helpers/paths.js";
import { rejectsWith } from "./helpers/errors.js";

const fx = (name: string): string => repoPath("test", "fixtures", "load", name);

let tmp: string;
let tokText: string;
let n = 0;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "deltatok-load-errors-"));
  tokText = await readFile(join(fx("no-config"), "tokenizer.json"), "utf8");
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A fresh directory with the given files (tokenizer.json defaults to the tiny fixture's). */
async function dirWith(files: Record<string, string | Buffer>): Promise<string> {
  const dir = join(tmp, `case-${n++}`);
  await mkdir(dir, { recursive: true });
  const all: Record<string, string | Buffer> = { "tokenizer.json": tokText, ...files };
  for (const [name, body] of Object.entries(all)) await writeFile(join(dir, name), body);
  return dir;
}

function tokenizerWith(edit: (j: Record<string, unknown>) => void): string {
  const j = JSON.parse(tokText) as Record<string, unknown>;
  edit(j);
  return JSON.stringify(j);
}

describe("DT_TOKENIZER_INVALID: tokenizer.json", () => {
  test("invalid JSON names the file, line and column", async () => {
    const dir = await dirWith({ "tokenizer.json": '{\n  "model": {\n    "type": "BPE",\n  }\n}' });
    const file = join(dir, "tokenizer.json");
    await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", file, "line 4, column 3", "offset 36");
  });

  test("truncated JSON names the end of input", async () => {
    const dir = await dirWith({ "tokenizer.json": tokText.slice(0, 200) });
    await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", join(dir, "tokenizer.json"), "line ");
  });

  test("not UTF-8, or with a byte order mark", async () => {
    const bad = await dirWith({ "tokenizer.json": Buffer.from([0x7b, 0xff, 0x7d]) });
    await rejectsWith(loadTokenizer(bad), "DT_TOKENIZER_INVALID", join(bad, "tokenizer.json"), "UTF-8");
    const bom = await dirWith({ "tokenizer.json": `\uFEFF${tokText}` });
    await rejectsWith(loadTokenizer(bom), "DT_TOKENIZER_INVALID", join(bom, "tokenizer.json"), "byte order mark");
  });

  test("not an object, no model, or no added_tokens", async () => {
    const arr = await dirWith({ "tokenizer.json": "[]" });
    await rejectsWith(loadTokenizer(arr), "DT_TOKENIZER_INVALID", join(arr, "tokenizer.json"));
    const noModel = await dirWith({ "tokenizer.json": tokenizerWith((j) => delete j["model"]) });
    const e1 = await rejectsWith(loadTokenizer(noModel), "DT_TOKENIZER_INVALID", join(noModel, "tokenizer.json"), '"model"');
    assert.equal(e1.path, "model");
    const noAdded = await dirWith({ "tokenizer.json": tokenizerWith((j) => delete j["added_tokens"]) });
    const e2 = await rejectsWith(loadTokenizer(noAdded), "DT_TOKENIZER_INVALID", join(noAdded, "tokenizer.json"), '"added_tokens"');
    assert.equal(e2.path, "added_tokens");
  });

  test("a malformed added token names its index", async () => {
    const dir = await dirWith({
      "tokenizer.json": tokenizerWith((j) => {
        (j["added_tokens"] as Record<string, unknown>[])[2] = { id: "two", content: "<x>" };
      }),
    });
    const e = await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", join(dir, "tokenizer.json"), "added_tokens[2].id");
    assert.equal(e.path, "added_tokens[2].id");
  });

  test("an unsupported model type", async () => {
    const dir = await dirWith({
      "tokenizer.json": tokenizerWith((j) => {
        (j["model"] as Record<string, unknown>)["type"] = "Mystery";
      }),
    });
    await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", join(dir, "tokenizer.json"), "Mystery");
  });

  test("a tokenizer.json that @huggingface/tokenizers rejects", async () => {
    const dir = await dirWith({ "tokenizer.json": tokenizerWith((j) => (j["normalizer"] = { type: "NoSuchNormalizer" })) });
    await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", join(dir, "tokenizer.json"), "NoSuchNormalizer");
  });

  test("a model without type is inferred like the Rust crate does (merges → BPE)", async () => {
    const dir = await dirWith({
      "tokenizer.json": tokenizerWith((j) => delete (j["model"] as Record<string, unknown>)["type"]),
    });
    const t = await loadTokenizer(dir);
    assert.equal(t.tokenizerJson.model.type, "BPE");
    assert.deepEqual(t.tokenizer.encode("hello"), [17]);
  });

  test("tokenizer.json that is a directory is unreadable", async () => {
    const dir = join(tmp, `case-${n++}`);
    await mkdir(join(dir, "tokenizer.json"), { recursive: true });
    await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", join(dir, "tokenizer.json"), "directory");
  });
});

describe("DT_TOKENIZER_INVALID: tokenizer_config.json and special_tokens_map.json", () => {
  test("invalid JSON names the file and position", async () => {
    const dir = await dirWith({ "tokenizer_config.json": '{"eos_token": "</s>" "bos_token": "<s>"}' });
    await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", join(dir, "tokenizer_config.json"), "line 1, column 22");
  });

  test("a config that is not an object", async () => {
    const dir = await dirWith({ "tokenizer_config.json": '"hello"' });
    await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", join(dir, "tokenizer_config.json"));
  });

  test("a malformed chat_template in the config names the entry", async () => {
    const dir = await dirWith({ "tokenizer_config.json": JSON.stringify({ chat_template: [{ name: "default", template: 1 }] }) });
    const e = await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", join(dir, "tokenizer_config.json"), "chat_template[0].template");
    assert.equal(e.path, "chat_template[0].template");
    const dir2 = await dirWith({ "tokenizer_config.json": JSON.stringify({ chat_template: 42 }) });
    await rejectsWith(loadTokenizer(dir2), "DT_TOKENIZER_INVALID", join(dir2, "tokenizer_config.json"));
  });

  test("a special token of the wrong type names the field", async () => {
    const dir = await dirWith({ "tokenizer_config.json": JSON.stringify({ bos_token: 1 }) });
    const e = await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", join(dir, "tokenizer_config.json"), "bos_token");
    assert.equal(e.path, "bos_token");
  });

  test("an invalid special_tokens_map.json names it", async () => {
    const dir = await dirWith({ "tokenizer_config.json": "{}", "special_tokens_map.json": "{oops}" });
    await rejectsWith(loadTokenizer(dir), "DT_TOKENIZER_INVALID", join(dir, "special_tokens_map.json"));
  });
});

describe("DT_INVALID_OPTION", () => {
  test("a non-string spec or malformed options", async () => {
    await rejectsWith(loadTokenizer(42 as unknown as string), "DT_INVALID_OPTION");
    await rejectsWith(loadTokenizer(fx("tiny"), "x" as never), "DT_INVALID_OPTION");
    await rejectsWith(loadTokenizer(fx("tiny"), { chatTemplateFile: 3 as unknown as string }), "DT_INVALID_OPTION", "chatTemplateFile");
    await rejectsWith(loadTokenizer(fx("tiny"), { env: "HF" as never }), "DT_INVALID_OPTION", "env");
  });
});

describe("nothing escapes uncoded", () => {
  test("a bad file inside additional_chat_templates/ is DT_TEMPLATE_FILE_INVALID naming it", async () => {
    const dir = join(tmp, `case-${n++}`);
    await cp(fx("no-config"), dir, { recursive: true });
    await mkdir(join(dir, "additional_chat_templates"), { recursive: true });
    await writeFile(join(dir, "additional_chat_templates", "x.jinja"), Buffer.from([0xc3, 0x28]));
    await rejectsWith(loadTokenizer(dir), "DT_TEMPLATE_FILE_INVALID", join(dir, "additional_chat_templates", "x.jinja"));
  });
});
