/**
 * Streaming counters of the public API: options, the text counter, and the message counter for
 * an assistant message that arrives as OpenAI-style deltas.
 *
 * The message counter renders the message so far as countMessage does ([U, m] through the chat
 * template) and compares the render with the previous one: the first character where they
 * differ, and how long a suffix they share. Its text counter (tokenize/stream.ts) holds the
 * render only up to a *split* h, a safe cut of the render (or its end); the rest, the render's
 * suffix after h (the end-of-turn framing: "<|im_end|>\n"), is counted behind its anchor, the
 * code point before h (`TextStream.countBehind`), which the cut property makes exact: the
 * render's tokens are those of render[0, h) alone followed by those of anchor + suffix minus the
 * anchor's. A split is a cut of the tokenizer's rule or the start of a boundary token the raw
 * scan matches (src/tokenize/README.md, "Splits of a render"). Each append puts the split at the
 * first one at or after both the first difference and the start of the shared suffix, unless
 * more than SUFFIX_MAX characters follow it (then at the end, the text counter's memo answering
 * the repeated pieces of a long suffix): when nothing before the old split changed, the text
 * counter only *appends* the new text (so an open run over a CJK answer stays open and an
 * append costs its characters, not the uncut content); else it rewinds to the last safe cut
 * before the first difference, as a template that rewrites earlier text (strips, moves
 * reasoning) needs: the count stays exact. Per append: one render of the message, two
 * comparisons of the renders, the new characters, and the suffix (short) encoded.
 *
 * A delta may end inside a surrogate pair (a streamed emoji cut in two): the counter keeps every
 * string field as appended, and renders each without a trailing high surrogate, which waits for
 * the low half of the next delta. The count is that of the message without those held halves;
 * a half that never gets its pair is DT_LONE_SURROGATE at finish(), and a low half with no high
 * half before it is DT_LONE_SURROGATE at once (the delta is refused, nothing is lost).
 *
 * Layer: api.
 */
import { DeltatokError } from "../errors.js";
import { TextStream, type StreamRule, type TextCounterStats } from "../tokenize/stream.js";
import type { TokenEncoder } from "../tokenize/encoder.js";
import type { MessageOptions } from "./options.js";

/** Options of {@link Deltatok.textCounter}. */
export interface TextCounterOptions {
  /** Keep the token ids (`ids()`); costs 4 bytes per token. @defaultValue false */
  ids?: boolean;
  /**
   * Most characters the counter re-encodes after its last safe cut. An append that would leave
   * a longer uncut tail (one enormous word, a run of punctuation) fails DT_STREAM_LOOKBACK and
   * leaves the counter unchanged; at most maxPromptChars.
   * @defaultValue 65536
   */
  maxLookBack?: number;
}

/** Options of {@link Deltatok.messageCounter}: countMessage's, plus the counter's. */
export type MessageCounterOptions = MessageOptions & TextCounterOptions;

/** The text counter: `append(chunk)`, `finish()`, `count`, `length`, `text`, `reset()`, `ids()`, `stats()`. */
export type TextCounter = TextStream;

export const DEFAULT_MAX_LOOKBACK = 65_536;

/** Validated counter options. */
export interface CounterSettings {
  ids: boolean;
  maxLookBack: number;
  maxChars: number;
}

export function readCounterOptions(options: unknown, maxChars: number, method: string): CounterSettings {
  if (options === undefined || options === null) return { ids: false, maxLookBack: Math.min(DEFAULT_MAX_LOOKBACK, maxChars), maxChars };
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new DeltatokError("DT_INVALID_OPTION", `${method} options must be an object`, { path: "options" });
  }
  const o = options as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (k !== "ids" && k !== "maxLookBack") throw new DeltatokError("DT_INVALID_OPTION", `${method}: unknown option ${k}`, { path: `options.${k}` });
  }
  if (o.ids !== undefined && typeof o.ids !== "boolean") throw new DeltatokError("DT_INVALID_OPTION", "ids must be a boolean", { path: "options.ids" });
  const lb = o.maxLookBack ?? Math.min(DEFAULT_MAX_LOOKBACK, maxChars);
  if (typeof lb !== "number" || !Number.isInteger(lb) || lb < 1 || lb > maxChars) {
    throw new DeltatokError("DT_INVALID_OPTION", `maxLookBack must be an integer in 1..${maxChars}`, { path: "options.maxLookBack" });
  }
  return { ids: o.ids === true, maxLookBack: lb, maxChars };
}

export function openTextCounter(encoder: TokenEncoder, rule: StreamRule, s: CounterSettings): TextCounter {
  warnWhole(rule);
  return new TextStream(encoder, rule, { maxChars: s.maxChars, maxLookBack: s.maxLookBack, ids: s.ids });
}

const warned = new WeakSet<StreamRule>();
/** A tokenizer without a proven cut rule counts streams whole: said once per tokenizer. */
function warnWhole(rule: StreamRule): void {
  if (rule.mode !== "whole" || warned.has(rule)) return;
  warned.add(rule);
  process.emitWarning(`streaming counters of this tokenizer re-encode the whole text on every append (${rule.reason})`, { code: "DELTATOK_STREAM_WHOLE" });
}

/** Splits messageCounter's options into the counter's and countMessage's. */
export function splitMessageCounterOptions(options: unknown): { counter: TextCounterOptions | undefined; message: MessageOptions | undefined } {
  if (options === undefined || options === null) return { counter: undefined, message: undefined };
  if (typeof options !== "object" || Array.isArray(options)) throw new DeltatokError("DT_INVALID_OPTION", "messageCounter options must be an object", { path: "options" });
  const counter: Record<string, unknown> = {};
  const message: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) (k === "ids" || k === "maxLookBack" ? counter : message)[k] = v;
  return { counter: counter as TextCounterOptions, message: message as MessageOptions };
}

/** One streamed piece of a tool call (OpenAI `choices[].delta.tool_calls[]`). */
export interface ToolCallDelta {
  /** Which tool call this piece belongs to (0, 1, ...); a new index opens a new call. */
  index: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

/** One streamed delta of an assistant message (OpenAI `choices[].delta`; `role` is ignored). */
export interface MessageDelta {
  role?: string;
  content?: string | null;
  reasoning_content?: string | null;
  tool_calls?: ToolCallDelta[] | null;
}

interface ToolCallSoFar {
  id?: string;
  type: string;
  function: { name: string; arguments: string };
}

/** The assistant message a stream of deltas has built so far. */
export interface StreamedMessage {
  role: "assistant";
  content: string;
  reasoning_content?: string;
  tool_calls?: ToolCallSoFar[];
}

export interface MessageCounterStats extends TextCounterStats {
  /** Characters of every render the counter made (the O(message) part of each append). */
  renderChars: number;
  /** Characters of the renders before their first difference from the previous render (compared, not encoded). */
  unchangedChars: number;
  /** Characters encoded to count the renders' suffixes after the split, anchors included (the text counter's are in charsEncoded). */
  suffixChars: number;
  /** Appends the text counter took as an append (nothing before its end changed), not a rewind. */
  plainAppends: number;
}

const MAX_TOOL_CALLS = 1024;
/**
 * Most characters of a render's suffix counted apart (encoded whole whenever its anchor changes);
 * a longer one stays in the text counter, whose piece memo answers its repeated pieces.
 */
const SUFFIX_MAX = 512;

const str = (v: unknown, path: string): string => {
  if (typeof v !== "string") throw new DeltatokError("DT_INVALID_REQUEST", `${path} must be a string`, { path });
  return v;
};

/** Counts an assistant message as it streams (see the file header). */
export class MessageCounter {
  readonly #text: TextStream;
  readonly #render: (m: StreamedMessage) => { text: string; baseline: number };
  #content = "";
  #reasoning: string | null = null;
  readonly #calls: ToolCallSoFar[] = [];
  #baseline = 0;
  #count = 0;
  #renderChars = 0;
  #unchanged = 0;
  #started = false;
  #prevRender = "";
  /** Tokens of the render's suffix after the text counter's text (behind its anchor). */
  #suffixCount = 0;
  /** The last suffix counted: its anchor (none at a boundary token) + "\u0000" + text, and its count. */
  #suffixKey = "";
  #suffixKeyCount = 0;
  #suffixChars = 0;
  #plainAppends = 0;
  /** A start of the raw added-token scan of the previous render, near its split (TextStream.splitAt). */
  #scanSafe = 0;

  constructor(text: TextStream, render: (m: StreamedMessage) => { text: string; baseline: number }) {
    this.#text = text;
    this.#render = render;
  }

  /** countMessage of the message so far. */
  get count(): number {
    return this.#count;
  }

  /** The message the deltas have built so far (a copy; a held-back high surrogate included). */
  message(): StreamedMessage {
    const m: StreamedMessage = { role: "assistant", content: this.#content };
    if (this.#reasoning !== null) m.reasoning_content = this.#reasoning;
    if (this.#calls.length > 0) m.tool_calls = this.#calls.map((c) => ({ ...c, function: { ...c.function } }));
    return m;
  }

  /** Applies one delta; returns the exact countMessage of the message so far. Atomic: a bad delta changes nothing. */
  append(delta: unknown): number {
    if (this.#text.finished) throw new DeltatokError("DT_STREAM_FINISHED", "the counter is finished");
    if (typeof delta !== "object" || delta === null || Array.isArray(delta)) {
      throw new DeltatokError("DT_INVALID_REQUEST", "a message delta must be an object", { path: "delta" });
    }
    const d = delta as Record<string, unknown>;
    let content = this.#content;
    let reasoning = this.#reasoning;
    const calls = this.#calls.map((c) => ({ ...c, function: { ...c.function } }));
    for (const [k, v] of Object.entries(d)) {
      if (v === undefined || v === null) continue;
      if (k === "content") content += str(v, "delta.content");
      else if (k === "reasoning_content") reasoning = (reasoning ?? "") + str(v, "delta.reasoning_content");
      else if (k === "tool_calls") applyToolCalls(calls, v);
      else if (k !== "role") throw new DeltatokError("DT_INVALID_REQUEST", `unknown delta field ${k}`, { path: `delta.${k}` });
    }
    const { text, baseline } = this.#render(heldBack(content, reasoning, calls));
    // the previous render is the counter's text then its suffix: compare with that string, not a join of parts
    const prev = this.#prevRender;
    const same = this.#started ? commonPrefix(prev, text) : 0;
    let n: number;
    if (this.#started && same === prev.length && same === text.length) n = this.#text.count + this.#suffixCount;
    else {
      // the split: the first at or after the first difference and the start of the shared suffix
      const shared = this.#started ? commonSuffix(prev, text, Math.min(prev.length, text.length) - same) : 0;
      const split = this.#text.splitAt(text, Math.max(same, text.length - shared), { safe: this.#scanSafe, same });
      const h = text.length - split.at > SUFFIX_MAX ? text.length : split.at;
      const suffix = this.#countSuffix(text, h, h === split.at && split.token);
      const kept = this.#text.length;
      // nothing before the counter's end changed: a plain append (an open run stays open)
      const plain = same >= kept && h >= kept;
      const c = !plain ? this.#text.replaceFrom(same, text.slice(same, h)) : h > kept ? this.#text.append(text.slice(kept, h)) : this.#text.count;
      if (plain) this.#plainAppends++;
      this.#suffixCount = suffix;
      this.#scanSafe = split.safe;
      n = c + suffix;
    }
    this.#started = true;
    this.#prevRender = text;
    this.#content = content;
    this.#reasoning = reasoning;
    this.#calls.length = 0;
    this.#calls.push(...calls);
    this.#baseline = baseline;
    this.#renderChars += text.length;
    this.#unchanged += same;
    this.#count = Math.max(0, n - this.#baseline);
    return this.#count;
  }

  /** The final count; the counter takes no more deltas. */
  finish(): number {
    if (!this.#started) this.append({});
    const held = heldField(this.#content, this.#reasoning, this.#calls);
    if (held !== null) throw new DeltatokError("DT_LONE_SURROGATE", `${held} ends with a lone high surrogate (its low half never arrived)`, { path: held });
    this.#text.finish();
    return this.#count;
  }

  stats(): MessageCounterStats {
    return { ...this.#text.stats(), renderChars: this.#renderChars, unchangedChars: this.#unchanged, suffixChars: this.#suffixChars, plainAppends: this.#plainAppends };
  }

  /**
   * Tokens of render[h, end) behind its anchor (the code point before h); the last answer is
   * kept. At a boundary token's start (`token`) the answer does not depend on the anchor, which
   * is then left out of the key.
   */
  #countSuffix(render: string, h: number, token: boolean): number {
    if (h >= render.length) return 0;
    const low = render.charCodeAt(h - 1);
    const a = h >= 2 && low >= 0xdc00 && low <= 0xdfff ? h - 2 : h - 1;
    const anchor = render.slice(a, h);
    const rest = render.slice(h);
    const key = (token ? "" : anchor) + "\u0000" + rest;
    if (key === this.#suffixKey) return this.#suffixKeyCount;
    const n = this.#text.countBehind(anchor, rest);
    this.#suffixChars += render.length - a;
    this.#suffixKey = key;
    this.#suffixKeyCount = n;
    return n;
  }
}

const isHigh = (s: string): boolean => {
  const u = s.charCodeAt(s.length - 1);
  return u >= 0xd800 && u <= 0xdbff;
};
/** `s` without a trailing high surrogate (held back until its low half arrives). */
const hold = (s: string): string => (isHigh(s) ? s.slice(0, -1) : s);

/** The message to render: every string field without a trailing high surrogate. */
function heldBack(content: string, reasoning: string | null, calls: readonly ToolCallSoFar[]): StreamedMessage {
  const m: StreamedMessage = { role: "assistant", content: hold(content) };
  if (reasoning !== null) m.reasoning_content = hold(reasoning);
  if (calls.length > 0) {
    m.tool_calls = calls.map((c) => {
      const h: ToolCallSoFar = { type: hold(c.type), function: { name: hold(c.function.name), arguments: hold(c.function.arguments) } };
      if (c.id !== undefined) h.id = hold(c.id);
      return h;
    });
  }
  return m;
}

/** The path of a field that still holds back a high surrogate, or null. */
function heldField(content: string, reasoning: string | null, calls: readonly ToolCallSoFar[]): string | null {
  if (isHigh(content)) return "delta.content";
  if (reasoning !== null && isHigh(reasoning)) return "delta.reasoning_content";
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i] as ToolCallSoFar;
    if (c.id !== undefined && isHigh(c.id)) return `delta.tool_calls[${i}].id`;
    if (isHigh(c.type)) return `delta.tool_calls[${i}].type`;
    if (isHigh(c.function.name)) return `delta.tool_calls[${i}].function.name`;
    if (isHigh(c.function.arguments)) return `delta.tool_calls[${i}].function.arguments`;
  }
  return null;
}

function applyToolCalls(calls: ToolCallSoFar[], v: unknown): void {
  if (!Array.isArray(v)) throw new DeltatokError("DT_INVALID_TOOL_CALLS", "delta.tool_calls must be a list", { path: "delta.tool_calls" });
  v.forEach((raw: unknown, i: number) => {
    const path = `delta.tool_calls[${i}]`;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new DeltatokError("DT_INVALID_TOOL_CALLS", "a tool-call delta must be an object", { path });
    const t = raw as Record<string, unknown>;
    const index = t.index ?? calls.length - (calls.length > 0 ? 1 : 0);
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index > calls.length || index >= MAX_TOOL_CALLS) {
      throw new DeltatokError("DT_INVALID_TOOL_CALLS", `tool-call index must be an integer in 0..${calls.length}`, { path: `${path}.index` });
    }
    let call = calls[index];
    if (call === undefined) {
      call = { type: "function", function: { name: "", arguments: "" } };
      calls.push(call);
    }
    if (t.id !== undefined && t.id !== null) call.id = str(t.id, `${path}.id`);
    if (t.type !== undefined && t.type !== null) call.type = str(t.type, `${path}.type`);
    const f = t.function;
    if (f !== undefined && f !== null) {
      if (typeof f !== "object" || Array.isArray(f)) throw new DeltatokError("DT_INVALID_TOOL_CALLS", "function must be an object", { path: `${path}.function` });
      const fn = f as Record<string, unknown>;
      if (fn.name !== undefined && fn.name !== null) call.function.name += str(fn.name, `${path}.function.name`);
      if (fn.arguments !== undefined && fn.arguments !== null) call.function.arguments += str(fn.arguments, `${path}.function.arguments`);
    }
  });
}

/** Length of the common suffix of a and b, at most `max`. */
function commonSuffix(a: string, b: string, max: number): number {
  let i = 0;
  for (const block of [1024, 64]) {
    while (i + block <= max && a.slice(a.length - i - block, a.length - i) === b.slice(b.length - i - block, b.length - i)) i += block;
  }
  while (i < max && a.charCodeAt(a.length - 1 - i) === b.charCodeAt(b.length - 1 - i)) i++;
  return i;
}

/** Length of the common prefix of a and b. */
function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  // compare in blocks first, large then small: most of two successive renders is the same, and
  // comparing two slices is one flat comparison (no copy) where charCodeAt is a call per unit
  for (const block of [16384, 1024, 64]) {
    while (i + block <= n && a.slice(i, i + block) === b.slice(i, i + block)) i += block;
  }
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
