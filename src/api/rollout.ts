/**
 * RL rollouts, token in and token out: the training sequences a multi-turn rollout really gave
 * the model, built from the prompt the server tokenized at each turn and the completion ids it
 * sampled.
 *
 * For each assistant message k, in order: P_k is request k's prompt ids (messages[:k] with the
 * generation prompt, exactly the ISL ids) and C_k the completion — the message's `sampled_ids`
 * when it carries them, else its canonical tokens (below). A current sequence S is kept: when S
 * is a token prefix of P_k, S is extended with the rest of P_k (mask 0) and then C_k (mask 1);
 * otherwise S is closed and a new sequence starts with P_k and C_k. Each split says where S and
 * P_k first differ and why, in terms a trainer can act on.
 *
 * Canonical completion. R_k = render(messages[:k+1]) without the generation prompt is the
 * conversation with message k as its last turn. Its text continues P_k's text at h = the length
 * of their common prefix (h is all of P_k unless the generation prompt differs from how the
 * template renders that turn), and the completion text X_k = R_k[h:e] runs through e, the end of
 * the last special token in R_k past h (the end-of-turn token the model emits; what the template
 * renders after it is not part of the completion). C_k = the ids of R_k[:e] past P_k's ids when
 * those ids start with all of P_k's (the completion tokenized as in context); otherwise the ids
 * of X_k encoded on its own, and the turn says so (`in_context: false`).
 *
 * Drift. For a message with `sampled_ids`: whether they equal the canonical ids (else the first
 * differing index and both sides decoded) and whether they decode to X_k.
 *
 * The algorithm runs against a RolloutHost: the cache-backed host costs what each turn appended
 * (api/rollout-host.ts); the reference host renders and encodes everything whole. Both give the
 * same rollout, which the property tests check.
 */
import { DeltatokError } from "../errors.js";

/** One assistant turn inside a sequence. */
export interface RolloutTurn {
  /** Index of the assistant message in the conversation. */
  index: number;
  /** Length of P_k: `ids[:prompt_tokens]` is exactly what the server tokenized for request k. */
  promptTokens: number;
  /** Token range [start, end) of the completion C_k. */
  completion: [number, number];
  /** Whether C_k came from the message's `sampled_ids`. */
  sampled: boolean;
  /** Whether the canonical completion is R_k's own tokenization past P_k (false: X_k encoded alone). */
  inContext: boolean;
}

export interface RolloutSequence {
  ids: Uint32Array;
  /** Token ranges [start, end) with mask 1 (the completions). */
  mask: Array<[number, number]>;
  /** Per token: the sampled logprob, NaN where none (prompt tokens, completions without logprobs). null when no turn carried logprobs. */
  logprobs: Float32Array | null;
  turns: RolloutTurn[];
}

export type SplitReason =
  /** an earlier message renders differently in P_k than it did before (e.g. reasoning dropped from history) */
  | "history_rewritten"
  /** the generation prompt of the previous request is not how the template renders that turn in P_k */
  | "generation_prompt_changed"
  /** the previous completion's text is not how P_k renders that message (e.g. another end-of-turn token) */
  | "completion_rendered_differently"
  /** same text through the previous completion, other ids: sampled ids that are not the canonical tokenization, or tokens merging across the join */
  | "completion_retokenized"
  /** the same text before the previous completion, other ids */
  | "prompt_retokenized"
  /** P_k is a strict prefix of the sequence (the new prompt is shorter than what the sequence holds) */
  | "prompt_shorter";

export const SPLIT_REASONS: readonly SplitReason[] = [
  "history_rewritten",
  "generation_prompt_changed",
  "completion_rendered_differently",
  "completion_retokenized",
  "prompt_retokenized",
  "prompt_shorter",
];

export interface RolloutSplit {
  /** The assistant message whose prompt P_k did not extend the sequence. */
  index: number;
  /** First token index where the sequence and P_k differ. */
  at: number;
  reason: SplitReason;
  /** The message whose rendering changed, when the reason names one. */
  message?: number;
  /** Decoded tokens around `at`: what the sequence held, and what P_k holds. */
  context: { sequence: string; prompt: string };
}

export interface RolloutDrift {
  /** The assistant message whose sampled ids are not its canonical tokens. */
  index: number;
  /** First index (within the completion) where sampled and canonical ids differ. */
  at: number;
  sampledTokens: number;
  canonicalTokens: number;
  /** Decoded ids around `at`, both sides. */
  sampled: string;
  canonical: string;
  /** Whether the sampled ids decode to the text the template renders for the message (X_k). */
  decodesToRender: boolean;
}

export interface Rollout {
  sequences: RolloutSequence[];
  splits: RolloutSplit[];
  drift: RolloutDrift[];
}

/** Request k's prompt ids as the host produced them. */
export interface PromptTurn {
  readonly count: number;
  /**
   * Leading ids known to equal the current sequence's without comparing them (0: unknown). The
   * sequence is P_prev + C_prev after the previous turn, whether it was extended or started anew.
   */
  readonly knownPrefix: number;
  /** ids [from, to) of P_k; valid until the next host call. */
  slice(from: number, to?: number): Uint32Array;
}

export interface PromptTexts {
  readonly previousLength: number;
  /** Characters the previous and the current prompt's texts share at their start. */
  readonly shared: number;
  previous(from: number, to: number): string;
  current(from: number, to: number): string;
}

/** The canonical completion of message k (see the file header). */
export interface CompletionTurn {
  /** X_k: the completion text. */
  readonly text: string;
  readonly ids: Uint32Array;
  readonly inContext: boolean;
  /** h: where X_k starts in R_k (all of P_k's text unless the generation prompt was not kept). */
  readonly start: number;
}

export interface RolloutHost {
  /** P_k (called once per assistant message, in order). */
  prompt(k: number): PromptTurn;
  /** The canonical completion of message k; called right after prompt(k), with the sampled ids the sequence will hold (if any). */
  completion(k: number, turn: PromptTurn, sampled: Uint32Array | null): CompletionTurn;
  /**
   * Split diagnosis: the texts of the previous prompt and of the current one (the last two
   * prompt() calls), and the length of their common prefix.
   */
  promptTexts(): PromptTexts;
  /** Where the template began rendering each message in P_k's text (-1: never), split diagnosis only. */
  messageStarts(k: number): readonly number[];
  /** The generation prompt text of this request's template and kwargs. */
  generationPrompt(): string;
  decode(ids: ArrayLike<number>): string;
}

/** A message's sampled completion, validated. */
export interface Sampled {
  ids: Uint32Array;
  logprobs: Float64Array | null;
}

/**
 * Reads and validates `sampled_ids` / `sampled_logprobs` of every assistant message. Throws
 * DT_INVALID_SAMPLED_IDS (with the path) for ids that are not integers of the vocabulary, for
 * logprobs that are not finite-or-minus-infinity numbers, for unequal lengths, or for sampled
 * fields on a message that is not an assistant message.
 */
export function readSampled(messages: readonly unknown[], inVocabulary: (id: number) => boolean): Array<Sampled | null> {
  const out = new Array<Sampled | null>(messages.length).fill(null);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (typeof m !== "object" || m === null) continue;
    let ids: unknown;
    let lps: unknown;
    let role: unknown;
    try {
      ids = (m as Record<string, unknown>).sampled_ids;
      lps = (m as Record<string, unknown>).sampled_logprobs;
      role = (m as Record<string, unknown>).role;
    } catch (e) {
      throw new DeltatokError("DT_INVALID_MESSAGE", `messages[${i}] could not be read: ${(e as Error)?.message ?? e}`, { path: `messages[${i}]`, cause: e });
    }
    const path = `messages[${i}]`;
    if (ids === undefined || ids === null) {
      if (lps !== undefined && lps !== null) throw sampledError(`${path}.sampled_logprobs`, "is given without sampled_ids");
      continue;
    }
    if (role !== "assistant") throw sampledError(`${path}.sampled_ids`, `is only meaningful on assistant messages (role ${JSON.stringify(role)})`);
    if (!Array.isArray(ids)) throw sampledError(`${path}.sampled_ids`, "must be a list of token ids");
    const arr = new Uint32Array(ids.length);
    for (let j = 0; j < ids.length; j++) {
      const v: unknown = ids[j];
      if (typeof v !== "number" || !Number.isInteger(v)) throw sampledError(`${path}.sampled_ids[${j}]`, `must be an integer token id, got ${describeValue(v)}`);
      if (v < 0 || v > 0xffffffff || !inVocabulary(v)) throw sampledError(`${path}.sampled_ids[${j}]`, `${v} is not a token id of this tokenizer`);
      arr[j] = v;
    }
    let logprobs: Float64Array | null = null;
    if (lps !== undefined && lps !== null) {
      if (!Array.isArray(lps)) throw sampledError(`${path}.sampled_logprobs`, "must be a list of numbers");
      if (lps.length !== ids.length) throw sampledError(`${path}.sampled_logprobs`, `has ${lps.length} entries for ${ids.length} sampled ids`);
      logprobs = new Float64Array(lps.length);
      for (let j = 0; j < lps.length; j++) {
        const v: unknown = lps[j];
        if (typeof v !== "number" || Number.isNaN(v) || v === Infinity) {
          throw sampledError(`${path}.sampled_logprobs[${j}]`, `must be a number (a log-probability), got ${describeValue(v)}`);
        }
        logprobs[j] = v;
      }
    }
    out[i] = { ids: arr, logprobs };
  }
  return out;
}

function sampledError(path: string, what: string): DeltatokError {
  return new DeltatokError("DT_INVALID_SAMPLED_IDS", `${path} ${what}`, { path });
}

function describeValue(v: unknown): string {
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 20 ? v.slice(0, 20) + "…" : v)}`;
  return v === null ? "null" : typeof v;
}

/**
 * The messages as the server rendered them: without `sampled_ids` / `sampled_logprobs` (copied
 * once per rollout, so every turn slices the same objects).
 */
export function withoutSampled(messages: readonly unknown[], sampled: ReadonlyArray<Sampled | null>): unknown[] {
  return messages.map((m, i) => {
    if (typeof m !== "object" || m === null || Array.isArray(m)) return m;
    const rec = m as Record<string, unknown>;
    if (sampled[i] === null && !Object.hasOwn(rec, "sampled_ids") && !Object.hasOwn(rec, "sampled_logprobs")) return m;
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(rec)) if (key !== "sampled_ids" && key !== "sampled_logprobs") copy[key] = rec[key];
    return copy;
  });
}

/** A growable sequence being built. */
class SequenceBuilder {
  ids: Uint32Array;
  length = 0;
  logprobs: Float32Array | null = null;
  readonly mask: Array<[number, number]> = [];
  readonly turns: RolloutTurn[] = [];

  /** `capacity`: the first prompt's length; room for a completion or two more is added. */
  constructor(capacity: number) {
    this.ids = new Uint32Array(capacity + Math.max(256, capacity >> 3));
  }

  push(src: Uint32Array): void {
    this.#reserve(this.length + src.length);
    this.ids.set(src, this.length);
    this.length += src.length;
  }

  pushLogprobs(start: number, lps: Float64Array | null): void {
    if (lps === null) return;
    if (this.logprobs === null) this.logprobs = new Float32Array(this.ids.length).fill(Number.NaN);
    this.#reserve(start + lps.length);
    const lp = this.logprobs as Float32Array;
    for (let j = 0; j < lps.length; j++) lp[start + j] = lps[j] as number;
  }

  finish(): RolloutSequence {
    // a view when the slack is small (one turn's sequence, the common case), else a tight copy
    const tight = this.ids.length - this.length > (this.length >> 2) + 1024;
    const ids = tight ? this.ids.slice(0, this.length) : this.ids.subarray(0, this.length);
    const logprobs = this.logprobs === null ? null : tight ? this.logprobs.slice(0, this.length) : this.logprobs.subarray(0, this.length);
    return { ids, mask: this.mask, logprobs, turns: this.turns };
  }

  #reserve(n: number): void {
    if (n <= this.ids.length) return;
    let cap = this.ids.length * 2;
    while (cap < n) cap *= 2;
    const ids = new Uint32Array(cap);
    ids.set(this.ids.subarray(0, this.length));
    this.ids = ids;
    if (this.logprobs !== null) {
      const lp = new Float32Array(cap).fill(Number.NaN);
      lp.set(this.logprobs.subarray(0, this.length));
      this.logprobs = lp;
    }
  }
}

/** Index of the first difference of a[from:] and b[from:] up to `to`, or `to`. */
function firstDifference(a: Uint32Array, b: Uint32Array, from: number, to: number): number {
  for (let i = from; i < to; i++) if (a[i] !== b[i]) return i;
  return to;
}

const CONTEXT_TOKENS = 8;

function around(host: RolloutHost, ids: Uint32Array, at: number): string {
  return host.decode(ids.subarray(Math.max(0, at - CONTEXT_TOKENS), Math.min(ids.length, at + CONTEXT_TOKENS)));
}

/** Length of the common prefix of two strings. */
function commonChars(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** What the builder remembers of the last turn of the current sequence, for split diagnosis. */
interface LastTurn {
  index: number;
  promptTokens: number;
  completion: [number, number];
  /** The completion's text as the sequence holds it (decoded when sampled, X_k otherwise). */
  text: string;
}

/**
 * Builds the rollout of one conversation. `sampled[k]` is message k's validated sample (or null);
 * `assistant` lists the assistant message indices in order.
 */
export function buildRollout(host: RolloutHost, assistant: readonly number[], sampled: ReadonlyArray<Sampled | null>): Rollout {
  const sequences: RolloutSequence[] = [];
  const splits: RolloutSplit[] = [];
  const drift: RolloutDrift[] = [];
  let seq: SequenceBuilder | null = null;
  let last: LastTurn | null = null;
  for (const k of assistant) {
    const p = host.prompt(k);
    let extend = false;
    if (seq !== null && last !== null) {
      // Known equal without comparing: what the host knows P_k shares with the sequence.
      const known = Math.min(p.knownPrefix, seq.length);
      const upTo = Math.min(seq.length, p.count);
      const tail = p.slice(known, upTo);
      let at = upTo;
      for (let i = 0; i < tail.length; i++) {
        if (seq.ids[known + i] !== tail[i]) {
          at = known + i;
          break;
        }
      }
      if (at === upTo && seq.length <= p.count) extend = true;
      else splits.push(diagnose(host, k, p, seq, last, at));
    }
    if (!extend) {
      if (seq !== null) sequences.push(seq.finish());
      seq = new SequenceBuilder(p.count);
      seq.push(p.slice(0, p.count));
    } else {
      const s = seq as SequenceBuilder;
      s.push(p.slice(s.length, p.count));
    }
    const s = seq as SequenceBuilder;
    const sample = sampled[k] ?? null;
    const canon = host.completion(k, p, sample?.ids ?? null);
    const c = sample !== null ? sample.ids : canon.ids;
    const start = s.length;
    s.push(c);
    s.pushLogprobs(start, sample?.logprobs ?? null);
    if (c.length > 0) {
      const prev = s.mask[s.mask.length - 1];
      if (prev !== undefined && prev[1] === start) prev[1] = start + c.length;
      else s.mask.push([start, start + c.length]);
    }
    s.turns.push({ index: k, promptTokens: p.count, completion: [start, start + c.length], sampled: sample !== null, inContext: canon.inContext });
    let text = canon.text;
    if (sample !== null) {
      const d = firstDifference(sample.ids, canon.ids, 0, Math.min(sample.ids.length, canon.ids.length));
      const same = d === sample.ids.length && d === canon.ids.length;
      if (!same) {
        // the sequence holds the sampled ids: their text is what the next prompt is compared with
        const decoded = host.decode(sample.ids);
        text = decoded;
        drift.push({
          index: k,
          at: d,
          sampledTokens: sample.ids.length,
          canonicalTokens: canon.ids.length,
          sampled: around(host, sample.ids, d),
          canonical: around(host, canon.ids, d),
          decodesToRender: decoded === canon.text,
        });
      }
    }
    last = { index: k, promptTokens: p.count, completion: [start, start + c.length], text };
  }
  if (seq !== null) sequences.push(seq.finish());
  return { sequences, splits, drift };
}

/**
 * Why P_k does not extend the sequence at token `at`. Text-level first: where P_k's text and the
 * sequence's text (P_prev's text, then the completion's) part, relative to the previous turn's
 * generation prompt and completion; equal text means the same characters were tokenized
 * differently.
 */
function diagnose(host: RolloutHost, k: number, p: PromptTurn, seq: SequenceBuilder, last: LastTurn, at: number): RolloutSplit {
  const seqIds = seq.ids.subarray(0, seq.length);
  const promptIds = p.slice(0, p.count);
  const context = { sequence: around(host, seqIds, at), prompt: around(host, promptIds, at) };
  if (at >= p.count) return { index: k, at, reason: "prompt_shorter", context };
  // d: where P_k's text leaves the sequence's text, P_prev's text then the completion's
  const t = host.promptTexts();
  const head = t.previousLength;
  const d = t.shared < head ? t.shared : head + commonChars(last.text, t.current(head, head + last.text.length));
  let reason: SplitReason;
  let message: number | undefined;
  if (d >= head + last.text.length) reason = at >= last.completion[0] ? "completion_retokenized" : "prompt_retokenized";
  else if (d >= head) reason = "completion_rendered_differently";
  else {
    const g = host.generationPrompt();
    const n = t.previousLength;
    const genStart = g.length > 0 && n >= g.length && t.previous(n - g.length, n) === g ? n - g.length : n;
    if (d >= genStart) reason = "generation_prompt_changed";
    else {
      reason = "history_rewritten";
      const starts = host.messageStarts(k);
      let best = -1;
      for (let i = 0; i < starts.length; i++) {
        const s = starts[i] as number;
        if (s >= 0 && s <= d && (best < 0 || s >= (starts[best] as number))) best = i;
      }
      if (best >= 0) message = best;
    }
  }
  const split: RolloutSplit = { index: k, at, reason, context };
  if (message !== undefined) split.message = message;
  return split;
}

/** JSON form of a rollout (the CLI's JSONL records and the sidecar's answer). NaN logprobs are null. */
export function rolloutJson(r: Rollout): Record<string, unknown> {
  return {
    sequences: r.sequences.map((s) => ({
      ids: Array.from(s.ids),
      mask: s.mask,
      logprobs: s.logprobs === null ? null : Array.from(s.logprobs, (x) => (Number.isNaN(x) ? null : x)),
      turns: s.turns.map(turnJson),
    })),
    splits: r.splits,
    drift: r.drift.map((d) => ({
      index: d.index,
      at: d.at,
      sampled_tokens: d.sampledTokens,
      canonical_tokens: d.canonicalTokens,
      sampled: d.sampled,
      canonical: d.canonical,
      decodes_to_render: d.decodesToRender,
    })),
  };
}

export function turnJson(t: RolloutTurn): Record<string, unknown> {
  return { index: t.index, prompt_tokens: t.promptTokens, completion: t.completion, sampled: t.sampled, in_context: t.inContext };
}
