/**
 * What `deltatok replay`, `tokenize` and `rollout` compute for one corpus line against one
 * Deltatok: the replay semantics (which requests a conversation makes, and the record of each),
 * the training outcome of a line, and the record of a line that could not be used. The
 * in-process commands and the pool's workers (src/pool/work.ts) both call these, so both paths
 * produce the same records by construction.
 *
 * A conversation of n messages makes one request per assistant message k: ISL is countPrompt of
 * messages[:k] with the line's tools and kwargs (the command's kwargs under the line's own), OSL
 * is countMessage of messages[k]. A failing request becomes that record's `error`; nothing here
 * throws for a bad line.
 *
 * Layer: above the API (it drives a Deltatok), below the pool and the CLI.
 */
import { toDeltatokError, type ErrorRecord } from "../errors.js";
import type { Deltatok } from "../api/deltatok.js";
import type { PromptOptions } from "../api/options.js";
import { pythonJsonParser } from "../api/json.js";
import type { Trajectory } from "../api/trajectory.js";
import type { Rollout } from "../api/rollout.js";
import { assistantIndices, mergeKwargs, parseCorpusLine, type Conversation, type LineError } from "./corpus.js";
import type { CorpusId } from "./id.js";

/** Options of a corpus-line replay (what `deltatok replay` computes per conversation). */
export interface ReplayItemOptions {
  /** Command-level chat_template_kwargs (the line's own go on top). @defaultValue null */
  chatTemplateKwargs?: Record<string, unknown> | null;
  /** Parse JSON-string tool-call arguments first. @defaultValue false */
  parseToolArguments?: boolean;
  /** Compute OSL too. @defaultValue true */
  osl?: boolean;
}

/** One JSONL record of `deltatok replay`. */
export interface ReplayRecord {
  /** The line's id as sent (a JSON number as its text: write records with recordJson, src/corpus/id.ts). */
  id: CorpusId | null;
  index: number | null;
  isl?: number;
  osl?: number;
  line?: number;
  error?: ErrorRecord;
}

/** Options of a corpus-line `deltatok tokenize` / `rollout` (what they compute per conversation). */
export interface TrainingItemOptions {
  /** Command-level chat_template_kwargs (the line's own go on top). @defaultValue null */
  chatTemplateKwargs?: Record<string, unknown> | null;
  /** Parse JSON-string tool-call arguments first. @defaultValue false */
  parseToolArguments?: boolean;
}

/**
 * What `deltatok tokenize` / `rollout` make of one corpus line: a trajectory or rollout, or the
 * line's error record. `conversation`: the line parsed as a conversation (counted in the summary's
 * `conversations` even when the Deltatok then failed on it). A worker sends a tight copy (own buffers, src/pool/work.ts).
 */
export interface TrainingOutcome {
  /** The line's id as sent (src/corpus/id.ts). */
  id: CorpusId | null;
  line: number;
  conversation: boolean;
  trajectory?: Trajectory;
  rollout?: Rollout;
  error?: ErrorRecord;
}

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
  return trainingConversation(dt, parsed, mode, o);
}

