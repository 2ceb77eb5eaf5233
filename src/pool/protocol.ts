/**
 * What crosses between the main thread and a worker (by structured clone). Kept small: items
 * carry either plain values or the raw JSON text they arrived as (parsed in the worker with the
 * project's Python-faithful parser), results carry counts — ids only for `ids` items, moved
 * rather than copied.
 */
import type { ErrorRecord } from "../errors.js";
import type { SharedTokenizer } from "../load/index.js";
import type { DeltatokOptions, MessageOptions, PromptOptions } from "../api/options.js";
import type { DeltatokStats, TokenizerEngineInfo } from "../api/deltatok.js";
import type { FallbackReason, Outcome } from "../splice/splicer.js";
import type { ReplayItemOptions, ReplayRecord, TrainingItemOptions, TrainingOutcome } from "../corpus/replay.js";

export type { ReplayItemOptions, ReplayRecord, TrainingItemOptions, TrainingOutcome } from "../corpus/replay.js";

export type WireItem =
  | { k: "text"; text: string }
  | { k: "message"; message?: unknown; json?: string; options?: MessageOptions | undefined }
  | { k: "prompt"; messages?: readonly unknown[]; json?: string; options?: PromptOptions | undefined; ids: boolean; trajectory?: boolean; rollout?: boolean }
  | { k: "conversation"; json: string; line: number; replay?: ReplayItemOptions | undefined }
  | { k: "training"; mode: "tokenize" | "rollout"; json: string; line: number; options?: TrainingItemOptions | undefined };

export type WireResult =
  | { ok: true; count: number; reused?: number; outcome?: Outcome; reason?: FallbackReason; ids?: Uint32Array }
  | { ok: true; records: ReplayRecord[]; conversation: boolean }
  | { ok: true; trajectory: Record<string, unknown> }
  | { ok: true; rollout: Record<string, unknown> }
  | { ok: true; training: TrainingOutcome }
  | { ok: false; error: ErrorRecord };

/** Injected faults, for tests and the crash benchmark only. */
export interface TestFaults {
  /** A `text` item with exactly this text makes the worker call process.exit(3). */
  exitText?: string;
  /** A `text` item with exactly this text makes the worker throw an uncaught error. */
  throwText?: string;
  /**
   * A `text` item with exactly this text blocks the first worker that sees it forever
   * (`Int32Array` of 3 over this buffer: [0] is set to 1 when a worker blocks, [2] to its slot
   * + 1); later workers count it.
   */
  blockText?: string;
  blockFlag?: SharedArrayBuffer;
  /**
   * A `text` item whose text, or a `conversation` item whose corpus line, contains this string
   * makes the worker allocate heap until it exceeds its `resourceLimits` and dies of memory
   * (ERR_WORKER_OUT_OF_MEMORY), as a hostile template past every budget would.
   */
  oomMarker?: string;
}

export interface WorkerData {
  options: DeltatokOptions;
  slot: number;
  /** CPU to pin this worker's thread to, or null. */
  cpu: number | null;
  faults: TestFaults | null;
  /** Tokenizer tables the pool built once for its workers (src/pool/tables.ts), or null: load your own. */
  shared: SharedTokenizer | null;
}

export type WorkerTask = { op: "init" } | { op: "batch"; items: WireItem[] } | { op: "stats" } | { op: "clear" };

/** What a worker reports about itself once loaded. */
export interface WorkerInfo {
  slot: number;
  /** Node's worker threadId. */
  threadId: number;
  /** The kernel thread id (Linux), or null. */
  tid: number | null;
  /** The CPU the thread was pinned to, or null. */
  cpu: number | null;
  /** Why pinning was asked for and not done. */
  pinError?: string;
  /** Milliseconds to create the worker's Deltatok (tokenizer + templates). */
  loadMs: number;
  /** Milliseconds of the warm-up (a short text and a tiny prompt). */
  warmupMs: number;
  /** "shared": attached to the pool's shared tables; "own": loaded tokenizer.json itself. */
  tables: "shared" | "own";
  /** What encodes text in this worker (Deltatok.tokenizerEngine). */
  tokenizerEngine: TokenizerEngineInfo;
}

/** A worker isolate's V8 heap. */
export interface WorkerHeap {
  usedBytes: number;
  totalBytes: number;
  /** The heap's limit (V8 heap_size_limit: the old-generation limit plus the young generation). */
  limitBytes: number;
}

export type WorkerReply =
  | { op: "init"; info: WorkerInfo }
  | { op: "batch"; results: WireResult[] }
  | { op: "stats"; stats: DeltatokStats; heap: WorkerHeap }
  | { op: "clear" }
  /** The worker's Deltatok did not load: nothing it was sent was attempted. */
  | { op: "failed"; error: ErrorRecord };
