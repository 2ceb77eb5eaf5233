/**
 * selectTemplate follows transformers' get_chat_template: an explicit name or source wins; with
 * several named templates "tool_use" when tools are given (and exists), else "default"; a single
 * template is used as is; nothing to choose → DT_TEMPLATE_NOT_FOUND naming what exists.
 */

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";

import { DeltatokError } from "../src/errors.js";
import { loadTokenizer, selectTemplate } from "../src/load/index.js";
import { repoPath } from "./helpers/paths.js";

const fx = (name: string): string => repoPath("test", "fixtures", "load", name);

function throwsWith(fn: () => unknown, code: string, ...inMessage: string[]): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof DeltatokError, `expected a DeltatokError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    for (const s of inMessage) assert.ok(e.message.includes(s), `"${e.message}" should mention ${s}`);
    return true;
  });
}

describe("several named templates", () => {
  test("tools given and tool_use exists → tool_use; otherwise default", async () => {
    const t = await loadTokenizer(fx("named-list"));
    assert.equal(selectTemplate(t, { hasTools: true }), "TOOL_USE {{ tools | length }}");
    assert.equal(selectTemplate(t, { hasTools: false }), "DEFAULT {{ messages | length }}");
  });

  test("tools given but no tool_use → default", async () => {
    const dir = await mkdtemp(join(tmpdir(), "deltatok-select-"));
    try {
      const file = join(dir, "named.json");
      await writeFile(file, JSON.stringify({ chat_template: [{ name: "default", template: "D" }, { name: "rag", template: "R" }] }));
      const t = await loadTokenizer(fx("tiny"), { chatTemplateFile: file });
      assert.equal(selectTemplate(t, { hasTools: true }), "D");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("an explicit name selects that template, even against the tools rule", async () => {
    const t = await loadTokenizer(fx("named-list"));
    assert.equal(selectTemplate(t, { chatTemplate: "rag", hasTools: true }), "RAG {{ documents | length }}");
    assert.equal(selectTemplate(t, { chatTemplate: "default", hasTools: true }), "DEFAULT {{ messages | length }}");
  });

  test("no default and no tools → DT_TEMPLATE_NOT_FOUND listing the names", async () => {
    const t = await loadTokenizer(fx("additional-only"));
    throwsWith(() => selectTemplate(t, { hasTools: false }), "DT_TEMPLATE_NOT_FOUND", '"tool_use"', fx("additional-only"));
    assert.equal(selectTemplate(t, { hasTools: true }), "ONLY TOOL_USE\n");
  });
});

describe("single template", () => {
  test("is used with or without tools", async () => {
    const t = await loadTokenizer("qwen3");
    const tpl = t.templates.get("default");
    assert.ok(tpl !== undefined);
    assert.equal(selectTemplate(t, { hasTools: true }), tpl);
    assert.equal(selectTemplate(t, { hasTools: false }), tpl);
  });
});

describe("explicit template source", () => {
  test("source text wins over the tokenizer's templates", async () => {
    const t = await loadTokenizer(fx("named-list"));
    const src = "{% for m in messages %}{{ m.content }}{% endfor %}";
    assert.equal(selectTemplate(t, { chatTemplate: src, hasTools: true }), src);
  });

  test("source text works when the tokenizer has no template", async () => {
    const t = await loadTokenizer(fx("no-config"));
    assert.equal(selectTemplate(t, { chatTemplate: "plain {{ x }}", hasTools: false }), "plain {{ x }}");
  });

  test("a bare word that names no template is DT_TEMPLATE_NOT_FOUND naming what exists", async () => {
    const t = await loadTokenizer(fx("named-list"));
    throwsWith(() => selectTemplate(t, { chatTemplate: "tool-use", hasTools: false }), "DT_TEMPLATE_NOT_FOUND", '"rag"', '"tool_use"');
  });

  test("an empty chat_template is DT_INVALID_OPTION", async () => {
    const t = await loadTokenizer(fx("named-list"));
    throwsWith(() => selectTemplate(t, { chatTemplate: "", hasTools: false }), "DT_INVALID_OPTION");
  });
});

describe("no template", () => {
  test("a tokenizer without templates and no request → DT_TEMPLATE_NOT_FOUND naming the directory", async () => {
    const t = await loadTokenizer(fx("no-config"));
    throwsWith(() => selectTemplate(t, { hasTools: false }), "DT_TEMPLATE_NOT_FOUND", fx("no-config"));
  });
});
