/**
 * Reference fixtures: token counts, ids hashes and OSL made by Python Jinja2 + Rust tokenizers
 * (test/fixtures/golden/counts.jsonl, vendored from ../shared/corpus/golden by
 * scripts/vendor-golden-counts.py) for the 14 vendored conversations, with every golden file
 * that has a tokenizer here: Qwen3, Qwen2.5, Qwen3-Coder and Qwen3.5 templates (qwen3),
 * DeepSeek-V3/V3.1 (deepseek_v3), Llama 3.1/3.2 (llama3_1), gpt-oss (gptoss). Answers go through
 * the incremental Deltatok, request after request, as a replay would.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { toDeltatokError } from "../src/errors.js";
import { idsSha256 } from "./helpers/ids.js";
import { repoPath } from "./helpers/paths.js";
import { goldenConversations, goldenRows, type GoldenConv } from "./helpers/golden.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

type Conv = GoldenConv;
const conversations = goldenConversations();
const rows = goldenRows();

const template = (name: string) => repoPath("test/fixtures/template/golden/templates", `${name}.jinja`);
const deltatoks = new Map<string, Promise<Deltatok>>();
function deltatok(tokenizer: string, tmpl: string): Promise<Deltatok> {
  const k = `${tokenizer}|${tmpl}`;
  let e = deltatoks.get(k);
  if (e === undefined) {
    e = Deltatok.create({ tokenizer, chatTemplateFile: template(tmpl), date: "2026-11-30", renderer: TEST_RENDERER });
    deltatoks.set(k, e);
  }
  return e;
}

for (const row of rows.filter((r) => r.file !== undefined)) {
  test(`ISL and ids equal the reference: ${row.file}`, async () => {
    const dt = await deltatok(row.tokenizer, row.template);
    const pta = row.file?.includes("+parse-tool-arguments") ?? false;
    let checked = 0;
    const keys = Object.keys(row.expect).sort((a, b) => {
      const [ca, ka] = a.split("#");
      const [cb, kb] = b.split("#");
      return Number(ca) - Number(cb) || (ka === "final" ? 1e9 : Number(ka)) - (kb === "final" ? 1e9 : Number(kb));
    });
    for (const key of keys) {
      const [ci, k] = key.split("#") as [string, string];
      const conv = conversations[Number(ci)] as Conv;
      const final = k === "final";
      const messages = final ? conv.messages : conv.messages.slice(0, Number(k));
      const want = row.expect[key];
      const opts = { tools: conv.tools ?? null, parse_tool_arguments: pta, add_generation_prompt: !final };
      if (Array.isArray(want)) {
        const ids = dt.encodePrompt(messages, opts);
        assert.equal(ids.length, want[0], `${conv.id}#${k} count`);
        assert.equal(idsSha256(ids), want[1], `${conv.id}#${k} ids`);
      } else {
        assert.throws(() => dt.encodePrompt(messages, opts), (e: unknown) => toDeltatokError(e).code.startsWith("DT_TEMPLATE"), `${conv.id}#${k}`);
      }
      checked++;
    }
    if (!row.file?.includes("stress-outlier")) assert.ok(checked > 0);
    const s = dt.stats();
    if (checked > 2) assert.ok(s.partial > 0, "requests reused earlier turns");
  });
}

for (const row of rows.filter((r) => r.osl_file !== undefined)) {
  test(`OSL equals the reference: ${row.osl_file}`, async () => {
    const dt = await deltatok(row.tokenizer, row.template);
    let checked = 0;
    for (const [key, want] of Object.entries(row.expect)) {
      const [ci, k] = key.split("#") as [string, string];
      const conv = conversations[Number(ci)] as Conv;
      assert.equal(dt.countMessage(conv.messages[Number(k)]), want, `${conv.id}#${k}`);
      checked++;
    }
    assert.ok(checked > 0);
  });
}
