/**
 * The item runner: the work a worker does for one wire item, against its one Deltatok. A corpus
 * line's replay or training outcome is the corpus layer's (src/corpus/replay.ts), the same
 * functions the in-process commands call, so both paths produce the same records by construction.
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
import { replayLine, trainingLine } from "../corpus/replay.js";
import type { TrainingOutcome, WireItem, WireResult } from "./protocol.js";

/**
 * An outcome whose typed arrays are fresh copies, each its own buffer, so the worker can move them:
 * a result may be a view of a larger buffer, or one the splicer's cache still holds.
 */
function tight(t: TrainingOutcome): TrainingOutcome {
  const own = <A extends Uint32Array | Uint8Array | Float32Array>(a: A): A => a.slice() as A;
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

/** Answers one item. Never throws. `held` keeps conversation prefixes between items. */
export function runItem(dt: Deltatok, item: WireItem, held?: ConversationMessages): WireResult {
  try {
    switch (item.k) {
      case "text":
        return { ok: true, count: dt.countText(item.text) };
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
        return { ok: true, training: tight(trainingLine(dt, item.json, item.line, item.mode, item.options ?? {})) };
      default:
        throw new DeltatokError("DT_INVALID_REQUEST", `unknown item kind ${String((item as { k?: unknown }).k)}`);
    }
  } catch (e) {
    return { ok: false, error: toDeltatokError(e).toJSON() };
  }
}
