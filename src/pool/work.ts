/**
 * The work a worker does for one item, against its one Deltatok. Also used in-process by
 * `deltatok replay` without workers, so both paths produce the same records by construction.
 *
 * Every item is answered: failures become `{ok: false, error: {code, message, path?}}` for that
 * item only.
 */
import { DeltatokError, toDeltatokError } from "../errors.js";
import type { Deltatok } from "../api/deltatok.js";
import { PROMPT_OPTION_NAMES, type MessageOptions, type PromptOptions } from "../api/options.js";
import { pythonJsonParser } from "../api/json.js";
import type { ConversationMessages } from "../api/conversations.js";
import { trajectoryJson } from "../api/trajectory.js";
import { rolloutJson } from "../api/rollout.js";
import { assistantIndices, mergeKwargs, parseCorpusLine, type Conversation, type LineError } from "../corpus/corpus.js";
import type { ReplayItemOptions, ReplayRecord, TrainingItemOptions, TrainingOutcome, WireItem, WireResult } from "./protocol.js";

/** The requests of one conversation, in order, as records (ISL, and OSL unless `osl: false`). */
export function replayConversation(dt: Deltatok, c: Conversation, o: ReplayItemOptions): ReplayRecord[] {
  const out: ReplayRecord[] = [];
  const kwargs = mergeKwargs(o.chatTemplateKwargs ?? null, c.chat_template_kwargs);
  const parseToolArguments = o.parseToolArguments === true;
  const popts: PromptOptions = { tools: c.tools, chat_template_kwargs: kwargs, parse_tool_arguments: parseToolArguments };
  for (const k of assistantIndices(c.messages)) {
    const rec: ReplayRecord = { id: c.id, index: k };
    try {
      rec.isl = dt.countPrompt(c.messages.slice(0, k), popts);
    } catch (e) {
      rec.error = toDeltatokError(e).toJSON();
    }
    if (o.osl !== false) {
      try {
        rec.osl = dt.countMessage(c.messages[k], { chat_template_kwargs: kwargs, parse_tool_arguments: parseToolArguments });
      } catch (e) {
        rec.error ??= toDeltatokError(e).toJSON();
      }
    }
    out.push(rec);
  }
  return out;
}

/** The record of a corpus line that could not be used. */
export function lineErrorRecord(f: LineError): ReplayRecord {
  return { id: f.id, index: null, line: f.line, error: f.error.toJSON() };
}

/** Parses and replays one corpus line (1-based `line`). */
export function replayLine(dt: Deltatok, text: string, line: number, o: ReplayItemOptions): { records: ReplayRecord[]; conversation: boolean } {
  let parsed: Conversation | LineError;
  try {
    parsed = parseCorpusLine(text, line, pythonJsonParser);
  } catch (e) {
    parsed = { line, id: null, error: toDeltatokError(e) };
  }
  if ("error" in parsed) return { records: [lineErrorRecord(parsed)], conversation: false };
  return { records: replayConversation(dt, parsed, o), conversation: true };
}

/**
 * `deltatok tokenize` / `rollout` of one parsed conversation: its trajectory or rollout, or its
 * error record. The in-process commands and the workers both call this.
 */
export function trainingConversation(dt: Deltatok, c: Conversation, mode: "tokenize" | "rollout", o: TrainingItemOptions): TrainingOutcome {
  const opts = { tools: c.tools, chat_template_kwargs: mergeKwargs(o.chatTemplateKwargs ?? null, c.chat_template_kwargs), parse_tool_arguments: o.parseToolArguments === true };
  try {
    if (mode === "tokenize") return { id: c.id, line: c.line, conversation: true, trajectory: dt.tokenizeTrajectory(c.messages, opts) };
    return { id: c.id, line: c.line, conversation: true, rollout: dt.tokenizeRollout(c.messages, opts) };
  } catch (e) {
    return { id: c.id, line: c.line, conversation: true, error: toDeltatokError(e).toJSON() };
  }
}

/** Parses one corpus line (1-based `line`) and makes its trajectory or rollout (trainingConversation). */
export function trainingLine(dt: Deltatok, text: string, line: number, mode: "tokenize" | "rollout", o: TrainingItemOptions): TrainingOutcome {
  let parsed: Conversation | LineError;
  try {
    parsed = parseCorpusLine(text, line, pythonJsonParser);
  } catch (e) {
    parsed = { line, id: null, error: toDeltatokError(e) };
  }
  if ("error" in parsed) return { id: parsed.id, line: parsed.line, conversation: false, error: parsed.error.toJSON() };
  return tight(trainingConversation(dt, parsed, mode, o));
}

/**
 * An outcome whose typed arrays are fresh copies, each its own buffer, so the worker can move them:
 * a result may be a view of a larger buffer, or one the engine's cache still holds.
 */
function tight(t: TrainingOutcome): TrainingOutcome {
  const own = <A extends Uint32Array | Uint8Array | Float64Array>(a: A): A => a.slice() as A;
  if (t.trajectory !== undefined) t.trajectory = { ...t.trajectory, ids: own(t.trajectory.ids), assistantMask: own(t.trajectory.assistantMask) };
  if (t.rollout !== undefined) t.rollout = { ...t.rollout, sequences: t.rollout.sequences.map((q) => ({ ...q, ids: own(q.ids), logprobs: q.logprobs === null ? null : own(q.logprobs) })) };
  return t;
}

/** The buffers of a training outcome, to move across threads (distinct; empty arrays' too). */
export function trainingBuffers(t: TrainingOutcome, into: Set<ArrayBuffer>): void {
  if (t.trajectory !== undefined) {
    into.add(t.trajectory.ids.buffer as ArrayBuffer);
    into.add(t.trajectory.assistantMask.buffer as ArrayBuffer);
  }
  for (const q of t.rollout?.sequences ?? []) {
    into.add(q.ids.buffer as ArrayBuffer);
    if (q.logprobs !== null) into.add(q.logprobs.buffer as ArrayBuffer);
  }
}

function parseJson(text: string, what: string): unknown {
  if (typeof text !== "string") throw new DeltatokError("DT_INVALID_REQUEST", `${what} json must be a string`, { path: "json" });
  try {
    return pythonJsonParser(text);
  } catch (e) {
    throw new DeltatokError("DT_INVALID_JSON", `${what} is not valid JSON: ${(e as Error)?.message ?? e}`, { cause: e, path: "json" });
  }
}

/**
 * A request body `{"messages": [...], "tools"?, ..., "conversation_id"?, "prefix"?}` as messages
 * + options; `prefix` refers to the conversation's previous messages (api/conversations.ts).
 */
function promptFromJson(text: string, extra: PromptOptions | undefined, held: ConversationMessages | undefined): { messages: unknown[]; options: PromptOptions } {
  const body = parseJson(text, "prompt");
  if (Array.isArray(body)) return { messages: body, options: extra ?? {} };
  if (typeof body !== "object" || body === null) throw new DeltatokError("DT_INVALID_REQUEST", "prompt json must be an object with messages, or an array of messages", { path: "json" });
  const b = body as Record<string, unknown>;
  const options: Record<string, unknown> = {};
  for (const f of PROMPT_OPTION_NAMES) if (b[f] !== undefined) options[f] = b[f];
  if (extra !== undefined) Object.assign(options, extra);
  if (held === undefined || (b.prefix === undefined && b.state === undefined)) return { messages: b.messages as unknown[], options: options as PromptOptions };
  const r = held.resolve(b.conversation_id, b.state, b.prefix, b.messages, b.tools);
  if (r.tools !== undefined && extra?.tools === undefined) options.tools = r.tools;
  return { messages: r.messages as unknown[], options: options as PromptOptions };
}

/** Many id arrays as one (its own buffer, to be moved) and each one's length. */
export function concatIds(parts: readonly Uint32Array[]): { ids: Uint32Array; lengths: number[] } {
  let n = 0;
  for (const p of parts) n += p.length;
  const ids = new Uint32Array(n);
  const lengths = new Array<number>(parts.length);
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as Uint32Array;
    ids.set(p, at);
    at += p.length;
    lengths[i] = p.length;
  }
  return { ids, lengths };
}

/** Answers one item. Never throws. `held` keeps conversation prefixes between items. */
export function runItem(dt: Deltatok, item: WireItem, held?: ConversationMessages): WireResult {
  try {
    switch (item.k) {
      case "text":
        return { ok: true, count: dt.countText(item.text) };
      case "texts": {
        const { ids, lengths } = concatIds(dt.encodeTexts(item.texts, { add_special_tokens: item.special }));
        return { ok: true, count: ids.length, ids, lengths };
      }
      case "message": {
        const m = item.json !== undefined ? parseJson(item.json, "message") : item.message;
        return { ok: true, count: dt.countMessage(m, item.options as MessageOptions | undefined) };
      }
      case "prompt": {
        const { messages, options } = item.json !== undefined ? promptFromJson(item.json, item.options, held) : { messages: item.messages as unknown[], options: item.options };
        if (item.trajectory === true) return { ok: true, trajectory: trajectoryJson(dt.tokenizeTrajectory(messages, options)) };
        if (item.rollout === true) return { ok: true, rollout: rolloutJson(dt.tokenizeRollout(messages, options)) };
        const r = dt.tokenizePrompt(messages, options, item.ids);
        const out: WireResult = { ok: true, count: r.count, reused: r.reused, outcome: r.outcome };
        if (r.reason !== undefined) out.reason = r.reason;
        // A tight copy: a cached array may be a view of a larger buffer (and must not be moved).
        if (item.ids && r.ids !== null) out.ids = r.ids.slice();
        return out;
      }
      case "conversation":
        return { ok: true, ...replayLine(dt, item.json, item.line, item.replay ?? {}) };
      case "training":
        if (item.mode !== "tokenize" && item.mode !== "rollout") throw new DeltatokError("DT_INVALID_REQUEST", `training mode must be tokenize or rollout, got ${String(item.mode)}`);
        return { ok: true, training: trainingLine(dt, item.json, item.line, item.mode, item.options ?? {}) };
      default:
        throw new DeltatokError("DT_INVALID_REQUEST", `unknown item kind ${String((item as { k?: unknown }).k)}`);
    }
  } catch (e) {
    return { ok: false, error: toDeltatokError(e).toJSON() };
  }
}
