/**
 * Trajectory tokenization (ids, message spans, assistant mask), on generated conversations:
 * the ids equal a full render + encode; prefix, message spans and suffix tile the ids exactly;
 * the mask lies inside assistant spans, covers every rendered assistant turn and ends on its
 * end-of-turn token. With {% generation %}, the mask equals transformers' algorithm
 * (char_to_token on the generation spans) computed with the Rust tokenizer's offsets.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import fc from "fast-check";
import { Deltatok } from "../src/api/deltatok.js";
import type { Trajectory } from "../src/api/trajectory.js";
import { toDeltatokError } from "../src/errors.js";
import { conversation, type ConversationShape } from "./arbitraries/conversation.js";
import { modelsDir, specialTexts, type TokenizerName } from "../test/helpers/tokenizers.js";
import { repoPath } from "../test/helpers/paths.js";

const CASES: Array<{ name: string; tokenizer: TokenizerName; template?: string; shape: ConversationShape }> = [
  { name: "qwen3", tokenizer: "qwen3", shape: { plain: false, nullContent: false, singleToolCall: false } },
  { name: "deepseek-v3", tokenizer: "deepseek_v3", shape: { plain: false, stringArguments: true, nullContent: true, singleToolCall: false } },
  { name: "llama3.1", tokenizer: "llama3_1", template: "llama3.1", shape: { plain: false, nullContent: false, singleToolCall: true } },
  { name: "gpt-oss", tokenizer: "gptoss", template: "gpt-oss", shape: { plain: false, nullContent: false, singleToolCall: true } },
];

function checkTiling(t: Trajectory): void {
  const rendered = t.spans.filter((s) => s.end > s.start).sort((a, b) => a.start - b.start);
  let at = t.prefix[1];
  assert.equal(t.prefix[0], 0);
  for (const s of rendered) {
    assert.equal(s.start, at, `span of message ${s.message} starts where the previous ends`);
    at = s.end;
  }
  assert.equal(t.suffix[0], at, "suffix starts where the last span ends");
  assert.equal(t.suffix[1], t.count);
  for (const s of t.spans) assert.ok(s.start >= t.prefix[1] && s.end <= t.suffix[0], "every span inside [prefix, suffix]");
}

for (const c of CASES) {
  test(`${c.name}: trajectory ids, tiling spans and assistant mask`, async () => {
    const opts = { tokenizer: c.tokenizer, date: "2026-11-30", ...(c.template ? { chatTemplateFile: repoPath("test/fixtures/template/golden/templates", `${c.template}.jinja`) } : {}) };
    const dt = await Deltatok.create(opts);
    const full = await Deltatok.create({ ...opts, mode: "full" });
    const special = new Set(dt.tokenizer.tokenizerJson.added_tokens.filter((t) => t.special).map((t) => t.id));
    const probe = [{ role: "user", content: "" }];
    const withGen = dt.renderPrompt(probe, { add_generation_prompt: true });
    const without = dt.renderPrompt(probe, { add_generation_prompt: false });
    const genPrompt = withGen.startsWith(without) ? withGen.slice(without.length) : "";
    let checked = 0;
    fc.assert(
      fc.property(conversation(c.shape, specialTexts(c.tokenizer), 3), (messages) => {
        let t: Trajectory;
        try {
          t = dt.tokenizeTrajectory(messages);
        } catch (e) {
          assert.throws(() => full.encodePrompt(messages, { add_generation_prompt: false }), { code: toDeltatokError(e).code });
          return;
        }
        checked++;
        assert.deepEqual(Array.from(t.ids), Array.from(full.encodePrompt(messages, { add_generation_prompt: false })));
        checkTiling(t);
        assert.ok(t.offsetsExact);
        const inAssistant = new Uint8Array(t.count);
        for (const s of t.spans) if (s.role === "assistant") for (let i = s.start; i < s.end; i++) inAssistant[i] = 1;
        for (let i = 0; i < t.count; i++) if (t.assistantMask[i]) assert.equal(inAssistant[i], 1, `masked token ${i} outside assistant spans`);
        for (const s of t.spans) {
          if (s.role !== "assistant" || s.end <= s.start) continue;
          let last = -1;
          for (let i = s.start; i < s.end; i++) if (t.assistantMask[i]) last = i;
          assert.ok(last >= 0, `assistant message ${s.message} has masked tokens`);
          // the mask ends on the span's last special token (the end-of-turn token), or at the
          // span's end when the template closes the turn without one
          let lastSpecial = -1;
          for (let i = s.start; i < s.end; i++) if (special.has(t.ids[i] as number)) lastSpecial = i;
          assert.ok(last === lastSpecial || last === s.end - 1, `mask of message ${s.message} ends at ${last}`);
          // where the turn starts with the template's generation prompt (its role header), the
          // header is not masked (a template may render a turn without one: DeepSeek-V3's
          // tool-call continuation)
          const from = dt.tokenizer.tokenizer.decode(Array.from(t.ids.slice(s.start, s.end)));
          if (genPrompt.length > 0 && from.startsWith(genPrompt)) assert.equal(t.assistantMask[s.start], 0, "the assistant header is not masked");
        }
      }),
      { numRuns: 60 },
    );
    assert.ok(checked > 20, `only ${checked} conversations rendered`);
  });
}

type RustEnc = { getIds(): number[]; getOffsets(): Array<[number, number]> };
const { Tokenizer: Rust } = createRequire(import.meta.url)("tokenizers") as {
  Tokenizer: { fromFile(p: string): { encode(t: string, p: null, o: { addSpecialTokens: boolean }): Promise<RustEnc> } };
};

test("{% generation %}: the mask is transformers' char_to_token over the generation spans", async () => {
  const dt = await Deltatok.create({ tokenizer: "qwen3", chatTemplateFile: repoPath("test/fixtures/templates-extra/generation.jinja") });
  const rust = Rust.fromFile(join(modelsDir("qwen3"), "tokenizer.json"));
  const samples = fc.sample(conversation({ plain: true, nullContent: false, singleToolCall: true }, specialTexts("qwen3"), 3), { numRuns: 80, seed: 11 });
  let compared = 0;
  for (const messages of samples) {
    const t = dt.tokenizeTrajectory(messages);
    assert.equal(t.maskSource, "generation");
    const text = dt.renderPrompt(messages, { add_generation_prompt: false });
    const enc = await rust.encode(text, null, { addSpecialTokens: false });
    assert.deepEqual(Array.from(t.ids), enc.getIds());
    // transformers: offsets in code points; char_to_token(c) = the token whose span holds c
    const offs = enc.getOffsets();
    const charToToken = (cp: number) => offs.findIndex(([a, b]) => a <= cp && cp < b);
    const cpOf = (u: number) => [...text.slice(0, u)].length;
    const want = new Uint8Array(t.count);
    const gen = (dt as unknown as { tokenizer: unknown }) && generationSpans(text, messages);
    for (const [a, b] of gen) {
      const s = charToToken(cpOf(a));
      const e = charToToken(cpOf(b) - 1);
      if (s < 0) continue;
      for (let i = s; i <= (e < 0 ? t.count - 1 : e); i++) want[i] = 1;
    }
    assert.deepEqual(Array.from(t.assistantMask), Array.from(want));
    compared++;
  }
  assert.ok(compared > 50);
});

/** Generation spans of the test template, found independently of the renderer: content + <|im_end|> of each assistant turn. */
function generationSpans(text: string, messages: Array<Record<string, unknown>>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let pos = 0;
  for (const m of messages) {
    const head = m.role === "assistant" ? "<|im_start|>assistant\n" : `<|im_start|>${String(m.role)}\n`;
    assert.ok(text.startsWith(head, pos));
    pos += head.length;
    const body = `${String(m.content)}<|im_end|>`;
    if (m.role === "assistant" && body.length > 0) out.push([pos, pos + body.length]);
    pos += body.length + 1;
  }
  return out;
}
