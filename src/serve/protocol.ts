/**
 * The sidecar protocol, shared by JSON lines over stdio and HTTP.
 *
 * Request:  {"id": <any JSON>, "method": "<name>", "params": {...}}
 * Response: {"id": <same>, "result": {...}}  or  {"id": <same>, "error": {"code", "message", "path"?}}
 * A number id is answered with the very text it was sent as (`9007199254740993`, `1.50`, `1e2`;
 * src/serve/wire-id.ts). Every key of a result is snake_case (a library result's camelCase keys
 * are converted where it becomes an answer: src/json/wire.ts `snakeKeys`), and a negative zero
 * (a rollout's logprob) is written `-0.0` (`wireJson`).
 *
 * Methods (params → result):
 * - count_prompt   {messages, tools?, documents?, chat_template?, chat_template_kwargs?,
 *                   add_generation_prompt? (default true, false with continue_final_message),
 *                   parse_tool_arguments?, continue_final_message? (true or a field name),
 *                   conversation_id?, state?, prefix?} → {count, reused, outcome}
 *                   With a conversation_id, `state` names this request's messages and
 *                   `prefix: {state, length}` says the first `length` messages are those of that
 *                   earlier state, `messages` holding only the rest — a growing conversation
 *                   crosses the wire once. DT_PREFIX_UNKNOWN when the server does not hold that
 *                   state (resend everything); see src/api/conversations.ts. With workers, the
 *                   conversation_id also keeps the conversation on one worker.
 * - encode_prompt  same params, and ids_delta? → {ids, count, reused, outcome}; with
 *                   `"ids_delta": true` (and conversation_id, state, prefix) → also `ids_from: r`,
 *                   `ids` holding only ids[r:]: the first r ids equal those answered for the
 *                   prefix state (src/serve/ids-delta.ts; r = 0 when that answer is not held);
 *                   `"ids_encoding": "base64"`: `ids` as one base64 string of little-endian uint32
 * - count_message  {message, chat_template?, chat_template_kwargs?, parse_tool_arguments?} → {count}   (OSL)
 * - count_text     {text} → {count}
 * - tokenize_trajectory  same params as count_prompt (add_generation_prompt defaults to false)
 *                   → {count, ids, prefix, spans: [{message, role, start, end}], suffix,
 *                      assistant_mask: [[start, end], ...], mask_source, offsets_exact}
 * - encode_text    {text, add_special_tokens? (default false)} → {ids, count}
 * - encode_batch   {texts, add_special_tokens? (default false), ids_encoding?} → {ids: [[...], ...], count}
 *                   (encode_text of each text, in one round trip; with workers spread over all
 *                   of them); with `"ids_encoding": "base64"` → `ids` one base64 string of every
 *                   text's ids back to back and `lengths` per text. One bad text fails the call
 *                   (its code, path `texts[i]`).
 * - decode         {ids, skip_special_tokens?, clean_up_tokenization_spaces?} → {text}
 * - tokenizer_info {} → vocab_size, length, special tokens and ids, model_max_length, ... (api/vocabulary.ts)
 * - vocab          {} → {tokens: [token | null by id]}
 * - render_prompt  count_prompt's params without conversation fields → {text} (whole messages)
 * - fits           render_prompt's params and limit → {fits} (exactly count <= limit; api/budget.ts)
 * - trim_to_fit    fits' params, policy?, keep_first_user? → {count, dropped} (indices dropped)
 * - tokenize_rollout  same params as count_prompt but add_generation_prompt (assistant messages
 *                   may carry sampled_ids, sampled_logprobs) → {sequences: [{ids, mask, logprobs,
 *                   turns}], splits, drift} (src/api/rollout.ts, docs/ROLLOUTS.md)
 * - text_counter_open {ids?, max_look_back?} → {handle}; message_counter_open {chat_template?,
 *                   chat_template_kwargs?, parse_tool_arguments?, max_look_back?} → {handle}
 * - counter_append {handle, chunk} (text) or {handle, delta} (message; an OpenAI-style delta)
 *                   → {count}: countText / countMessage of everything appended so far
 * - counter_finish {handle} → {count, stats} (closes it; stats: the counter's stats() in
 *                   snake_case: chars_encoded, last_chars_encoded, max_chars_encoded, tail_chars, …); counter_close {handle} → {closed}
 *                   Unknown, finished, evicted (LRU past 1,024 open, or 10 min idle) handles:
 *                   DT_COUNTER_UNKNOWN (src/serve/counters.ts)
 * - batch          {requests: [{method, params}, ...]} → {results: [{result} | {error}, ...]} in order
 * - stats          {} → Deltatok statistics (DeltatokStats in snake_case: tokens_reused,
 *                   tokens_encoded, bytes_held, render_ms, render.units_reused, …; summed over the workers)
 * - health         {} → {status: "ok", tokenizer, version, workers}
 *
 * Responses may come out of order; the id says which request each answers. A request that is
 * not valid JSON, or has a bad envelope, or bad params, gets an error response (id null when
 * unknown) and the connection stays usable.
 *
 * stdio: one request per line ("\n"; a "\r" before it is dropped; the last line may lack it);
 * blank lines are skipped. A line over `maxRequestBytes` (default 256 MiB) is skipped to its
 * newline, never buffered, and answered DT_INPUT_TOO_LARGE; a line that is not UTF-8 is
 * answered DT_INVALID_UTF8 (no U+FFFD replacement); lines read while the server shuts down are
 * answered DT_CLOSED. Those three answers carry the request's id when the line starts with
 * `{"id": <scalar>` (as the Python client writes it), else null.
 *
 * HTTP routes:
 *   POST /rpc              body = a request envelope; answer = a response envelope
 *   POST /v1/<method>      body = params; answer = {id: null, result} or {id: null, error}
 *   GET  /health, /stats   answer = a response envelope
 * Every request first passes the guard (src/serve/guard.ts): a Host naming the server, no
 * cross-origin Origin, the bearer token when one is set, and for POST `Content-Type:
 * application/json`. Status codes (the body is always a JSON envelope with the error's code):
 *   200  processed: its result, or its own coded error (bad params, template errors, ...)
 *   400  DT_INVALID_JSON, DT_INVALID_UTF8, DT_INVALID_REQUEST (bad envelope; malformed HTTP)
 *   401  DT_UNAUTHORIZED: the server has a token and the request lacks it (WWW-Authenticate: Bearer)
 *   403  DT_FORBIDDEN: Host not an address of this server, cross-origin Origin or Sec-Fetch-Site
 *   404  no such route; DT_UNKNOWN_METHOD for /v1/<unknown>
 *   405  a route that takes POST got another verb
 *   408  DT_REQUEST_TIMEOUT: headers (10 s) or the whole request (60 s) too slow; connection closed
 *   413  DT_INPUT_TOO_LARGE: body over maxRequestBytes; 431 for headers over 16 KiB
 *   415  DT_UNSUPPORTED_MEDIA_TYPE: a POST body not declared application/json (charset utf-8 or none)
 *   500  DT_INTERNAL: a bug
 *   503  DT_CLOSED: the server is shutting down and the request had not reached the backend
 *        (sent with Connection: close once the request has fully arrived)
 */
import { DeltatokError, toDeltatokError, type ErrorRecord } from "../errors.js";
import { MESSAGE_OPTION_NAMES, PROMPT_OPTION_NAMES, type MessageOptions, type PromptOptions } from "../api/options.js";
import type { Deltatok } from "../api/deltatok.js";
import type { TrimOptions } from "../api/budget.js";
import type { DecodeOptions } from "../api/vocabulary.js";
import { parseRequestLine } from "./request-json.js";
import { eachMember, endOfValue } from "../json/skim.js";
import { COUNTER_METHODS, counterCall, type CounterMethod } from "./counters.js";
import { keepIdText, wireIdOf } from "./wire-id.js";

export type Method = "count_prompt" | "encode_prompt" | "count_message" | "count_text" | "tokenize_trajectory" | "tokenize_rollout" | "batch" | "stats" | "health" | "encode_batch" | TokenizerMethod;
export const METHODS: readonly Method[] = ["count_prompt", "encode_prompt", "count_message", "count_text", "tokenize_trajectory", "tokenize_rollout", "batch", "stats", "health", "encode_batch", "encode_text", "decode", "tokenizer_info", "vocab", "render_prompt", "fits", "trim_to_fit", ...COUNTER_METHODS];

/** Methods about the tokenizer itself (and whole renders), answered by one Deltatok on the server's thread. */
export type TokenizerMethod = "encode_text" | "decode" | "tokenizer_info" | "vocab" | "render_prompt" | BudgetMethod | CounterMethod;
export const TOKENIZER_METHODS: ReadonlySet<string> = new Set<TokenizerMethod>(["encode_text", "decode", "tokenizer_info", "vocab", "render_prompt", "fits", "trim_to_fit", ...COUNTER_METHODS]);
/** Context budgets (api/budget.ts); with workers answered by the server thread's Deltatok, like render_prompt. */
export type BudgetMethod = "fits" | "trim_to_fit";

export interface Envelope {
  id: unknown;
  method: Method;
  params: Record<string, unknown>;
}

export type Response = { id: unknown; result: unknown } | { id: unknown; error: ErrorRecord };

/**
 * The params each method reads; any other key is refused (DT_INVALID_OPTION), as the library
 * refuses unknown options. The options are the API's own lists (api/options.ts).
 */
const PROMPT_PARAMS = ["messages", ...PROMPT_OPTION_NAMES];
const HELD_PARAMS = ["conversation_id", "state", "prefix"];
const METHOD_PARAMS: Readonly<Record<string, ReadonlySet<string>>> = {
  // a client may send the same params to count_prompt as to encode_prompt (no ids to encode)
  count_prompt: new Set([...PROMPT_PARAMS, ...HELD_PARAMS, "ids_delta", "ids_encoding"]),
  encode_prompt: new Set([...PROMPT_PARAMS, ...HELD_PARAMS, "ids_delta", "ids_encoding"]),
  tokenize_trajectory: new Set([...PROMPT_PARAMS, ...HELD_PARAMS]),
  tokenize_rollout: new Set([...PROMPT_PARAMS, ...HELD_PARAMS]),
  count_message: new Set(["message", ...MESSAGE_OPTION_NAMES]),
  count_text: new Set(["text"]),
  encode_text: new Set(["text", "add_special_tokens"]),
  encode_batch: new Set(["texts", "add_special_tokens", "ids_encoding"]),
  decode: new Set(["ids", "skip_special_tokens", "clean_up_tokenization_spaces"]),
  render_prompt: new Set(PROMPT_PARAMS),
  fits: new Set([...PROMPT_PARAMS, "limit"]),
  trim_to_fit: new Set([...PROMPT_PARAMS, "limit", "policy", "keep_first_user"]),
  batch: new Set(["requests"]),
  stats: new Set(),
  health: new Set(),
  tokenizer_info: new Set(),
  vocab: new Set(),
  // the counters check their own params (counters.ts)
};

/** Throws DT_INVALID_OPTION for a param `method` does not read (a misspelt option is never ignored). */
export function checkParam(method: string, key: string): void {
  const known = METHOD_PARAMS[method];
  if (known !== undefined && !known.has(key)) {
    throw new DeltatokError("DT_INVALID_OPTION", `${method}: unknown param ${JSON.stringify(key)} (known: ${[...known].join(", ") || "none"})`, { path: key });
  }
}

/** What actually answers requests: the in-process Deltatok or the worker pool. */
export interface Backend {
  /**
   * Optional: answers a prompt or message call whose params are still JSON text (a backend that
   * parses elsewhere — the pool parses in its workers — keeps the main thread free).
   */
  callRaw?(method: RawMethod, paramsRaw: string): Promise<unknown>;
  /** Answers one non-batch call; rejects with a DeltatokError for that call only. */
  call(method: Exclude<Method, "batch">, params: Record<string, unknown>): Promise<unknown>;
  /** Answers several calls; per-call errors are returned in place, in input order. */
  callMany(calls: Array<{ method: Exclude<Method, "batch">; params: Record<string, unknown> }>): Promise<Array<{ result: unknown } | { error: ErrorRecord }>>;
  /**
   * Stops answering; work already accepted finishes within `timeoutMs` (default: however long it
   * takes), what is left then is answered with a coded error.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/** Default maximum size of one request line / body (serve()'s `maxRequestBytes`). */
export const MAX_REQUEST_BYTES = 256 * 1024 * 1024;
/** Maximum calls in one batch. */
export const MAX_BATCH = 10_000;

/** Parses and checks an envelope; throws a coded error (with the id when it could be read). */
export function parseEnvelope(v: unknown): Envelope {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new EnvelopeError(null, new DeltatokError("DT_INVALID_REQUEST", "a request must be a JSON object {id, method, params}"));
  }
  const r = v as Record<string, unknown>;
  const id = r.id ?? null;
  if (typeof r.method !== "string") {
    throw new EnvelopeError(id, new DeltatokError("DT_INVALID_REQUEST", "request.method must be a string", { path: "method" }));
  }
  if (!(METHODS as readonly string[]).includes(r.method)) {
    throw new EnvelopeError(id, new DeltatokError("DT_UNKNOWN_METHOD", `unknown method "${r.method}" (known: ${METHODS.join(", ")})`, { path: "method" }));
  }
  const params = r.params ?? {};
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    throw new EnvelopeError(id, new DeltatokError("DT_INVALID_REQUEST", "request.params must be an object", { path: "params" }));
  }
  try {
    for (const k of Object.keys(params)) checkParam(r.method, k);
  } catch (e) {
    throw new EnvelopeError(id, e as DeltatokError);
  }
  return { id, method: r.method as Method, params: params as Record<string, unknown> };
}

/** An envelope error, carrying the request id when it was readable. */
export class EnvelopeError extends Error {
  constructor(
    readonly id: unknown,
    readonly error: DeltatokError,
  ) {
    super(error.message);
  }
}

/** The per-request options of count_prompt / encode_prompt params (the library checks their values). */
export function promptOptions(p: Record<string, unknown>): PromptOptions {
  return pick(p, PROMPT_OPTION_NAMES) as PromptOptions;
}

/** The options of count_message params. */
export function messageOptions(p: Record<string, unknown>): MessageOptions {
  return pick(p, MESSAGE_OPTION_NAMES) as MessageOptions;
}

function pick(p: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const k of names) if (p[k] !== undefined) o[k] = p[k];
  return o;
}

/** Answers a tokenizer method (encode_text, decode, tokenizer_info, vocab) with `dt`. */
export function tokenizerCall(dt: Deltatok, method: TokenizerMethod, p: Record<string, unknown>): unknown {
  switch (method) {
    case "encode_text": {
      const o: { add_special_tokens?: boolean } = {};
      if (p.add_special_tokens !== undefined) o.add_special_tokens = p.add_special_tokens as boolean;
      const ids = dt.encodeText(p.text as string, o);
      return { ids: Array.from(ids), count: ids.length };
    }
    case "decode": {
      const o: DecodeOptions = {};
      if (p.skip_special_tokens !== undefined) o.skip_special_tokens = p.skip_special_tokens as boolean;
      if (p.clean_up_tokenization_spaces !== undefined) o.clean_up_tokenization_spaces = p.clean_up_tokenization_spaces as boolean | null;
      return { text: dt.decode(p.ids as number[], o) };
    }
    case "tokenizer_info":
      return dt.tokenizerInfo();
    case "vocab":
      return { tokens: dt.tokenList() };
    case "render_prompt": {
      return { text: dt.renderPrompt(p.messages as unknown[], promptOptions(p)) };
    }
    case "fits":
    case "trim_to_fit":
      return budgetCall(dt, method, p);
    default:
      return counterCall(dt, method, p);
  }
}

/** encode_batch's options from its params (checked by the library call). */
export function encodeBatchOptions(p: Record<string, unknown>): { add_special_tokens?: boolean } {
  return p.add_special_tokens === undefined ? {} : { add_special_tokens: p.add_special_tokens as boolean };
}

/** encode_batch's answer: every text's ids as lists, or base64 of them back to back with `lengths`. */
export function encodeBatchResult(parts: readonly Uint32Array[], p: Record<string, unknown>): unknown {
  let count = 0;
  for (const q of parts) count += q.length;
  const e = p.ids_encoding;
  if (e === undefined || e === "list") return { ids: parts.map((q) => Array.from(q)), count };
  if (e !== "base64") throw new DeltatokError("DT_INVALID_REQUEST", `ids_encoding must be "list" or "base64", got ${JSON.stringify(e)}`, { path: "ids_encoding" });
  const all = new Uint32Array(count);
  let at = 0;
  for (const q of parts) {
    all.set(q, at);
    at += q.length;
  }
  if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) {
    const v = new DataView(all.buffer);
    for (let i = 0; i < all.length; i++) v.setUint32(i * 4, all[i] as number, true);
  }
  return { ids: Buffer.from(all.buffer, all.byteOffset, all.byteLength).toString("base64"), lengths: parts.map((q) => q.length), count };
}

/**
 * fits {messages, limit, count_prompt's options} → {fits}; trim_to_fit {messages, limit,
 * policy?, keep_first_user?, count_prompt's options} → {count, dropped} (indices into messages:
 * the client keeps its own list minus those).
 */
export function budgetCall(dt: Deltatok, method: BudgetMethod, p: Record<string, unknown>): unknown {
  const o = promptOptions(p);
  if (method === "fits") return { fits: dt.fits(p.messages as unknown[], p.limit as number, o) };
  const t: TrimOptions = { ...o };
  if (p.policy !== undefined) t.policy = p.policy as TrimOptions["policy"];
  if (p.keep_first_user !== undefined) t.keep_first_user = p.keep_first_user as boolean;
  const r = dt.trimToFit(p.messages as unknown[], p.limit as number, t);
  return { count: r.count, dropped: r.dropped };
}

/** Dispatches one envelope to the backend; never rejects (errors become error responses). */
export async function dispatch(backend: Backend, env: Envelope): Promise<Response> {
  try {
    if (env.method === "batch") {
      const reqs = env.params.requests;
      if (!Array.isArray(reqs)) throw new DeltatokError("DT_INVALID_REQUEST", "batch params.requests must be a list", { path: "params.requests" });
      if (reqs.length > MAX_BATCH) throw new DeltatokError("DT_INVALID_REQUEST", `a batch holds at most ${MAX_BATCH} requests`, { path: "params.requests" });
      const calls: Array<{ method: Exclude<Method, "batch">; params: Record<string, unknown> }> = [];
      const bad = new Map<number, ErrorRecord>();
      reqs.forEach((q: unknown, i: number) => {
        try {
          const e = parseEnvelope(q);
          if (e.method === "batch") throw new EnvelopeError(null, new DeltatokError("DT_INVALID_REQUEST", "batches do not nest"));
          calls.push({ method: e.method, params: e.params });
        } catch (err) {
          bad.set(i, (err instanceof EnvelopeError ? err.error : toDeltatokError(err)).toJSON());
        }
      });
      const answered = await backend.callMany(calls);
      const results: Array<{ result: unknown } | { error: ErrorRecord }> = [];
      let j = 0;
      for (let i = 0; i < reqs.length; i++) {
        const b = bad.get(i);
        results.push(b !== undefined ? { error: b } : (answered[j++] as { result: unknown } | { error: ErrorRecord }));
      }
      return { id: env.id, result: { results } };
    }
    return { id: env.id, result: await backend.call(env.method, env.params) };
  } catch (e) {
    return { id: env.id, error: toDeltatokError(e).toJSON() };
  }
}

const RAW_METHODS: ReadonlySet<string> = new Set(["count_prompt", "encode_prompt", "count_message", "tokenize_trajectory", "tokenize_rollout"]);

/**
 * For a backend with callRaw: splits `{"id", "method", "params"}` without parsing params. Returns
 * null unless the envelope is exactly that shape (then the line takes the ordinary path, which
 * reports whatever is wrong with it).
 */
export type RawMethod = "count_prompt" | "encode_prompt" | "count_message" | "tokenize_trajectory" | "tokenize_rollout";

function skimEnvelope(line: string): { id: unknown; method: RawMethod; paramsRaw: string } | null {
  let id: unknown = null;
  let method: unknown;
  let paramsRaw: string | null = null;
  let ok = true;
  const followed = eachMember(line, 0, (m) => {
    const raw = line.slice(m.start, m.end);
    try {
      if (m.key === "id") id = wireIdOf(raw) ?? (JSON.parse(raw) as unknown);
      else if (m.key === "method") method = JSON.parse(raw) as unknown;
      else if (m.key === "params") paramsRaw = raw;
      else ok = false;
    } catch {
      ok = false;
    }
    return ok;
  });
  if (!followed || !ok || paramsRaw === null || typeof method !== "string" || !RAW_METHODS.has(method)) return null;
  if (endOfValue(line, 0) < 0 || line.slice(endOfValue(line, 0)).trim() !== "") return null;
  return { id, method: method as RawMethod, paramsRaw };
}

/** Parses one request line and dispatches it; never rejects. */
export async function handleLine(backend: Backend, line: string): Promise<Response> {
  if (backend.callRaw !== undefined) {
    const s = skimEnvelope(line);
    if (s !== null) {
      try {
        return { id: s.id, result: await backend.callRaw(s.method, s.paramsRaw) };
      } catch (e) {
        return { id: s.id, error: toDeltatokError(e).toJSON() };
      }
    }
  }
  let v: unknown;
  try {
    // Python json.loads semantics: a 1.0 sent by a Python harness stays a float in the template
    // (JSON.parse where it gives the same values: request-json.ts).
    v = parseRequestLine(line);
  } catch (e) {
    return { id: null, error: new DeltatokError("DT_INVALID_JSON", `request is not valid JSON: ${(e as Error).message}`).toJSON() };
  }
  keepIdText(line, v);
  let env: Envelope;
  try {
    env = parseEnvelope(v);
  } catch (e) {
    if (e instanceof EnvelopeError) return { id: e.id, error: e.error.toJSON() };
    return { id: null, error: toDeltatokError(e).toJSON() };
  }
  return dispatch(backend, env);
}
