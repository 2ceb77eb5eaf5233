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
 *                  "mask_source", "offsets_exact"} | {"id", "line", "error"}]}, plus "stopped"
 *                  (the summary's report) when a signal stopped the run: the records are a prefix
 *                  of the full run's
 *   last 8 bytes   uint64 little-endian: byte offset of the index
 * `clients/python/deltatok_client.py` has `read_tokens(path)` for it. In both formats "id" is the
 * corpus line's id as the line spelt it (a JSON number keeps its text: src/corpus/id.ts).
 *
 * Also the training commands' shared in-process loop (`trainCorpus`, rollout's too) and the sink
 * interface that it and the worker path (src/cli/training-pool.ts) both write through.
 */
import { BinaryFile } from "./binary.js";
import type { Deltatok } from "../api/deltatok.js";
import { trajectoryJson, type Trajectory } from "../api/trajectory.js";
import { pythonJsonParser } from "../api/json.js";
import { openCorpus, readOpenCorpus, type LineError } from "../corpus/corpus.js";
import type { CorpusId } from "../corpus/id.js";
import { trainingConversation } from "../corpus/replay.js";
import type { TrainingOutcome } from "../pool/protocol.js";
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

  async record(id: CorpusId, t: Trajectory, line?: number): Promise<void> {
    const offset = await this.#file.u32(t.ids);
    const maskOffset = await this.#file.bytes(t.assistantMask);
    const rec: Record<string, unknown> = { id, offset, count: t.count, mask_offset: maskOffset, prefix: t.prefix, spans: t.spans, suffix: t.suffix, mask_source: t.maskSource, offsets_exact: t.offsetsExact };
    if (line !== undefined) rec.line = line;
    this.#file.index.push(rec);
  }

  error(entry: Record<string, unknown>): void {
    this.#file.index.push(entry);
  }

  digest(): { records: number; records_sha256: string } {
    return this.#file.digest();
  }

  async finish(tokenizer: string, shard: Record<string, unknown> | undefined, stopped: StopReport | undefined): Promise<void> {
    await this.#file.finish({ format: "deltatok-tokens", version: 1, tokenizer, ...(stopped === undefined ? {} : { stopped }), ...shard });
  }
}

/** Where a training command's outcomes go, in corpus order (tokenize's or rollout's output and tallies). */
export interface TrainingSink<S> {
  start(): Promise<void>;
  add(t: TrainingOutcome): Promise<void>;
  /** Finishes the output (`lines`: lines done) and returns the summary. */
  finish(lines: number, stopped: StopReport | undefined, elapsedSeconds: number): Promise<S>;
  /** The progress line so far. */
  progress(): string;
}

/** `deltatok tokenize`'s output: JSONL records or the binary file, and the summary's tallies. */
export class TokenizeSink implements TrainingSink<TokenizeSummary> {
  readonly #jsonl: JsonlWriter | null;
  readonly #bin: BinaryWriter | null;
  readonly #shard: ShardOutput | undefined;
  readonly #path: string;
  readonly #out: string | undefined;
  readonly #format: "jsonl" | "binary";
  readonly #tokenizer: string;
  conversations = 0;
  errors = 0;
  tokens = 0;
  #masked = 0;
  #inexact = 0;

  constructor(path: string, out: string | undefined, format: "jsonl" | "binary", tokenizer: string, shard: ShardOutput | undefined) {
    if (format === "binary" && (out === undefined || out === "-")) throw new Error("--format binary needs --out FILE");
    this.#jsonl = format === "jsonl" ? new JsonlWriter(out) : null;
    this.#bin = format === "binary" ? new BinaryWriter(out as string) : null;
    this.#shard = shard;
    this.#path = path;
    this.#out = out;
    this.#format = format;
    this.#tokenizer = tokenizer;
  }

  async start(): Promise<void> {
    await this.#bin?.start();
    if (this.#shard !== undefined) {
      await this.#jsonl?.write({ [HEADER_KEY]: this.#shard.header });
      this.#jsonl?.startDigest();
    }
  }

  async add(o: TrainingOutcome): Promise<void> {
    if (o.conversation) this.conversations++;
    const t = o.trajectory;
    if (t === undefined) {
      this.errors++;
      const e = { id: o.id, line: o.line, error: o.error };
      if (this.#jsonl !== null) await this.#jsonl.write(e);
      else this.#bin?.error(e);
      return;
    }
    this.tokens += t.count;
    for (const b of t.assistantMask) this.#masked += b;
    if (!t.offsetsExact) this.#inexact++;
    const line = this.#shard === undefined ? undefined : o.line;
    const id = o.id as CorpusId;
    if (this.#jsonl !== null) await this.#jsonl.write(line === undefined ? { id, ...trajectoryJson(t) } : { id, ...trajectoryJson(t), line });
    else await this.#bin?.record(id, t, line);
  }

  progress(): string {
    return `tokenize: ${this.conversations} conversations, ${this.tokens} tokens, ${this.errors} errors`;
  }

  async finish(lines: number, stopped: StopReport | undefined, elapsedSeconds: number): Promise<TokenizeSummary> {
    const summary: TokenizeSummary = {
      corpus: this.#path,
      out: this.#out ?? "-",
      format: this.#format,
      conversations: this.conversations,
      errors: this.errors,
      tokens: this.tokens,
      masked_tokens: this.#masked,
      inexact_offsets: this.#inexact,
      elapsed_s: round3(elapsedSeconds),
      ...(stopped === undefined ? {} : { stopped }),
    };
    const sh = this.#shard;
    const trailer = sh === undefined ? undefined : { lines, summary, ...(this.#jsonl ?? (this.#bin as BinaryWriter)).digest() };
    if (trailer !== undefined) await this.#jsonl?.write({ [TRAILER_KEY]: trailer });
    await this.#jsonl?.close();
    await this.#bin?.finish(this.#tokenizer, sh === undefined ? undefined : { [HEADER_KEY]: sh.header, [TRAILER_KEY]: trailer }, stopped);
    return summary;
  }
}

/** The outcome of a line the reader could not use (its error record). */
export function lineFailureOutcome(f: LineError): TrainingOutcome {
  return { id: f.id, line: f.line, conversation: false, error: f.error.toJSON() };
}

/**
 * Runs a training command in this thread: reads the corpus in order, makes each line's outcome
 * (src/corpus/replay.ts trainingConversation, as the workers do) and hands it to `sink`.
 */
export async function trainCorpus<S>(dt: Deltatok, path: string, mode: "tokenize" | "rollout", sink: TrainingSink<S>, o: TokenizeCorpusOptions): Promise<S> {
  const t0 = performance.now();
  const progress = new Progress(o.progress);
  const file = await openCorpus(path);
  await sink.start();
  const sh = o.shard;
  const keep = sh === undefined ? undefined : (text: string | undefined, line: number) => inShard(sh.spec, text, line);
  const options = { chatTemplateKwargs: o.chatTemplateKwargs, parseToolArguments: o.parseToolArguments };
  let bytes = 0;
  let lines = 0;
  for await (const item of untilAborted(readOpenCorpus(file, pythonJsonParser, keep), o.signal)) {
    bytes += item.bytes;
    lines++;
    if (!item.ok) {
      await sink.add(lineFailureOutcome(item.failure));
      continue;
    }
    await sink.add(trainingConversation(dt, item.conversation, mode, options));
    progress.tick(() => sink.progress());
    if (o.signal !== undefined) await turn();
  }
  progress.done();
  return sink.finish(lines, stopReport(o.signal, lines, 0, bytes, file.size), (performance.now() - t0) / 1000);
}

export async function tokenizeCorpus(dt: Deltatok, path: string, out: string | undefined, o: TokenizeCorpusOptions): Promise<TokenizeSummary> {
  return trainCorpus(dt, path, "tokenize", new TokenizeSink(path, out, o.format, dt.options.tokenizer, o.shard), o);
}
