/**
 * `deltatok rollout <corpus.jsonl> [--out FILE] [--format jsonl|binary]`: every conversation as
 * RL training sequences (api/rollout.ts has the definitions). Assistant messages may carry
 * `sampled_ids` and `sampled_logprobs`.
 *
 * JSONL: one record per conversation:
 *   {"id", "sequences": [{"ids", "mask": [[start, end], ...], "logprobs": [...] | null,
 *    "turns": [{"index", "prompt_tokens", "completion": [start, end], "sampled", "in_context"}]}],
 *    "splits": [{"index", "at", "reason", "message"?, "context": {"sequence", "prompt"}}],
 *    "drift": [{"index", "at", "sampled_tokens", "canonical_tokens", "sampled", "canonical",
 *    "decodes_to_render"}]}
 * or {"id", "line", "error": {code, message, path?}}.
 *
 * Binary (`--format binary`, src/cli/binary.ts): magic "DTROLL02"; per sequence its ids
 * (uint32), its mask (one byte per token), and, when it has logprobs, float64 logprobs (NaN where
 * none; "DTROLL01" files, written before, hold float32); the index's records are {"id", "sequences": [{"offset", "count", "mask_offset",
 * "logprobs_offset" | null, "turns"}], "splits", "drift"} or {"id", "line", "error"}.
 * `read_rollouts(path)` in the Python client reads it. "id" is the corpus line's id as the line
 * spelt it, in both formats (src/corpus/id.ts).
 */
import type { ErrorRecord } from "../errors.js";
import type { Deltatok } from "../api/deltatok.js";
import { rolloutJson, turnJson, SPLIT_REASONS, type Rollout, type SplitReason } from "../api/rollout.js";
import { BinaryFile } from "./binary.js";
import { JsonlWriter } from "./output.js";
import { round3 } from "./replay.js";
import type { StopReport } from "./signals.js";
import { HEADER_KEY, TRAILER_KEY, type ShardOutput } from "./shard.js";
import { trainCorpus, type TrainingSink } from "./tokenize.js";
import type { TrainingOutcome } from "../pool/protocol.js";
import type { CorpusId } from "../corpus/id.js";

export interface RolloutCorpusOptions {
  chatTemplateKwargs: Record<string, unknown> | null;
  parseToolArguments: boolean;
  format: "jsonl" | "binary";
  progress?: boolean | undefined;
  /** Aborting stops between conversations; what was written is a prefix of the full output. */
  signal?: AbortSignal | undefined;
  /** Only this shard's lines (`--shard`), written as tokenize writes a shard (src/cli/shard.ts). */
  shard?: ShardOutput | undefined;
}

export interface RolloutSummary {
  corpus: string;
  out: string;
  format: string;
  conversations: number;
  errors: number;
  errors_by_code: Record<string, number>;
  sequences: number;
  /** How many conversations needed 1, 2, ... sequences ("5+" for five or more). */
  sequences_per_conversation: Record<string, number>;
  splits_by_reason: Record<SplitReason, number>;
  turns: number;
  sampled_turns: number;
  drifted_messages: number;
  /** Turns whose canonical completion is not its prompt's continuation in tokens (X_k encoded alone). */
  out_of_context_completions: number;
  tokens: number;
  masked_tokens: number;
  elapsed_s: number;
  /** Present when a signal stopped the run (the counts above are of the lines done). */
  stopped?: StopReport;
}

function maskBytes(count: number, ranges: ReadonlyArray<readonly [number, number]>): Uint8Array {
  const m = new Uint8Array(count);
  for (const [a, b] of ranges) m.fill(1, a, b);
  return m;
}

/** `deltatok rollout`'s output: JSONL records or the binary file, and the summary's tallies. */
export class RolloutSink implements TrainingSink<RolloutSummary> {
  readonly #jsonl: JsonlWriter | null;
  readonly #bin: BinaryFile | null;
  readonly #shard: ShardOutput | undefined;
  readonly #tokenizer: string;
  readonly s: RolloutSummary;

  constructor(path: string, out: string | undefined, format: "jsonl" | "binary", tokenizer: string, shard: ShardOutput | undefined) {
    this.#jsonl = format === "jsonl" ? new JsonlWriter(out) : null;
    this.#bin = format === "binary" ? new BinaryFile(out as string, "DTROLL02") : null;
    this.#shard = shard;
    this.#tokenizer = tokenizer;
    this.s = {
      corpus: path,
      out: out ?? "-",
      format,
      conversations: 0,
      errors: 0,
      errors_by_code: {},
      sequences: 0,
      sequences_per_conversation: {},
      splits_by_reason: Object.fromEntries(SPLIT_REASONS.map((r) => [r, 0])) as Record<SplitReason, number>,
      turns: 0,
      sampled_turns: 0,
      drifted_messages: 0,
      out_of_context_completions: 0,
      tokens: 0,
      masked_tokens: 0,
      elapsed_s: 0,
    };
  }

  async start(): Promise<void> {
    await this.#bin?.start();
    if (this.#shard !== undefined) {
      await this.#jsonl?.write({ [HEADER_KEY]: this.#shard.header });
      this.#jsonl?.startDigest();
    }
  }

  async add(o: TrainingOutcome): Promise<void> {
    const s = this.s;
    if (o.conversation) s.conversations++;
    const r = o.rollout;
    if (r === undefined) {
      const rec = { id: o.id, line: o.line, error: o.error as ErrorRecord };
      s.errors++;
      s.errors_by_code[rec.error.code] = (s.errors_by_code[rec.error.code] ?? 0) + 1;
      if (this.#jsonl !== null) await this.#jsonl.write(rec);
      else this.#bin?.index.push(rec);
      return;
    }
    const sh = this.#shard;
    const id = o.id as CorpusId;
    tally(s, r);
    const bin = this.#bin;
    if (this.#jsonl !== null) await this.#jsonl.write(sh === undefined ? { id, ...rolloutJson(r) } : { id, ...rolloutJson(r), line: o.line });
    else if (bin !== null) {
      const sequences: Array<Record<string, unknown>> = [];
      for (const q of r.sequences) {
        const offset = await bin.u32(q.ids);
        const maskOffset = await bin.bytes(maskBytes(q.ids.length, q.mask));
        const lpOffset = q.logprobs === null ? null : await bin.f64(q.logprobs);
        sequences.push({ offset, count: q.ids.length, mask_offset: maskOffset, logprobs_offset: lpOffset, turns: q.turns.map(turnJson) });
      }
      const { splits, drift } = rolloutJson({ sequences: [], splits: r.splits, drift: r.drift });
      bin.index.push(sh === undefined ? { id, sequences, splits, drift } : { id, sequences, splits, drift, line: o.line });
    }
  }

  progress(): string {
    return `rollout: ${this.s.conversations} conversations, ${this.s.sequences} sequences, ${this.s.errors} errors`;
  }

  async finish(lines: number, stopped: StopReport | undefined, elapsedSeconds: number): Promise<RolloutSummary> {
    const s = this.s;
    const sh = this.#shard;
    if (stopped !== undefined) s.stopped = stopped;
    s.elapsed_s = round3(elapsedSeconds);
    const trailer = sh === undefined ? undefined : { lines, summary: s, ...(this.#jsonl ?? (this.#bin as BinaryFile)).digest() };
    if (trailer !== undefined) await this.#jsonl?.write({ [TRAILER_KEY]: trailer });
    await this.#jsonl?.close();
    await this.#bin?.finish({
      format: "deltatok-rollouts",
      version: 1,
      tokenizer: this.#tokenizer,
      ...(stopped === undefined ? {} : { stopped }),
      ...(sh === undefined ? {} : { [HEADER_KEY]: sh.header, [TRAILER_KEY]: trailer }),
    });
    return s;
  }
}

export async function rolloutCorpus(dt: Deltatok, path: string, out: string | undefined, o: RolloutCorpusOptions): Promise<RolloutSummary> {
  return trainCorpus(dt, path, "rollout", new RolloutSink(path, out, o.format, dt.options.tokenizer, o.shard), o);
}

function tally(s: RolloutSummary, r: Rollout): void {
  s.sequences += r.sequences.length;
  const bucket = r.sequences.length >= 5 ? "5+" : String(r.sequences.length);
  s.sequences_per_conversation[bucket] = (s.sequences_per_conversation[bucket] ?? 0) + 1;
  for (const sp of r.splits) s.splits_by_reason[sp.reason]++;
  s.drifted_messages += r.drift.length;
  for (const q of r.sequences) {
    s.tokens += q.ids.length;
    for (const [a, b] of q.mask) s.masked_tokens += b - a;
    for (const t of q.turns) {
      s.turns++;
      if (t.sampled) s.sampled_turns++;
      if (!t.inContext) s.out_of_context_completions++;
    }
  }
}
