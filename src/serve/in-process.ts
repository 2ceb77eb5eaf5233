/** A sidecar backend answering on the calling thread with one Deltatok. */
import { DeltatokError, toDeltatokError, type ErrorRecord } from "../errors.js";
import { snakeKeys } from "../json/index.js";
import type { Deltatok } from "../api/deltatok.js";
import type { PromptOptions } from "../api/options.js";
import { ConversationMessages } from "../api/conversations.js";
import { VERSION } from "../package-info.js";
import { trajectoryJson } from "../api/trajectory.js";
import { encodeBatchOptions, encodeBatchResult, messageOptions, promptOptions, tokenizerCall, type Backend, type Method } from "./protocol.js";
import { IdsDelta } from "./ids-delta.js";
import { rolloutJson } from "../api/rollout.js";


export function describeEngine(dt: Deltatok, workers: number): Record<string, unknown> {
  return { status: "ok", version: VERSION, tokenizer: dt.options.tokenizer, mode: dt.options.mode, renderer: dt.options.renderer, workers };
}

/** Ids as a plain list for JSON (a loop: Array.from of a typed array goes through its iterator). */
export function idList(ids: Uint32Array): number[] {
  const out = new Array<number>(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = ids[i] as number;
  return out;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Ids as the request asks: a JSON list, or with `"ids_encoding": "base64"` one base64 string of
 * the ids as little-endian uint32 (what a client decodes faster than a list of numbers).
 */
export function encodeIds(ids: Uint32Array, p: Record<string, unknown>): number[] | string {
  const e = p.ids_encoding;
  if (e === undefined || e === "list") return idList(ids);
  if (e !== "base64") throw new DeltatokError("DT_INVALID_REQUEST", `ids_encoding must be "list" or "base64", got ${JSON.stringify(e)}`, { path: "ids_encoding" });
  let le = ids;
  if (!LITTLE_ENDIAN) {
    le = new Uint32Array(ids.length);
    const v = new DataView(le.buffer);
    for (let i = 0; i < ids.length; i++) v.setUint32(i * 4, ids[i] as number, true);
  }
  return Buffer.from(le.buffer, le.byteOffset, le.byteLength).toString("base64");
}

/** A prompt request's messages and options, conversation prefixes resolved. */
function promptRequest(p: Record<string, unknown>, held: ConversationMessages | undefined): { messages: unknown[]; options: PromptOptions } {
  const options = promptOptions(p);
  if (held === undefined) return { messages: p.messages as unknown[], options };
  const r = held.resolve(p.conversation_id, p.state, p.prefix, p.messages, p.tools);
  if (r.tools !== undefined) options.tools = r.tools as PromptOptions["tools"];
  return { messages: r.messages as unknown[], options };
}

/** Answers one call with `dt` (synchronous work; throws DeltatokError); `delta` serves ids_delta. */
export function answer(dt: Deltatok, method: Exclude<Method, "batch">, p: Record<string, unknown>, held?: ConversationMessages, delta?: IdsDelta): unknown {
  switch (method) {
    case "count_prompt":
    case "encode_prompt": {
      const withIds = method === "encode_prompt";
      const { messages, options } = promptRequest(p, held);
      const r = dt.tokenizePrompt(messages, options, withIds);
      const out: Record<string, unknown> = { count: r.count, reused: r.reused, outcome: r.outcome };
      if (r.reason !== undefined) out.reason = r.reason;
      if (withIds) {
        const ids = r.ids ?? new Uint32Array(0);
        if (delta !== undefined && IdsDelta.wanted(p)) {
          const d = delta.apply(p, ids);
          out.ids_from = d.from;
          out.ids = encodeIds(d.tail, p);
        } else out.ids = encodeIds(ids, p);
      }
      return out;
    }
    case "decode":
    case "encode_text":
    case "tokenizer_info":
    case "vocab":
    case "render_prompt":
    case "fits":
    case "trim_to_fit":
    case "text_counter_open":
    case "message_counter_open":
    case "counter_append":
    case "counter_finish":
    case "counter_close":
      return tokenizerCall(dt, method, p);
    case "count_message": {
      return { count: dt.countMessage(p.message, messageOptions(p)) };
    }
    case "count_text":
      return { count: dt.countText(p.text as string) };
    case "encode_batch":
      return encodeBatchResult(dt.encodeTexts(p.texts as string[], encodeBatchOptions(p)), p);
    case "tokenize_trajectory": {
      const { messages, options } = promptRequest(p, held);
      return trajectoryJson(dt.tokenizeTrajectory(messages, options));
    }
    case "tokenize_rollout": {
      const { messages, options } = promptRequest(p, held);
      return rolloutJson(dt.tokenizeRollout(messages, options));
    }
    case "stats":
      return snakeKeys(dt.stats());
    case "health":
      return describeEngine(dt, 0);
    default:
      throw new DeltatokError("DT_UNKNOWN_METHOD", `unknown method ${String(method)}`);
  }
}

export class InProcessBackend implements Backend {
  #closed = false;
  readonly #held = new ConversationMessages();
  readonly #delta = new IdsDelta();
  constructor(readonly dt: Deltatok) {}

  async call(method: Exclude<Method, "batch">, params: Record<string, unknown>): Promise<unknown> {
    if (this.#closed) throw new DeltatokError("DT_CLOSED", "the server is shutting down");
    return answer(this.dt, method, params, this.#held, this.#delta);
  }

  async callMany(calls: Array<{ method: Exclude<Method, "batch">; params: Record<string, unknown> }>): Promise<Array<{ result: unknown } | { error: ErrorRecord }>> {
    return calls.map((c) => {
      try {
        if (this.#closed) throw new DeltatokError("DT_CLOSED", "the server is shutting down");
        return { result: answer(this.dt, c.method, c.params, this.#held, this.#delta) };
      } catch (e) {
        return { error: toDeltatokError(e).toJSON() };
      }
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
