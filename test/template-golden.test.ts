/**
 * Golden parity on a vendored slice of the reference corpus (test/fixtures/template/golden,
 * see its README): every template × every vendored conversation × every request of the
 * reference golden files renders byte-identically (sha256 of UTF-8), or fails with the same
 * Python error. scripts/golden-check.ts runs the same check (plus counts and ids) on the whole corpus.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parseJson } from "../src/json/parse.js";
import { compileTemplate, pythonErrorString } from "../src/template/index.js";
import type { CompiledTemplate } from "../src/template/index.js";
import { fixturesDir, goldenRequests, parseToolArguments } from "./fixtures/template/harness.js";

type Msg = Record<string, unknown>;
const dir = join(fixturesDir(), "golden");
const specials = JSON.parse(readFileSync(join(dir, "specials.json"), "utf8")) as Record<string, Record<string, unknown>>;
const conversations = readFileSync(join(dir, "conversations.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => parseJson((JSON.parse(l) as { line: string }).line) as { id: string; messages: Msg[]; tools?: unknown });
const goldenFiles = readFileSync(join(dir, "golden.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.startsWith("{"))
  .map((l) => JSON.parse(l) as { file: string; tokenizer: string; expect: Record<string, string | { error: string }> });
const compiled = new Map<string, CompiledTemplate>();
const now = new Date(Date.UTC(2026, 10, 30));

for (const g of goldenFiles) {
  test(`golden ${g.file}`, () => {
    let base = g.file.slice(0, -".jsonl".length);
    const variant = base.endsWith("+parse-tool-arguments");
    if (variant) base = base.slice(0, -"+parse-tool-arguments".length);
    const tmpl = base.split("__")[0] as string;
    let t: CompiledTemplate | undefined = compiled.get(tmpl);
    if (t === undefined) {
      t = compileTemplate(readFileSync(join(dir, "templates", `${tmpl}.jinja`), "utf8"));
      compiled.set(tmpl, t);
    }
    const tpl: CompiledTemplate = t;
    let checked = 0;
    conversations.forEach((conv, ci) => {
      const msgs = variant ? parseToolArguments(conv.messages) : conv.messages;
      for (const [req, ms, agp] of goldenRequests(msgs)) {
        const expected = g.expect[`${ci}#${req}`];
        if (expected === undefined) continue;
        checked++;
        const vars = { messages: ms, tools: conv.tools ?? null, documents: null, add_generation_prompt: agp, ...specials[g.tokenizer] };
        const where = `${conv.id}#${req}`;
        if (typeof expected === "string") {
          const text: string = tpl.render(vars, { now }).text;
          assert.equal(createHash("sha256").update(text, "utf8").digest("hex"), expected, where);
        } else {
          assert.throws(() => tpl.render(vars, { now }), (e: unknown) => pythonErrorString(e) === expected.error, where);
        }
      }
    });
    assert.ok(checked > 0, "no vendored request for this golden file");
  });
}
