/**
 * What real templates charge to the render budgets (DESIGN.md, "Budgets"): every template of
 * ../shared/corpus/templates over every conversation of ../shared/corpus/trajectories (the whole
 * conversation, as the final turn's prompt), with tool arguments as strings and parsed; then each
 * template over the longest conversation repeated to the default `maxPromptChars` (16 M units
 * of message text) — the largest prompt the Deltatok accepts. Prints, per template, the largest
 * build charge seen and its ratio to the rendered text, and the largest over all against the
 * default `maxBuildUnits`; and the largest tracking state of an incremental render.
 *
 *   node dist/scripts/budget-measure.js [--only SUBSTRING] [--no-scaled] [--shared DIR/corpus]
 *
 * Not part of `npm test` (needs ../shared).
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { pythonJsonParser } from "../src/api/json.js";
import { parseCorpusLine, type Conversation } from "../src/corpus/corpus.js";
import { loadTokenizer } from "../src/load/index.js";
import { parseToolArguments } from "../src/render/messages.js";
import { templateVariables } from "../src/render/variables.js";
import { DEFAULT_BUDGET, compileTemplate } from "../src/template/index.js";
import { DeltatokError } from "../src/errors.js";

/** ../shared/corpus next to the checkout (a worktree elsewhere passes --shared DIR) */
let SHARED = fileURLToPath(new URL("../../../shared/corpus/", import.meta.url));
const MAX_PROMPT_CHARS = 16_000_000;

interface Row {
  template: string;
  renders: number;
  maxBuilt: number;
  maxRatio: number;
  maxText: number;
  maxTrackBytes: number;
  scaledBuilt: number | null;
  scaledText: number | null;
  scaledError: string | null;
}

function messageChars(v: unknown): number {
  if (typeof v === "string") return v.length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + messageChars(x), 0);
  if (typeof v === "object" && v !== null) return Object.values(v).reduce((n: number, x) => n + messageChars(x), 0);
  return 0;
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({ options: { only: { type: "string" }, "no-scaled": { type: "boolean" }, shared: { type: "string" } } });
  if (v.shared !== undefined) SHARED = v.shared;
  const specials = (await loadTokenizer("qwen3")).specialTokens;
  const corpora = readdirSync(join(SHARED, "trajectories")).filter((f) => f.endsWith(".jsonl"));
  const convs: Conversation[] = [];
  for (const f of corpora) {
    for (const [i, line] of readFileSync(join(SHARED, "trajectories", f), "utf8").split("\n").entries()) {
      if (line.trim() === "") continue;
      const c = parseCorpusLine(line, i + 1, pythonJsonParser);
      if (!("error" in c)) convs.push(c);
    }
  }
  const longest = convs.reduce((a, b) => (messageChars(b.messages) > messageChars(a.messages) ? b : a));
  const index = JSON.parse(readFileSync(join(SHARED, "templates/_index.json"), "utf8")) as Array<{ short: string; file: string }>;
  const now = new Date(Date.UTC(2026, 10, 30));
  const rows: Row[] = [];
  for (const t of index) {
    if (v.only !== undefined && !t.short.includes(v.only)) continue;
    const tpl = compileTemplate(readFileSync(join(SHARED, t.file), "utf8"));
    const row: Row = { template: t.short, renders: 0, maxBuilt: 0, maxRatio: 0, maxText: 0, maxTrackBytes: 0, scaledBuilt: null, scaledText: null, scaledError: null };
    const vars = (c: Conversation, messages: readonly unknown[], parsed: boolean): Record<string, unknown> =>
      templateVariables(
        { messages: parsed ? parseToolArguments(messages, pythonJsonParser) : messages, tools: c.tools ?? null, add_generation_prompt: false, chat_template_kwargs: c.chat_template_kwargs ?? null },
        specials,
      );
    for (const c of convs) {
      for (const parsed of [false, true]) {
        let r;
        try {
          r = tpl.render(vars(c, c.messages, parsed), { now });
        } catch (e) {
          if (e instanceof DeltatokError && e.code === "DT_TEMPLATE_BUDGET") throw e;
          continue;
        }
        row.renders++;
        row.maxBuilt = Math.max(row.maxBuilt, r.built);
        row.maxText = Math.max(row.maxText, r.text.length);
        if (r.text.length > 0) row.maxRatio = Math.max(row.maxRatio, r.built / r.text.length);
        // the tracking state of an incremental render of the same conversation
        try {
          const inc = tpl.renderIncremental(vars(c, c.messages, parsed), { now }, null);
          row.maxTrackBytes = Math.max(row.maxTrackBytes, inc.traceBytes);
        } catch {
          // (rendered whole above; an incremental failure would be a test failure elsewhere)
        }
      }
    }
    if (v["no-scaled"] !== true) {
      // the longest conversation's turns repeated up to maxPromptChars (system message once)
      const head = longest.messages.filter((m) => (m as { role?: unknown }).role === "system");
      const turns = longest.messages.filter((m) => (m as { role?: unknown }).role !== "system");
      const big: unknown[] = [...head];
      let chars = messageChars(head);
      const per = messageChars(turns);
      while (chars + per <= MAX_PROMPT_CHARS) {
        big.push(...turns);
        chars += per;
      }
      for (const parsed of [false, true]) {
        try {
          const r = tpl.render(vars(longest, big, parsed), { now });
          row.scaledBuilt = Math.max(row.scaledBuilt ?? 0, r.built);
          row.scaledText = Math.max(row.scaledText ?? 0, r.text.length);
          row.scaledError = null;
          break;
        } catch (e) {
          row.scaledError = e instanceof DeltatokError ? `${e.code}: ${e.message.slice(0, 120)}` : String(e);
        }
      }
    }
    rows.push(row);
    process.stderr.write(`${t.short}: ${JSON.stringify(row)}\n`);
  }
  const max = (f: (r: Row) => number | null): number => Math.max(...rows.map((r) => f(r) ?? 0));
  process.stdout.write(
    JSON.stringify(
      {
        templates: rows.length,
        conversations: convs.length,
        longest: { id: longest.id, message_chars: messageChars(longest.messages) },
        default_maxBuildUnits: DEFAULT_BUDGET.maxBuildUnits,
        max_built_real: max((r) => r.maxBuilt),
        max_ratio_built_to_text: Math.round(max((r) => r.maxRatio) * 100) / 100,
        max_track_bytes_real: max((r) => r.maxTrackBytes),
        max_built_at_max_prompt: max((r) => r.scaledBuilt),
        scaled_failures: rows.filter((r) => r.scaledError !== null).map((r) => [r.template, r.scaledError]),
        rows,
      },
      null,
      1,
    ) + "\n",
  );
}

await main();
