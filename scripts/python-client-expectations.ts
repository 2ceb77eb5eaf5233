/**
 * What the Python client's tests compare with: the in-process JS library's answers on the
 * bundled corpus (data/tau-bench-airline-20.jsonl) for every apply_chat_template variant the
 * tests call, rollouts (canonical, and with sampled ids and logprobs), plus the tokenizer's
 * metadata, plain-text encodes and decodes.
 *
 *   node dist/scripts/python-client-expectations.js OUT.json
 *
 * Run by clients/python/tests (through test/client-python-unittest.test.ts in `npm test`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Deltatok } from "../src/api/deltatok.js";
import { pythonJsonParser } from "../src/api/json.js";
import { trajectoryJson } from "../src/api/trajectory.js";
import { rolloutJson } from "../src/api/rollout.js";

const CORPUS = fileURLToPath(new URL("../../data/tau-bench-airline-20.jsonl", import.meta.url));
const DATE = "2026-11-30";
/** A ChatML template with generation blocks: return_assistant_tokens_mask has transformers' meaning. */
export const GENERATION_TEMPLATE =
  "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}" +
  "{% else %}{{ m.content }}<|im_end|>{% endif %}\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

interface Conv {
  id: string;
  messages: Array<Record<string, unknown>>;
  tools?: unknown[];
}

async function main(): Promise<void> {
  const out = process.argv[2];
  if (out === undefined) throw new Error("usage: python-client-expectations.js OUT.json");
  const dt = await Deltatok.create({ tokenizer: "qwen3", date: DATE });
  const convs = readFileSync(CORPUS, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => pythonJsonParser(l) as Conv);
  const requests: Array<Record<string, unknown>> = [];
  for (const [ci, c] of convs.entries()) {
    const tools = c.tools ?? null;
    for (let k = 0; k < c.messages.length; k++) {
      if (c.messages[k]?.role !== "assistant") continue;
      const prompt = c.messages.slice(0, k);
      const r: Record<string, unknown> = {
        conversation: ci,
        k,
        ids: Array.from(dt.encodePrompt(prompt, { tools, add_generation_prompt: true })),
        osl: dt.countMessage(c.messages[k]),
      };
      if (ci < 3) {
        // the variants, on the first conversations
        r.ids_no_generation_prompt = Array.from(dt.encodePrompt(prompt, { tools, add_generation_prompt: false }));
        r.text = dt.renderPrompt(prompt, { tools, add_generation_prompt: true });
        r.ids_no_thinking = Array.from(dt.encodePrompt(prompt, { tools, add_generation_prompt: true, chat_template_kwargs: { enable_thinking: false } }));
        r.ids_continued = Array.from(dt.encodePrompt(c.messages.slice(0, k + 1), { tools, continue_final_message: true }));
        const t = trajectoryJson(dt.tokenizeTrajectory(c.messages.slice(0, k + 1), { chat_template: GENERATION_TEMPLATE }));
        r.generation = { ids: t.ids, mask: t.assistant_mask, source: t.mask_source };
      }
      requests.push(r);
    }
  }
  // rollouts of the first conversations: canonical, then with the canonical completions sent as
  // sampled ids (and made-up logprobs), then with one completion re-tokenized non-canonically
  const rollouts: Array<Record<string, unknown>> = [];
  for (const c of convs.slice(0, 3)) {
    const tools = c.tools ?? null;
    const canonical = rolloutJson(dt.tokenizeRollout(c.messages, { tools }));
    const completions = new Map<number, number[]>();
    for (const q of canonical.sequences as Array<{ ids: number[]; turns: Array<{ index: number; completion: [number, number] }> }>) {
      for (const t of q.turns) completions.set(t.index, q.ids.slice(t.completion[0], t.completion[1]));
    }
    let perturbed = false;
    const sampled = c.messages.map((m, i) => {
      const ids = completions.get(i);
      if (ids === undefined) return m;
      let out = ids;
      if (!perturbed) {
        // the first token of at least two characters, replaced by the ids of its two halves
        const at = ids.findIndex((id) => dt.decode([id]).length >= 2 && !/[\ud800-\udfff]/.test(dt.decode([id])));
        if (at >= 0) {
          const text = dt.decode([ids[at] as number]);
          const halves = [...dt.encodeText(text.slice(0, 1)), ...dt.encodeText(text.slice(1))];
          out = [...ids.slice(0, at), ...halves, ...ids.slice(at + 1)];
          perturbed = true;
        }
      }
      return { ...m, sampled_ids: out, sampled_logprobs: out.map((_id, j) => -(j % 7) / 8) };
    });
    rollouts.push({ messages: sampled, tools, canonical, sampled: rolloutJson(dt.tokenizeRollout(sampled, { tools })) });
  }
  const texts = ["Hello world", " leading space", "naïve café — 東京 🎉", "<|im_start|>user\nhi<|im_end|>", ""];
  const expect = {
    date: DATE,
    corpus: CORPUS,
    generation_template: GENERATION_TEMPLATE,
    requests,
    rollouts,
    info: dt.tokenizerInfo(),
    texts: texts.map((t) => ({
      text: t,
      ids: Array.from(dt.encodeText(t)),
      ids_special: Array.from(dt.encodeText(t, { add_special_tokens: true })),
      decoded: dt.decode(dt.encodeText(t)),
      decoded_skip: dt.decode(dt.encodeText(t), { skip_special_tokens: true }),
    })),
  };
  writeFileSync(out, JSON.stringify(expect));
}

await main();
