/**
 * Which chat templates a tokenizer directory offers, with transformers' precedence:
 * template files (chat_template.jinja, additional_chat_templates/*.jinja) replace
 * tokenizer_config.json's chat_template (string or list of {name, template}); chat_template.json
 * is the last resort; options.chatTemplate / chatTemplateFile override everything.
 */

import assert from "node:assert/strict";
import { cp, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";

import { loadTokenizer } from "../src/load/index.js";
import { ROOT } from "./helpers/paths.js";
import { rejectsWith, useTempDir } from "./helpers/errors.js";

const FIXTURES = join(ROOT, "test", "fixtures", "load");
const fx = (name: string): string => join(FIXTURES, name);

const tempDir = useTempDir("deltatok-load-templates-");

/** A copy of the tiny fixture with extra files written into it. */
async function tinyWith(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(tempDir(), name);
  await cp(fx("no-config"), dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) {
    const path = join(dir, file);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  }
  return dir;
}

describe("tokenizer_config.json chat_template", () => {
  test("a string is the single template 'default'", async () => {
    const t = await loadTokenizer(fx("tiny"));
    assert.deepEqual([...t.templates.keys()], ["default"]);
    assert.equal(t.templates.get("default"), t.config["chat_template"]);
    assert.equal(t.templateSources.get("default"), `${join(fx("tiny"), "tokenizer_config.json")}#chat_template`);
  });

  test("a list of {name, template} gives named templates", async () => {
    const t = await loadTokenizer(fx("named-list"));
    assert.deepEqual([...t.templates.keys()], ["default", "rag", "tool_use"]);
    assert.equal(t.templates.get("tool_use"), "TOOL_USE {{ tools | length }}");
    assert.equal(t.templateSources.get("tool_use"), `${join(fx("named-list"), "tokenizer_config.json")}#chat_template[1]`);
  });

  test("a later duplicate name wins, as in transformers' dict comprehension", async () => {
    const dir = await tinyWith("dup-names", {
      "tokenizer_config.json": JSON.stringify({
        chat_template: [
          { name: "default", template: "FIRST" },
          { name: "default", template: "SECOND" },
        ],
      }),
    });
    const t = await loadTokenizer(dir);
    assert.equal(t.templates.get("default"), "SECOND");
  });

  test("the bundled qwen3 ships one template, deepseek_v3 one, gptoss none", async () => {
    const q = await loadTokenizer("qwen3");
    assert.deepEqual([...q.templates.keys()], ["default"]);
    assert.ok(q.templates.get("default")?.includes("<|im_start|>"));
    const d = await loadTokenizer("deepseek_v3");
    assert.deepEqual([...d.templates.keys()], ["default"]);
  });
});

describe("template files", () => {
  test("chat_template.jinja and additional_chat_templates/*.jinja replace the config's template", async () => {
    const dir = fx("jinja-files");
    const t = await loadTokenizer(dir);
    assert.deepEqual([...t.templates.keys()], ["default", "rag", "tool_use"]);
    assert.equal(t.templates.get("default"), "JINJA DEFAULT\n{{ messages | length }}\n");
    assert.equal(t.templates.get("tool_use"), "JINJA TOOL_USE\n");
    assert.equal(t.templateSources.get("default"), join(dir, "chat_template.jinja"));
    assert.equal(t.templateSources.get("rag"), join(dir, "additional_chat_templates", "rag.jinja"));
    assert.ok(![...t.templates.values()].some((v) => v.includes("CONFIG")));
  });

  test("additional_chat_templates/ alone replaces every config template (no 'default' left)", async () => {
    const t = await loadTokenizer(fx("additional-only"));
    assert.deepEqual([...t.templates.keys()], ["tool_use"]);
    assert.equal(t.templates.get("tool_use"), "ONLY TOOL_USE\n");
  });

  test("template files are read with universal newlines (CRLF and CR become LF), a BOM is kept", async () => {
    const dir = await tinyWith("crlf", {
      "chat_template.jinja": "\uFEFFline1\r\nline2\rline3\n",
      "additional_chat_templates/tool_use.jinja": "a\r\nb",
    });
    const t = await loadTokenizer(dir);
    assert.equal(t.templates.get("default"), "\uFEFFline1\nline2\nline3\n");
    assert.equal(t.templates.get("tool_use"), "a\nb");
  });

  test("a template file that is not UTF-8 is DT_TEMPLATE_FILE_INVALID naming it", async () => {
    const dir = await tinyWith("latin1", {});
    await writeFile(join(dir, "chat_template.jinja"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    await rejectsWith(loadTokenizer(dir), "DT_TEMPLATE_FILE_INVALID", join(dir, "chat_template.jinja"));
  });
});

describe("chat_template.json (processor legacy file)", () => {
  test("a string is used when the tokenizer has no other template; JSON strings are verbatim", async () => {
    const dir = fx("chat-template-json");
    const t = await loadTokenizer(dir);
    assert.deepEqual([...t.templates.keys()], ["default"]);
    assert.equal(t.templates.get("default"), "FROM CHAT_TEMPLATE_JSON\r\n{{ messages | length }}");
    assert.equal(t.templateSources.get("default"), `${join(dir, "chat_template.json")}#chat_template`);
  });

  test("a list of {name, template} gives named templates", async () => {
    const t = await loadTokenizer(fx("chat-template-json-list"));
    assert.deepEqual([...t.templates.keys()], ["default", "tool_use"]);
    assert.equal(t.templates.get("tool_use"), "JSON TOOL_USE");
  });

  test("tokenizer_config.json's template wins over chat_template.json", async () => {
    const dir = await tinyWith("config-beats-json", {
      "tokenizer_config.json": JSON.stringify({ chat_template: "FROM CONFIG" }),
      "chat_template.json": JSON.stringify({ chat_template: "FROM JSON" }),
    });
    const t = await loadTokenizer(dir);
    assert.equal(t.templates.get("default"), "FROM CONFIG");
  });

  test("chat_template.json without a string or list is DT_TEMPLATE_FILE_INVALID naming it", async () => {
    for (const [name, body] of [
      ["ctj-no-key", JSON.stringify({ template: "x" })],
      ["ctj-number", JSON.stringify({ chat_template: 3 })],
      ["ctj-bad-entry", JSON.stringify({ chat_template: [{ name: "default" }] })],
      ["ctj-not-object", JSON.stringify(["x"])],
      ["ctj-bad-json", '{"chat_template": "x",}'],
    ] as const) {
      const dir = await tinyWith(name, { "chat_template.json": body });
      await rejectsWith(loadTokenizer(dir), "DT_TEMPLATE_FILE_INVALID", join(dir, "chat_template.json"));
    }
  });

  test("a directory with no template at all gives an empty map", async () => {
    const t = await loadTokenizer(fx("no-config"));
    assert.equal(t.templates.size, 0);
    assert.equal(t.templateSources.size, 0);
  });
});

describe("overrides (options.chatTemplate, options.chatTemplateFile)", () => {
  test("chatTemplate text replaces the tokenizer's templates", async () => {
    const t = await loadTokenizer(fx("named-list"), { chatTemplate: "MY {{ messages }}" });
    assert.deepEqual([...t.templates.entries()], [["default", "MY {{ messages }}"]]);
    assert.equal(t.templateSources.get("default"), "options.chatTemplate");
  });

  test("a .jinja chatTemplateFile is template text (universal newlines)", async () => {
    const file = join(fx("overrides"), "override.jinja");
    const t = await loadTokenizer(fx("tiny"), { chatTemplateFile: file });
    assert.deepEqual([...t.templates.keys()], ["default"]);
    assert.equal(t.templates.get("default"), "OVERRIDE FROM FILE\n{{ messages | length }}\n");
    assert.equal(t.templateSources.get("default"), file);
  });

  test("a .json chatTemplateFile holds {chat_template: list} like chat_template.json", async () => {
    const file = join(fx("overrides"), "override.json");
    const t = await loadTokenizer(fx("tiny"), { chatTemplateFile: file });
    assert.deepEqual([...t.templates.keys()], ["default", "tool_use"]);
    assert.equal(t.templates.get("tool_use"), "OVERRIDE JSON TOOL_USE");
    assert.equal(t.templateSources.get("tool_use"), `${file}#chat_template[1]`);
  });

  test("a chatTemplateFile that does not exist is DT_TEMPLATE_NOT_FOUND naming it", async () => {
    const file = join(tempDir(), "nope.jinja");
    await rejectsWith(loadTokenizer(fx("tiny"), { chatTemplateFile: file }), "DT_TEMPLATE_NOT_FOUND", file);
  });

  test("a malformed .json chatTemplateFile is DT_TEMPLATE_FILE_INVALID naming it", async () => {
    for (const name of ["no-key.json", "bad-entry.json"]) {
      const file = join(fx("overrides"), name);
      await rejectsWith(loadTokenizer(fx("tiny"), { chatTemplateFile: file }), "DT_TEMPLATE_FILE_INVALID", file);
    }
  });

  test("a directory given as chatTemplateFile is DT_TEMPLATE_FILE_INVALID", async () => {
    await rejectsWith(loadTokenizer(fx("tiny"), { chatTemplateFile: fx("overrides") }), "DT_TEMPLATE_FILE_INVALID", fx("overrides"));
  });

  test("both overrides at once, or an empty one, is DT_INVALID_OPTION", async () => {
    await rejectsWith(
      loadTokenizer(fx("tiny"), { chatTemplate: "x", chatTemplateFile: join(fx("overrides"), "override.jinja") }),
      "DT_INVALID_OPTION",
    );
    await rejectsWith(loadTokenizer(fx("tiny"), { chatTemplate: "" }), "DT_INVALID_OPTION");
  });
});
