/**
 * Context budgets: whether a prompt fits a token limit (`fits`), and which oldest turns to drop
 * so that it does (`trimToFit`). Both answer exactly what `countPrompt(...) <= limit` answers,
 * through the same tokenize step; the splicer stops encoding once a prompt passes the limit
 * (TokenSplicer.tokenizeWithin). DESIGN.md, "Context budgets", has the algorithm.
 */
import { DeltatokError } from "../errors.js";
import { SeamError, TokenEncoder, newBoundaries } from "../tokenize/encoder.js";
import type { PromptOptions } from "./options.js";

/** Which messages trimToFit may drop, oldest first. */
export type TrimPolicy =
  /** One message at a time, or an assistant message with tool calls together with its tool results. */
  | "oldest"
  /** Whole turns: a user message and everything up to the next user message. */
  | "turns";

/** Options of {@link Deltatok.trimToFit}: a prompt's options, and what may be dropped. */
export interface TrimOptions extends PromptOptions {
  /** What is dropped, oldest first (default "oldest"). */
  policy?: TrimPolicy;
  /**
   * Also keep everything up to and including the first user message (with "turns": up to the
   * next user message), e.g. an agent's task statement (default false).
   */
  keep_first_user?: boolean;
}

/** Result of {@link Deltatok.trimToFit}. */
export interface TrimResult {
  /** The kept messages: the caller's own objects, in order. */
  messages: unknown[];
  /** Exact countPrompt of `messages` with the same options (at most the limit). */
  count: number;
  /** Indices into the input of the messages dropped, ascending. */
  dropped: number[];
}

/** What the Deltatok gives this module: its reading of a request and its counting. */
export interface BudgetHost {
  /** Reads the messages (snapshots, content versions) and the options' values once. */
  read(messages: readonly unknown[], options: PromptOptions): { messages: unknown[]; versions: number[]; options: PromptOptions };
  /**
   * countPrompt of messages and options read already, or null when it is over `limit`; `ref`, a
   * reference an earlier answer gave, whose text may end as this prompt's does (its ids are then
   * reused). With a count, the reference of this prompt's cached render.
   */
  within(messages: readonly unknown[], versions: readonly number[], options: PromptOptions, limit: number, ref?: unknown): { count: number; ref: unknown } | null;
  /** Where trims are remembered across calls (per Deltatok). */
  memo: TrimMemo;
}

/**
 * The first message kept after the dropped ones, of the last few trims (snapshots: content
 * recognition makes the next turn's equal message the same object). A trim point recurs across
 * an agent loop's turns: the next search starts there.
 */
export class TrimMemo {
  readonly #firsts: object[] = [];

  find(snapshots: readonly unknown[], starts: readonly number[]): number {
    for (const f of this.#firsts) {
      for (let d = starts.length - 1; d >= 0; d--) if (snapshots[starts[d] as number] === f) return d;
    }
    return -1;
  }

  remember(first: unknown): void {
    if (typeof first !== "object" || first === null) return;
    const at = this.#firsts.indexOf(first);
    if (at >= 0) this.#firsts.splice(at, 1);
    else if (this.#firsts.length >= 8) this.#firsts.pop();
    this.#firsts.unshift(first);
  }
}

/** A token limit: a non-negative safe integer. */
export function checkLimit(limit: unknown): number {
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 0) {
    throw new DeltatokError("DT_INVALID_REQUEST", `limit must be a non-negative integer (tokens), got ${typeof limit === "number" ? limit : typeof limit}`, { path: "limit" });
  }
  return limit;
}

/** The count of `text` (add_special_tokens=False) when at most `limit`, else null, encoding only up to the piece that passes it. */
export function countTextWithin(encoder: TokenEncoder, text: string, limit: number): number | null {
  let n: number;
  try {
    n = encoder.encodeFrom(text, 0, null, 0, null, newBoundaries(16), 0, limit);
  } catch (e) {
    if (!(e instanceof SeamError)) throw e;
    n = encoder.encodeWhole(text).length; // a tokenizer that breaks the seam invariant: whole
  }
  return n <= limit ? n : null;
}

/**
 * Where a conversation may be cut: messages [0, head) and [tail, n) are kept; the units that
 * start at `starts` (ascending, within [head, tail)) are dropped oldest first, each whole.
 */
export interface TrimPlan {
  head: number;
  tail: number;
  starts: number[];
}

function roleOf(m: unknown): unknown {
  return (m as { role?: unknown }).role;
}

function hasToolCalls(m: unknown): boolean {
  const tc = (m as { tool_calls?: unknown }).tool_calls;
  return Array.isArray(tc) && tc.length > 0;
}

/**
 * The plan of a conversation (snapshots) for a policy. Kept always: the leading system /
 * developer messages, and the last user message with everything after it (with no user message
 * after the head: the last unit). A tool result is never separated from the assistant message
 * whose tool calls it answers (the results that follow it), and no unit starts with a tool result
 * while its call stays.
 */
export function trimPlan(messages: readonly unknown[], policy: TrimPolicy, keepFirstUser: boolean): TrimPlan {
  const n = messages.length;
  let head = 0;
  while (head < n && (roleOf(messages[head]) === "system" || roleOf(messages[head]) === "developer")) head++;
  let lastUser = -1;
  for (let i = n - 1; i >= head; i--) {
    if (roleOf(messages[i]) === "user") {
      lastUser = i;
      break;
    }
  }
  if (keepFirstUser) {
    let f = head;
    while (f < n && roleOf(messages[f]) !== "user") f++;
    if (f < n && f < lastUser) {
      head = f + 1;
      if (policy === "turns") while (head < lastUser && roleOf(messages[head]) !== "user") head++;
    }
  }
  // units of [head, end)
  const units = (end: number): number[] => {
    const starts: number[] = [];
    let i = head;
    while (i < end) {
      starts.push(i);
      if (policy === "turns") {
        i++;
        while (i < end && roleOf(messages[i]) !== "user") i++;
      } else if (roleOf(messages[i]) === "assistant" && hasToolCalls(messages[i])) {
        i++;
        while (i < end && roleOf(messages[i]) === "tool") i++;
      } else if (roleOf(messages[i]) === "tool") {
        // results without their call (as given): dropped together
        while (i < end && roleOf(messages[i]) === "tool") i++;
      } else i++;
    }
    return starts;
  };
  if (lastUser >= head) return { head, tail: lastUser, starts: units(lastUser) };
  // no user message to keep: the last unit is kept
  const all = units(n);
  const tail = all.length === 0 ? n : (all.pop() as number);
  return { head, tail, starts: all };
}

/**
 * trimToFit: the fewest units (of the plan) dropped, oldest first, for the prompt to fit `limit`:
 * the kept messages fit, and keeping one more unit (the newest one dropped) would not. Starts at
 * the unit where the last trim of this Deltatok cut (the usual case in an agent loop: the kept
 * list extends the one counted last turn, so its count costs what was appended), gallops from
 * there, then bisects; every count is exact, and a candidate over the limit stops its encoding
 * once past it.
 */
export function trimToFit(host: BudgetHost, messages: readonly unknown[], limit: number, options: PromptOptions, policy: TrimPolicy, keepFirstUser: boolean): TrimResult {
  const read = host.read(messages, options);
  const snaps = read.messages;
  const plan = trimPlan(snaps, policy, keepFirstUser);
  const { head, tail, starts } = plan;
  const units = starts.length;
  const startOf = (d: number): number => (d < units ? (starts[d] as number) : tail);
  const counts = new Map<number, number | null>();
  // the cached render of the last candidate that fitted: every candidate ends with the same messages
  let ref: unknown = undefined;
  // `whole`: counted to the end even past the limit, so that it is cached and serves as `ref`
  const count = (d: number, whole = false): number | null => {
    let c = counts.get(d);
    if (c === undefined) {
      const from = startOf(d);
      const kept = from === head ? snaps : snaps.slice(0, head).concat(snaps.slice(from));
      const versions = from === head ? read.versions : read.versions.slice(0, head).concat(read.versions.slice(from));
      const r = host.within(kept, versions, read.options, whole ? Number.MAX_SAFE_INTEGER : limit, ref);
      c = r === null || r.count > limit ? null : r.count;
      if (r !== null) ref = r.ref;
      counts.set(d, c);
    }
    return c;
  };
  // lo: a drop count known not to fit (-1: none known), hi: one known to fit
  let lo = -1;
  let hi = -1;
  const guess = host.memo.find(snaps, starts);
  if (guess > 0) {
    // the last trim's kept messages and what was appended since: costs the appended part
    if (count(guess, true) !== null) {
      hi = guess;
      // gallop towards keeping more
      for (let step = 1; lo < 0; step *= 2) {
        const d = Math.max(0, hi - step);
        if (count(d) === null) lo = d;
        else {
          hi = d;
          if (d === 0) break;
        }
      }
    } else {
      lo = guess;
      for (let step = 1; hi < 0; step *= 2) {
        const d = Math.min(units, lo + step);
        if (count(d) !== null) hi = d;
        else {
          lo = d;
          if (d === units) break;
        }
      }
    }
  } else if (count(0) !== null) hi = 0;
  else {
    lo = 0;
    if (count(units) !== null) hi = units;
  }
  if (hi < 0) {
    // even the pinned messages do not fit: say by how much
    const pinned = host.within(
      snaps.slice(0, head).concat(snaps.slice(tail)),
      read.versions.slice(0, head).concat(read.versions.slice(tail)),
      read.options,
      Number.MAX_SAFE_INTEGER,
    )?.count as number;
    throw new ContextTooSmallError(pinned, limit, head + (snaps.length - tail));
  }
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (count(mid) !== null) hi = mid;
    else lo = mid;
  }
  const from = startOf(hi);
  if (hi > 0) host.memo.remember(snaps[from]);
  const dropped: number[] = [];
  for (let i = head; i < from; i++) dropped.push(i);
  const kept = from === head ? messages.slice() : messages.slice(0, head).concat(messages.slice(from));
  return { messages: kept, count: counts.get(hi) as number, dropped };
}

/** DT_CONTEXT_TOO_SMALL, with the count of the messages trimToFit must keep. */
export class ContextTooSmallError extends DeltatokError {
  /** countPrompt of the pinned messages alone. */
  readonly pinned: number;
  readonly limit: number;
  constructor(pinned: number, limit: number, messages: number) {
    super("DT_CONTEXT_TOO_SMALL", `the ${messages} messages trimToFit must keep (system prompt, last user turn and after) count ${pinned} tokens, over the limit of ${limit}`);
    this.pinned = pinned;
    this.limit = limit;
  }
}
