/**
 * Public types of the batch queue.
 */
import type { ErrorRecord } from "../errors.js";
import type { MessageOptions, PromptOptions } from "../api/options.js";
import type { FallbackReason, Outcome } from "../splice/splicer.js";
import type { ReplayItemOptions, ReplayRecord } from "../pool/protocol.js";
import type { BatchRunner, PoolOptions } from "../pool/pool.js";
import type { RouterStats } from "../pool/router.js";

/** OSL of plain text: tokens of `text` (add_special_tokens=False). */
export interface TextItem {
  kind: "text";
  text: string;
}

/** OSL of a structured assistant message, given as a value or as its JSON text. */
export type MessageItem =
  | { kind: "message"; message: unknown; options?: MessageOptions }
  | { kind: "message"; json: string; options?: MessageOptions };

/**
 * ISL of a prompt (`prompt`), its token ids too (`ids`), or the whole RL trajectory
 * (`trajectory`: ids, message spans, assistant mask; add_generation_prompt defaults to false). Either `messages` (+ `options`), or
 * `json`: the request body as JSON text — an object `{"messages": [...]}` plus any prompt option
 * (api/options.ts `PROMPT_OPTION_NAMES`: "tools", "documents", "add_generation_prompt", ...) —
 * or a bare array of messages — parsed in the worker (Python-faithful); `options` then apply on
 * top of the body's fields.
 *
 * `conversationId` pins the item to its conversation's worker. Without it the conversation is
 * recognized by its tools and leading messages (every message up to and including the first
 * that is not system/developer), so turns of one conversation meet again while conversations
 * that only share a system prompt still spread.
 *
 * `sticky` (with `conversationId`) says the item relies on state its conversation's worker holds
 * (a conversation prefix, src/api/conversations.ts): it is never stolen by an idle worker, and
 * its conversation is not moved off a healthy owner, since the state would not follow it.
 */
export type PromptItem =
  | { kind: "prompt" | "ids" | "trajectory" | "rollout"; messages: readonly unknown[]; options?: PromptOptions; conversationId?: string; sticky?: boolean }
  | { kind: "prompt" | "ids" | "trajectory" | "rollout"; json: string; options?: PromptOptions; conversationId?: string; sticky?: boolean };

/**
 * Every request of one corpus line (`{"id", "messages", "tools"?, "chat_template_kwargs"?}`),
 * as `deltatok replay` computes them. Routed by `conversationId` (the CLI passes a key of the
 * line id). The records' `id` is the line's id as sent: a string, or `{number: text}` for a JSON
 * number (`CorpusId`, src/corpus/id.ts), which a writer puts back as that text.
 */
export interface ConversationItem {
  kind: "conversation";
  json: string;
  /** 1-based line number, reported in error records. @defaultValue 0 */
  line?: number;
  replay?: ReplayItemOptions;
  conversationId?: string;
}

export type QueueItem = TextItem | MessageItem | PromptItem | ConversationItem;
export type ItemKind = QueueItem["kind"];

export type QueueResult =
  | { ok: true; kind: "text" | "message"; count: number; worker: number }
  | { ok: true; kind: "prompt"; count: number; reused: number; outcome: Outcome; reason?: FallbackReason; worker: number }
  | { ok: true; kind: "ids"; count: number; ids: Uint32Array; reused: number; outcome: Outcome; reason?: FallbackReason; worker: number }
  | { ok: true; kind: "conversation"; records: ReplayRecord[]; conversation: boolean; worker: number }
  /** An RL trajectory (ids, message spans, assistant mask ranges): api/trajectory.ts `trajectoryJson`. */
  | { ok: true; kind: "trajectory"; trajectory: Record<string, unknown>; worker: number }
  /** An RL rollout (sequences, splits, drift): api/rollout.ts `rolloutJson`. */
  | { ok: true; kind: "rollout"; rollout: Record<string, unknown>; worker: number }
  /**
   * The item was not answered with a count. Input errors carry the Deltatok's code (and path);
   * infrastructure failures are DT_WORKER_CRASHED, DT_WORKER_OUT_OF_MEMORY (the item took a
   * worker past its heap limit twice, the second time alone), DT_WORKER_STARTUP,
   * DT_DRAIN_TIMEOUT or DT_CLOSED. `worker` is the slot that produced the error, or null when
   * no worker did.
   */
  | { ok: false; kind: ItemKind; error: ErrorRecord; worker: number | null };

export type ResultCallback = (result: QueueResult) => void;

/** A clock (tests inject a fake one). Times in ms. */
export interface QueueClock {
  now(): number;
  /** A timer that keeps the process alive until it fires or is cleared. */
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Lets the process exit while this timer waits (optional). */
  unref?(handle: unknown): void;
}

/** Options of {@link BatchQueue.create}. */
export interface BatchQueueOptions {
  /** Pool to run on. When absent the queue creates (and on close, closes) its own from `poolOptions`. */
  pool?: BatchRunner;
  /** Options of the pool the queue creates when no `pool` is given. */
  poolOptions?: PoolOptions;
  /**
   * Most items held at once (queued + in flight). `enqueue` throws DT_QUEUE_FULL beyond it.
   * The queue's own cost is ~150 bytes per item; the items themselves are the caller's.
   * @defaultValue 1000000
   */
  maxItems?: number;
  /** Most items in one batch. @defaultValue 64 */
  batchItems?: number;
  /**
   * Most characters in one batch (texts, JSON texts; structured items are estimated), so one
   * batch's clone and result stay bounded. A batch always takes at least one item.
   * @defaultValue 2000000
   */
  batchChars?: number;
  /**
   * Live lane: every `intervalMs`, queued items are sent in bounded batches to workers with
   * room; between ticks, a worker that finishes a batch takes the next full one. 0 turns the
   * live lane off: everything waits for `drain()`.
   * @defaultValue 50
   */
  intervalMs?: number;
  /** Batches in flight per worker (the next one waits in the worker's port). @defaultValue 2 */
  maxInFlightPerWorker?: number;
  /** Interval of `progress` events during a drain, in ms. @defaultValue 2000 */
  progressIntervalMs?: number;
  /** Called with each progress event (besides the `progress` event). */
  onProgress?: (p: DrainProgress) => void;
  /**
   * How long `close()` waits for batches in flight before answering their items DT_CLOSED, in ms.
   * @defaultValue 30000
   */
  closeTimeoutMs?: number;
  /**
   * How far behind the lightest worker (in estimated characters of queued + in-flight work) a
   * worker may fall before its live conversations are moved off it and an idle worker takes
   * part of its backlog. Smaller balances sooner and loses cache affinity more often.
   * @defaultValue 2000000
   */
  rebalanceChars?: number;
  /** Conversations whose worker is remembered for affinity. @defaultValue 100000 */
  maxTrackedConversations?: number;
  /** Clock for intervals and timeouts. @defaultValue performance.now + unref'd timers */
  clock?: QueueClock;
}

export interface DrainOptions {
  /** Give up after this many ms: what is left is answered DT_DRAIN_TIMEOUT and counted pending. @defaultValue Infinity */
  timeoutMs?: number;
  /** Aborting ends the drain the same way (items answered DT_CLOSED, counted pending). */
  signal?: AbortSignal;
}

/** The one final state of a drain (MLCommons endpoints' contract). */
export interface DrainResult {
  /** Always "complete": a drain ends; `pending > 0` says it timed out, was aborted or failed. */
  state: "complete";
  /** Items this drain could not answer with a count (timed out, aborted, crashed or out of memory twice). */
  pending: number;
  /** Items answered during the drain (counts and per-item input errors). */
  done: number;
  /** Why it ended. */
  reason: "drained" | "timeout" | "aborted" | "closed";
  elapsedMs: number;
}

export interface DrainProgress {
  /** Items answered since the drain began. */
  done: number;
  /** Items not yet answered. */
  pending: number;
  /** Items per second since the drain began. */
  rate: number;
  elapsedMs: number;
  /** Items in batches on workers. */
  inFlight: number;
}

export interface QueueStats {
  enqueued: number;
  /** Items answered (any result). */
  answered: number;
  ok: number;
  /** Answered with a per-item input error. */
  itemErrors: number;
  /** Answered with an infrastructure error (DT_WORKER_CRASHED, DT_WORKER_OUT_OF_MEMORY, DT_DRAIN_TIMEOUT, DT_CLOSED, ...). */
  failed: number;
  /** Items sent again after their batch failed. */
  retried: number;
  /** Batches that failed as a whole (worker died). */
  batchFailures: number;
  batches: number;
  /** Items taken by an idle worker from another worker's backlog. */
  stolen: number;
  queued: number;
  inFlight: number;
  routing: RouterStats;
  /** onResult callbacks that threw (the error is emitted as `callbackError`). */
  callbackErrors: number;
}
