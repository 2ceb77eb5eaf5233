/**
 * A sidecar backend answering through the worker pool and batch queue. Prompt and message
 * requests travel as JSON text and are parsed in the worker with the Python-faithful parser, so
 * the main thread only skims envelopes and values keep their Python types (integral floats, key
 * order) across the thread boundary.
 */
import { DeltatokError, toDeltatokError, type ErrorRecord } from "../errors.js";
import { MESSAGE_OPTION_NAMES, type DeltatokOptions } from "../api/options.js";
import { dumps, snakeKeys } from "../json/index.js";
import { DeltatokPool } from "../pool/pool.js";
import { eachMember, topLevelRaw } from "../json/skim.js";
import { BatchQueue } from "../queue/queue.js";
import type { QueueItem, QueueResult } from "../queue/types.js";
import { VERSION } from "../package-info.js";
import { Deltatok } from "../api/deltatok.js";
import { TOKENIZER_METHODS, checkParam, encodeBatchOptions, encodeBatchResult, messageOptions, tokenizerCall, type Backend, type Method, type RawMethod, type TokenizerMethod } from "./protocol.js";
import { IdsDelta } from "./ids-delta.js";
import { encodeIds, idList } from "./in-process.js";

type Call = Exclude<Method, "batch">;

function smallJson(raw: string | null): unknown {
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new DeltatokError("DT_INVALID_JSON", "params are not valid JSON");
  }
}

function toResult(r: QueueResult): unknown {
  if (!r.ok) throw new DeltatokError(r.error.code, r.error.message, r.error.path === undefined ? {} : { path: r.error.path });
  switch (r.kind) {
    case "text":
    case "message":
      return { count: r.count };
    case "prompt":
      return { count: r.count, reused: r.reused, outcome: r.outcome, ...(r.reason === undefined ? {} : { reason: r.reason }) };
    case "ids":
      return { ids: idList(r.ids), count: r.count, reused: r.reused, outcome: r.outcome, ...(r.reason === undefined ? {} : { reason: r.reason }) };
    case "trajectory":
      return r.trajectory;
    case "rollout":
      return r.rollout;
    default:
      throw new DeltatokError("DT_INTERNAL", `unexpected result kind ${r.kind}`);
  }
}

export class PoolBackend implements Backend {
  readonly #pool: DeltatokPool;
  readonly #queue: BatchQueue;
  /** The options of every worker's Deltatok, and of the one on this thread. */
  readonly #deltatok: DeltatokOptions;
  /** One Deltatok on this thread for the tokenizer methods (decode, vocab, ...), made on first use. */
  #tokenizer: Promise<Deltatok> | null = null;
  readonly #delta = new IdsDelta();
  #closed = false;

  private constructor(pool: DeltatokPool, queue: BatchQueue, deltatok: DeltatokOptions) {
    this.#pool = pool;
    this.#queue = queue;
    this.#deltatok = deltatok;
  }

  static async create(deltatok: DeltatokOptions, workers: number): Promise<PoolBackend> {
    const pool = await DeltatokPool.create({ deltatok, workers });
    // a short live-lane interval: a sidecar answers as it goes, batches stay small
    const queue = await BatchQueue.create({ pool, intervalMs: 1, batchItems: 16 });
    return new PoolBackend(pool, queue, deltatok);
  }

  #run(item: QueueItem, ids?: Record<string, unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      try {
        this.#queue.enqueue(item, (r) => {
          try {
            if (ids !== undefined && r.ok && r.kind === "ids") {
              const out = toResult(r) as Record<string, unknown>;
              let tail = r.ids;
              if (IdsDelta.wanted(ids)) {
                // ids_delta: against the ids this server answered for the prefix state
                // (the result's ids are this server's own copy: they crossed from the worker)
                const d = this.#delta.apply(ids, r.ids);
                out.ids_from = d.from;
                tail = d.tail;
              }
              out.ids = encodeIds(tail, ids);
              resolve(out);
              return;
            }
            resolve(toResult(r));
          } catch (e) {
            reject(e);
          }
        });
      } catch (e) {
        reject(e);
      }
    });
  }

  /** An item for a call whose params are still JSON text (parsed in the worker); `delta` gets what ids_delta needs. */
  #rawItem(method: Call, paramsRaw: string, delta?: Record<string, unknown>): QueueItem | null {
    if (method === "count_prompt" || method === "encode_prompt" || method === "tokenize_trajectory" || method === "tokenize_rollout") {
      // one skim of the body's top level: the conversation id, and whether it names a state
      let cidRaw: string | null = null;
      let stateful = false;
      eachMember(paramsRaw, 0, (m) => {
        checkParam(method, m.key);
        if (m.key === "conversation_id") cidRaw = paramsRaw.slice(m.start, m.end);
        else if (m.key === "prefix" || m.key === "state") stateful = true;
        if (delta !== undefined && (m.key === "prefix" || m.key === "state" || m.key === "ids_delta" || m.key === "conversation_id" || m.key === "ids_encoding")) {
          delta[m.key] = smallJson(paramsRaw.slice(m.start, m.end));
        }
        return true;
      });
      const cid = smallJson(cidRaw);
      const kind = method === "count_prompt" ? "prompt" : method === "encode_prompt" ? "ids" : method === "tokenize_trajectory" ? "trajectory" : "rollout";
      const item: QueueItem = { kind, json: paramsRaw };
      if (typeof cid === "string" || typeof cid === "number") {
        item.conversationId = String(cid);
        // a prefix refers to, and a state updates, what this conversation's worker holds
        if (stateful) item.sticky = true;
      }
      return item;
    }
    if (method === "count_message") {
      eachMember(paramsRaw, 0, (m) => {
        checkParam(method, m.key);
        return true;
      });
      const message = topLevelRaw(paramsRaw, "message");
      if (message === null) return null;
      const opts: Record<string, unknown> = {};
      for (const k of MESSAGE_OPTION_NAMES) {
        const v = smallJson(topLevelRaw(paramsRaw, k));
        if (v !== undefined) opts[k] = v;
      }
      return { kind: "message", json: message, options: messageOptions(opts) };
    }
    return null;
  }

  #item(method: Call, p: Record<string, unknown>): QueueItem | null {
    switch (method) {
      case "count_prompt":
      case "encode_prompt":
      case "tokenize_trajectory":
      case "tokenize_rollout":
        // re-serialized with Python semantics so floats and key order survive the thread hop
        return this.#rawItem(method, dumps(p, { ensure_ascii: false }));
      case "count_message": {
        const item: QueueItem = { kind: "message", json: dumps(p.message ?? null, { ensure_ascii: false }), options: messageOptions(p) };
        return item;
      }
      case "count_text":
        return { kind: "text", text: p.text as string };
      default:
        return null;
    }
  }

  async #tokenizerCall(method: TokenizerMethod, params: Record<string, unknown>): Promise<unknown> {
    this.#tokenizer ??= Deltatok.create(this.#deltatok);
    return tokenizerCall(await this.#tokenizer, method, params);
  }

  async #local(method: Call): Promise<unknown> {
    if (method === "stats") return snakeKeys((await this.#pool.stats()).total);
    if (method === "health") {
      return { status: "ok", version: VERSION, tokenizer: this.#deltatok.tokenizer ?? "qwen3", mode: this.#deltatok.mode ?? "incremental", workers: this.#pool.size };
    }
    throw new DeltatokError("DT_UNKNOWN_METHOD", `unknown method ${method}`);
  }

  async call(method: Call, params: Record<string, unknown>): Promise<unknown> {
    if (this.#closed) throw new DeltatokError("DT_CLOSED", "the server is shutting down");
    if (TOKENIZER_METHODS.has(method)) return this.#tokenizerCall(method as TokenizerMethod, params);
    if (method === "encode_batch") {
      // spread over every worker (chunks taken as workers free up), answered whole
      return encodeBatchResult(await this.#pool.encodeTexts(params.texts as string[], encodeBatchOptions(params)), params);
    }
    const item = this.#item(method, params);
    const ids = method === "encode_prompt" && (IdsDelta.wanted(params) || params.ids_encoding !== undefined) ? params : undefined;
    return item === null ? this.#local(method) : this.#run(item, ids);
  }

  async callRaw(method: RawMethod, paramsRaw: string): Promise<unknown> {
    if (this.#closed) throw new DeltatokError("DT_CLOSED", "the server is shutting down");
    const delta: Record<string, unknown> | undefined = method === "encode_prompt" ? {} : undefined;
    const item = this.#rawItem(method, paramsRaw, delta);
    if (item === null) throw new DeltatokError("DT_INVALID_REQUEST", "params.message is missing", { path: "params.message" });
    return this.#run(item, delta !== undefined && (IdsDelta.wanted(delta) || delta.ids_encoding !== undefined) ? delta : undefined);
  }

  async callMany(calls: Array<{ method: Call; params: Record<string, unknown> }>): Promise<Array<{ result: unknown } | { error: ErrorRecord }>> {
    return Promise.all(
      calls.map((c) =>
        this.call(c.method, c.params).then(
          (result) => ({ result }),
          (e: unknown) => ({ error: toDeltatokError(e).toJSON() }),
        ),
      ),
    );
  }

  async close(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // items still pending at the timeout are answered DT_DRAIN_TIMEOUT by the queue
    await this.#queue.drain(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
    await this.#queue.close();
    await this.#pool.close();
  }
}
