/**
 * `deltatok render`: the rendered text of every request, as `{"id","index","chars","sha256"}`
 * (chars in code points as Python counts them, sha256 of the UTF-8 bytes), so renders can be
 * compared with the reference without a tokenizer. `--final` adds one record per whole
 * conversation (index "final", no generation prompt); `--text` adds the text.
 */
import { createHash } from "node:crypto";
import { toDeltatokError, type ErrorRecord } from "../errors.js";
import type { Deltatok } from "../api/deltatok.js";
import type { PromptOptions } from "../api/options.js";
import { pythonJsonParser } from "../api/json.js";
import { assistantIndices, mergeKwargs, openCorpus, readOpenCorpus } from "../corpus/corpus.js";
import type { CorpusId } from "../corpus/id.js";
import { Progress } from "./progress.js";
import { round3 } from "./replay.js";
import { stopReport, turn, untilAborted, type StopReport } from "./signals.js";

export interface RenderRecord {
  /** The line's id as sent (src/corpus/id.ts). */
  id: CorpusId | null;
  index: number | "final" | null;
  chars?: number;
  sha256?: string;
  text?: string;
  line?: number;
  error?: ErrorRecord;
}

export interface RenderCorpusOptions {
  chatTemplateKwargs: Record<string, unknown> | null;
  parseToolArguments: boolean;
  final: boolean;
  text: boolean;
  progress?: boolean | undefined;
  /** Aborting stops the run between conversations (the records emitted are a prefix). */
  signal?: AbortSignal | undefined;
}

export interface RenderSummary {
  corpus: string;
  conversations: number;
  renders: number;
  errors: number;
  errors_by_code: Record<string, number>;
  chars_total: number;
  load_s: number;
  elapsed_s: number;
  /** Present when a signal stopped the run (the totals above are of the lines done). */
  stopped?: StopReport;
}

/** Number of Unicode code points in a (well-formed) string. */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      n--;
      i++;
    }
  }
  return n;
}

export async function renderCorpus(
  dt: Deltatok,
  path: string,
  o: RenderCorpusOptions,
  emit: (r: RenderRecord) => void | Promise<void>,
  loadSeconds: number,
): Promise<RenderSummary> {
  const t0 = performance.now();
  const file = await openCorpus(path);
  const total = file.size;
  const progress = new Progress(o.progress);
  let bytes = 0;
  let lines = 0;
  let conversations = 0;
  let renders = 0;
  let errors = 0;
  let chars = 0;
  const byCode: Record<string, number> = {};
  const fail = (r: RenderRecord, e: unknown) => {
    const err = toDeltatokError(e);
    r.error = err.toJSON();
    errors++;
    byCode[err.code] = (byCode[err.code] ?? 0) + 1;
  };
  for await (const item of untilAborted(readOpenCorpus(file, pythonJsonParser), o.signal)) {
    bytes += item.bytes;
    lines++;
    if (!item.ok) {
      const r: RenderRecord = { id: item.failure.id, index: null, line: item.failure.line };
      fail(r, item.failure.error);
      await emit(r);
      continue;
    }
    conversations++;
    const c = item.conversation;
    const kwargs = mergeKwargs(o.chatTemplateKwargs, c.chat_template_kwargs);
    const popts: PromptOptions = { tools: c.tools, chat_template_kwargs: kwargs, parse_tool_arguments: o.parseToolArguments };
    const jobs: Array<[number | "final", unknown[], boolean]> = assistantIndices(c.messages).map((k) => [k, c.messages.slice(0, k), true]);
    if (o.final) jobs.push(["final", c.messages, false]);
    for (const [index, messages, agp] of jobs) {
      const r: RenderRecord = { id: c.id, index };
      renders++;
      try {
        const text = dt.renderPrompt(messages, { ...popts, add_generation_prompt: agp });
        r.chars = codePointLength(text);
        r.sha256 = createHash("sha256").update(text, "utf8").digest("hex");
        if (o.text) r.text = text;
        chars += r.chars;
      } catch (e) {
        fail(r, e);
      }
      await emit(r);
    }
    progress.tick(() => {
      const pct = total > 0 ? ` ${((100 * bytes) / total).toFixed(0)}%` : "";
      return `render${pct}: ${conversations} conversations, ${renders} renders, ${errors} errors`;
    });
    if (o.signal !== undefined) await turn();
  }
  progress.done();
  const stopped = stopReport(o.signal, lines, 0, bytes, total);
  return {
    corpus: path,
    conversations,
    renders,
    errors,
    errors_by_code: byCode,
    chars_total: chars,
    load_s: round3(loadSeconds),
    elapsed_s: round3((performance.now() - t0) / 1000),
    ...(stopped === undefined ? {} : { stopped }),
  };
}
