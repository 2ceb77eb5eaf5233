/**
 * `deltatok tokenize <corpus.jsonl> --out FILE [--format jsonl|binary]`: every conversation as
 * an RL trajectory — token ids, per-message token spans and the assistant mask (see
 * api/trajectory.ts for exactly which tokens count).
 *
 * JSONL: one record per conversation:
 *   {"id", "count", "ids": [...], "prefix": [a, b], "spans": [{"message", "role", "start", "end"}],
 *    "suffix": [a, b], "assistant_mask": [[start, end], ...] (token ranges of 1s),
 *    "mask_source": "generation" | "assistant-spans", "offsets_exact": true}
 * or {"id", "line", "error": {code, message, path?}}.
 *
 * Binary (`--format binary`), for large corpora:
 *   bytes 0..8     magic "DTOKBIN1"
 *   then per record: ids as uint32 little-endian (count × 4 bytes), then the mask as one byte per
 *                  token (0/1), zero-padded to a multiple of 4 bytes
 *   then           the index: UTF-8 JSON {"format": "deltatok-tokens", "version": 1, "tokenizer",
 *                  "records": [{"id", "offset", "count", "mask_offset", "prefix", "spans", "suffix",
 *                  "mask_source", "offsets_exact"} | {"id", "line", "error"}]}
 *   last 8 bytes   uint64 little-endian: byte offset of the index
 * `clients/python/deltatok_client.py` has `read_tokens(path)` for it.
 */
import { BinaryFile } from "./binary.js";
import { toDeltatokError } from "../errors.js";
import type { Deltatok } from "../api/deltatok.js";
import { trajectoryJson, type Trajectory } from "../api/trajectory.js";
import { pythonJsonParser } from "../api/json.js";
import { mergeKwargs, openCorpus, readOpenCorpus } from "../corpus/corpus.js";
import { JsonlWriter } from "./output.js";
import { Progress } from "./progress.js";
import { round3 } from "./replay.js";
import { stopReport, turn, untilAborted, type StopReport } from "./signals.js";
import { HEADER_KEY, TRAILER_KEY, inShard, type ShardOutput } from "./shard.js";

export interface TokenizeCorpusOptions {
  chatTemplateKwargs: Record<string, unknown> | null;
  parseToolArguments: boolean;
  format: "jsonl" | "binary";
  progress?: boolean | undefined;
  /**
   * Aborting stops the run between conversations: the JSONL records are a prefix, a binary file
   * is finished with the index of the records written (a valid file of that prefix).
   */
  signal?: AbortSignal | undefined;
  /**
   * Only this shard's lines (`--shard`): JSONL gets a header line, a `line` on every record and
   * a trailer with the summary; a binary index gets `shard`, `shard_end` and a `line` per record.
   */
  shard?: ShardOutput | undefined;
}

export interface TokenizeSummary {
  corpus: string;
  out: string;
  format: string;
  conversations: number;
  errors: number;
  tokens: number;
  masked_tokens: number;
  inexact_offsets: number;
  elapsed_s: number;
  /** Present when a signal stopped the run (the counts above are of the lines done). */
  stopped?: StopReport;
}

class BinaryWriter {
  readonly #file: BinaryFile;

  constructor(path: string) {
    this.#file = new BinaryFile(path, "DTOKBIN1");
  }

  async start(): Promise<void> {
    await this.#file.start();
  }

  async record(id: string, t: Trajectory, line?: number): Promise<void> {
    const offset = await this.#file.u32(t.ids);
    const maskOffset = await this.#file.bytes(t.assistantMask);
    const rec: Record<string, unknown> = { id, offset, count: t.count, mask_offset: maskOffset, prefix: t.prefix, spans: t.spans, suffix: t.suffix, mask_source: t.maskSource, offsets_exact: t.offsetsExact };
    if (line !== undefined) rec.line = line;
    this.#file.index.push(rec);
  }

  error(entry: Record<string, unknown>): void {
    this.#file.index.push(entry);
  }

  async finish(tokenizer: string, shard?: Record<string, unknown>): Promise<void> {
    await this.#file.finish({ format: "deltatok-tokens", version: 1, tokenizer, ...shard });
  }
}

export async function tokenizeCorpus(dt: Deltatok, path: string, out: string | undefined, o: TokenizeCorpusOptions): Promise<TokenizeSummary> {
  const t0 = performance.now();
  const progress = new Progress(o.progress);
  const jsonl = o.format === "jsonl" ? new JsonlWriter(out) : null;
  if (o.format === "binary" && (out === undefined || out === "-")) throw new Error("--format binary needs --out FILE");
  const bin = o.format === "binary" ? new BinaryWriter(out as string) : null;
  const file = await openCorpus(path);
  await bin?.start();
  const sh = o.shard;
  if (sh !== undefined) await jsonl?.write({ [HEADER_KEY]: sh.header });
  const keep = sh === undefined ? undefined : (text: string | undefined, line: number) => inShard(sh.spec, text, line);
  let bytes = 0;
  let lines = 0;
  let conversations = 0;
  let errors = 0;
  let tokens = 0;
  let masked = 0;
  let inexact = 0;
  for await (const item of untilAborted(readOpenCorpus(file, pythonJsonParser, keep), o.signal)) {
    bytes += item.bytes;
    lines++;
    if (!item.ok) {
      errors++;
      const e = { id: item.failure.id, line: item.failure.line, error: item.failure.error.toJSON() };
      if (jsonl !== null) await jsonl.write(e);
      else bin?.error(e);
      continue;
    }
    conversations++;
    const c = item.conversation;
    try {
      const t = dt.tokenizeTrajectory(c.messages, {
        tools: c.tools,
        chat_template_kwargs: mergeKwargs(o.chatTemplateKwargs, c.chat_template_kwargs),
        parse_tool_arguments: o.parseToolArguments,
      });
      tokens += t.count;
      for (const b of t.assistantMask) masked += b;
      if (!t.offsetsExact) inexact++;
      const line = sh === undefined ? undefined : c.line;
      if (jsonl !== null) await jsonl.write(line === undefined ? { id: c.id, ...trajectoryJson(t) } : { id: c.id, ...trajectoryJson(t), line });
      else await bin?.record(c.id, t, line);
    } catch (e) {
      errors++;
      const rec = { id: c.id, line: c.line, error: toDeltatokError(e).toJSON() };
      if (jsonl !== null) await jsonl.write(rec);
      else bin?.error(rec);
    }
    progress.tick(() => `tokenize: ${conversations} conversations, ${tokens} tokens, ${errors} errors`);
    if (o.signal !== undefined) await turn();
  }
  progress.done();
  const stopped = stopReport(o.signal, lines, 0, bytes, file.size);
  const summary: TokenizeSummary = {
    corpus: path,
    out: out ?? "-",
    format: o.format,
    conversations,
    errors,
    tokens,
    masked_tokens: masked,
    inexact_offsets: inexact,
    elapsed_s: round3((performance.now() - t0) / 1000),
    ...(stopped === undefined ? {} : { stopped }),
  };
  const trailer = sh === undefined ? undefined : { lines, summary };
  if (trailer !== undefined) await jsonl?.write({ [TRAILER_KEY]: trailer });
  await jsonl?.close();
  await bin?.finish(dt.options.tokenizer, sh === undefined ? undefined : { [HEADER_KEY]: sh.header, [TRAILER_KEY]: trailer });
  return summary;
}
