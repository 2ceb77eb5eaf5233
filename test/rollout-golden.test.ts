/**
 * Rollouts against the reference fixtures (test/fixtures/golden/counts.jsonl, made by Python
 * Jinja2 + Rust tokenizers): for every turn of every vendored conversation and every golden file
 * with a tokenizer here, `prompt_tokens` is the golden count of that request and the hash of
 * `ids[:prompt_tokens]` its golden ids hash — the sequence holds exactly what the server
 * tokenized, whether the turn extended a sequence or started one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { toDeltatokError } from "../src/errors.js";
import { idsSha256 } from "./helpers/ids.js";
import { repoPath } from "./helpers/paths.js";
import { goldenConversations, goldenRows, type GoldenConv } from "./helpers/golden.js";

type Conv = GoldenConv;
const conversations = goldenConversations();
const rows = goldenRows().filter((r) => r.file !== undefined);

for (const row of rows) {
  test(`rollout prompts equal the reference: ${row.file}`, async () => {
    const dt = await Deltatok.create({ tokenizer: row.tokenizer, chatTemplateFile: repoPath("test/fixtures/template/golden/templates", `${row.template}.jinja`), date: "2026-11-30" });
    const pta = row.file?.includes("+parse-tool-arguments") ?? false;
    let turns = 0;
    for (let ci = 0; ci < conversations.length; ci++) {
      const conv = conversations[ci] as Conv;
      const keys = Object.keys(row.expect).filter((k) => k.startsWith(`${ci}#`) && !k.endsWith("#final"));
      if (keys.length === 0) continue;
      let r;
      try {
        r = dt.tokenizeRollout(conv.messages, { tools: conv.tools ?? null, parse_tool_arguments: pta });
      } catch (e) {
        // the template rejects some request of this conversation: so does the reference
        assert.ok(toDeltatokError(e).code.startsWith("DT_TEMPLATE"), String(e));
        assert.ok(keys.some((k) => !Array.isArray(row.expect[k])), `${conv.id}: the reference rendered every request`);
        continue;
      }
      for (const s of r.sequences) {
        for (const t of s.turns) {
          const want = row.expect[`${ci}#${t.index}`];
          assert.ok(Array.isArray(want), `${conv.id}#${t.index} has a reference count`);
          assert.equal(t.promptTokens, want[0], `${conv.id}#${t.index} prompt_tokens`);
          assert.equal(idsSha256(s.ids.subarray(0, t.promptTokens)), want[1], `${conv.id}#${t.index} ids`);
          turns++;
        }
      }
    }
    if (!row.file?.includes("stress-outlier")) assert.ok(turns > 0);
  });
}
